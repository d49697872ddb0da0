"""The push transaction of the sonic platform (see the package docstring)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError, upload
from fabriccfg.session import Session

# SONiC: ``config checkpoint``, ``config apply-patch`` (RFC 6902), rollback on failure, save.


class SonicTransaction(CliTransaction):
    # SONiC Generic Config Update and Rollback design (sonic-net/SONiC, doc/config-generic-update-rollback/
    # SONiC_Generic_Config_Update_and_Rollback_Design.md): ``config checkpoint NAME``,
    # ``config apply-patch FILE`` (the whole RFC 6902 patch, validated against YANG before anything is
    # written), ``config rollback NAME``. The patch itself is written change by change, so a dead
    # apply can be partial: the checkpoint (journaled) is how ``push --recover`` goes back.
    error_pattern: ClassVar[str] = r"^Error:|Failed to apply patch|command not found"
    running_command: ClassVar[str] = "show runningconfiguration all"
    kind: ClassVar[str] = "config checkpoint + apply-patch"
    journal_fields: ClassVar[tuple[str, ...]] = ("have_checkpoint", "uploaded")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.have_checkpoint = False
        self.patch_file = f"/tmp/{ctx.tag}.patch.json"
        self.uploaded = False

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"sudo config checkpoint {self.checkpoint}", ok=r"Checkpoint created successfully")
        self.have_checkpoint = True

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        if not diff.patch:
            raise TxError("the diff has no JSON patch to apply")
        self.uploaded = True
        upload(self, conn, self.patch_file, json.dumps(diff.patch, indent=1) + "\n")
        self.ctx.step("committing")
        self.cmd(conn, f"sudo config apply-patch {self.patch_file}", ok=r"Patch applied successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def confirm(self, conn: Session) -> None:
        self.cmd(conn, "sudo config save -y")
        self._drop(conn)

    def rollback(self, conn: Session) -> None:
        self.cmd(conn, f"sudo config rollback {self.checkpoint}", ok=r"rolled back successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def _drop(self, conn: Session) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"sudo config delete-checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Session) -> None:
        self._drop(conn)
        if self.uploaded:
            self.cmd(conn, f"rm -f {self.patch_file}", check=False)
            self.uploaded = False


TRANSACTION = SonicTransaction
