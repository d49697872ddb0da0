"""Arista EOS: a named ``configure session``, ``commit timer`` (commit-confirm), confirm, save.

The session is the restore point: nothing reaches the running config until ``commit timer``; after it,
EOS itself reverts unless the session is confirmed. Any error aborts the session and the cleanup step
checks ``show configuration sessions`` so no session is ever left behind (a stale, half-built session
is what bites NAPALM users: napalm#1921).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError


def hhmmss(seconds: float) -> str:
    s = max(1, int(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def sessions(table: str) -> list[tuple[str, str]]:
    """(name, state) rows of ``show configuration sessions``."""
    out = []
    for line in table.splitlines():
        parts = line.replace("*", " ").split()
        if len(parts) >= 2 and parts[1] in ("pending", "pendingCommitTimer", "completed"):
            out.append((parts[0], parts[1]))
    return out


class EosTransaction(CliTransaction):
    commit_confirm: ClassVar[bool] = True
    error_pattern: ClassVar[str] = r"^% "

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.session = ctx.tag
        self.opened = False
        self.committed = False

    def _enable(self, conn: Any) -> None:
        if not conn.check_enable_mode():
            conn.enable()

    def fetch(self, conn: Any, names: Sequence[str]) -> dict[str, str]:
        self._enable(conn)
        return self.single(names, self.cmd(conn, "show running-config"))

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        """Check the session table: stale fabriccfg sessions are removed (EOS allows only 5 pending),
        a fabriccfg change waiting for its confirm means another push is in flight: refuse."""
        self._enable(conn)
        for name, state in sessions(self.cmd(conn, "show configuration sessions", check=False)):
            if name == self.session:
                raise TxError(f"a configure session named {self.session} already exists")
            if not name.startswith("fc-"):
                continue
            if state == "pendingCommitTimer":
                raise TxError(f"another fabriccfg change ({name}) is waiting for its confirm on this switch")
            if state == "pending":
                self.cmd(conn, f"no configure session {name}", expect=r"#", check=False)
                self.ctx.note(f"removed stale configure session {name} left by an earlier run")

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self._enable(conn)
        self.opened = True
        self.cmd(conn, f"configure session {self.session}", expect=r"\)#")
        self.config_lines(conn, diff.commands)
        self.ctx.step("committing")
        self.cmd(conn, f"commit timer {hhmmss(self.ctx.confirm_timeout)}", expect=r"#")
        self.committed = True
        if conn.check_config_mode():
            self.cmd(conn, "end", expect=r"#")

    def confirm(self, conn: Any) -> None:
        self._enable(conn)
        self.cmd(conn, f"configure session {self.session} commit", expect=r"#")
        self.opened = False
        self.cmd(conn, "copy running-config startup-config", ok=r"Copy completed successfully")

    def rollback(self, conn: Any) -> None:
        self._enable(conn)
        if self.session in self.cmd(conn, "show configuration sessions", check=False):
            self.cmd(conn, f"configure session {self.session} abort", expect=r"#")
        self.opened = False

    def cleanup(self, conn: Any) -> None:
        self._enable(conn)
        if conn.check_config_mode():
            self.cmd(conn, "end", expect=r"#", check=False)
        if self.session in self.cmd(conn, "show configuration sessions", check=False):
            self.cmd(conn, f"no configure session {self.session}", expect=r"#", check=False)
            self.ctx.note(f"removed leftover configure session {self.session}")
