"""Community SONiC: ``config checkpoint``, ``config apply-patch`` (RFC 6902), rollback on failure, save."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError, upload


class SonicTransaction(CliTransaction):
    error_pattern: ClassVar[str] = r"^Error:|Failed to apply patch|command not found"

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.have_checkpoint = False
        self.patch_file = f"/tmp/{ctx.tag}.patch.json"
        self.uploaded = False

    def fetch(self, conn: Any, names: Sequence[str]) -> dict[str, str]:
        return self.single(names, self.cmd(conn, "show runningconfiguration all"))

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"sudo config checkpoint {self.checkpoint}", ok=r"Checkpoint created successfully")
        self.have_checkpoint = True

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        if not diff.patch:
            raise TxError("the diff has no JSON patch to apply")
        self.uploaded = True
        upload(self, conn, self.patch_file, json.dumps(diff.patch, indent=1) + "\n")
        self.ctx.step("committing")
        self.cmd(conn, f"sudo config apply-patch {self.patch_file}", ok=r"Patch applied successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def confirm(self, conn: Any) -> None:
        self.cmd(conn, "sudo config save -y")
        self._drop(conn)

    def rollback(self, conn: Any) -> None:
        self.cmd(conn, f"sudo config rollback {self.checkpoint}", ok=r"rolled back successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def _drop(self, conn: Any) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"sudo config delete-checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Any) -> None:
        self._drop(conn)
        if self.uploaded:
            self.cmd(conn, f"rm -f {self.patch_file}", check=False)
            self.uploaded = False
