"""The push transaction of the mlnxos_ib platform (see the package docstring)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike
from fabriccfg.session import Session

# MLNX-OS: a saved backup configuration to switch back to, then ``configuration write``.


class MlnxosTransaction(CliTransaction):
    # MLNX-OS has no configuration session or commit: lines take effect one by one. The restore point is
    # a saved configuration file (``configuration write to NAME no-switch``, ``configuration switch-to``:
    # MLNX-OS User Manual, "Configuration Management"); the journal names it, so ``push --recover``
    # can switch back to it after a dead run left a partial config.
    error_pattern: ClassVar[str] = r"^% "
    kind: ClassVar[str] = "lines in config term (no atomic commit) + saved backup file"
    journal_fields: ClassVar[tuple[str, ...]] = ("active", "have_backup")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.backup_file = ctx.tag
        self.active: str | None = None
        self.have_backup = False

    def _enable(self, conn: Session) -> None:
        # enable first: netmiko's MLNX-OS check_config_mode waits for '#', which the '>' prompt never shows
        if not conn.check_enable_mode():
            conn.enable()
        if conn.check_config_mode():
            conn.exit_config_mode()

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        self._enable(conn)
        files = self.cmd(conn, "show configuration files")
        m = re.search(r"^\s*(\S+)\s*\(active\)", files, re.M)
        self.active = m.group(1) if m else None
        self.cmd(conn, f"configuration write to {self.backup_file} no-switch")
        self.have_backup = True

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self._enable(conn)
        conn.config_mode()
        self.config_lines(conn, diff.commands)
        conn.exit_config_mode()

    def confirm(self, conn: Session) -> None:
        self._enable(conn)
        self.cmd(conn, "configuration write")
        self._drop(conn)

    def rollback(self, conn: Session) -> None:
        self._enable(conn)
        self.cmd(conn, f"configuration switch-to {self.backup_file}")
        if self.active and self.active != self.backup_file:
            # make the original file active again; it now holds the restored (pre-push) config
            self.cmd(conn, f"configuration write to {self.active}")
        else:
            self.ctx.note(f"active configuration file unknown; {self.backup_file} stays active")
            self.have_backup = False

    def _drop(self, conn: Session) -> None:
        if self.have_backup:
            self.cmd(conn, f"configuration delete {self.backup_file}", check=False)
            self.have_backup = False

    def cleanup(self, conn: Session) -> None:
        self._enable(conn)
        self._drop(conn)


TRANSACTION = MlnxosTransaction
