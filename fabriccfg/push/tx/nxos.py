"""Cisco NX-OS: ``checkpoint``, config, ``rollback running-config checkpoint`` on failure, save."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike


class NxosTransaction(CliTransaction):
    error_pattern: ClassVar[str] = r"^% |^ERROR:"

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.have_checkpoint = False

    def fetch(self, conn: Any, names: Sequence[str]) -> dict[str, str]:
        return self.single(names, self.cmd(conn, "show running-config"))

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"checkpoint {self.checkpoint}", ok=r"Done")
        self.have_checkpoint = True

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        conn.config_mode()
        self.config_lines(conn, diff.commands)
        conn.exit_config_mode()

    def confirm(self, conn: Any) -> None:
        self.cmd(conn, "copy running-config startup-config", ok=r"Copy complete", timeout=120)
        self._drop(conn)

    def rollback(self, conn: Any) -> None:
        self.cmd(conn, f"rollback running-config checkpoint {self.checkpoint}",
                 ok=r"Rollback completed successfully", timeout=max(self.ctx.read_timeout, 120))

    def _drop(self, conn: Any) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"no checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Any) -> None:
        if conn.check_config_mode():
            conn.exit_config_mode()
        self._drop(conn)
