"""The push transaction of the eos platform (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError
from fabriccfg.session import Session

# Arista EOS: a named ``configure session``, ``commit timer`` (commit-confirm), confirm, save.
# The session is the restore point: nothing reaches the running config until ``commit timer``; after it,
# EOS itself reverts unless the session is confirmed. Any error aborts the session and the cleanup step
# checks ``show configuration sessions`` so no session is ever left behind (a stale, half-built session
# is what bites NAPALM users: napalm#1921).


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
    # Arista EOS User Manual, "Configure Session" (https://www.arista.com/en/um-eos/eos-configure-session):
    # session lines do not touch running-config until commit; ``commit timer HH:MM:SS`` reverts unless
    # ``configure session NAME commit`` confirms; ``configure session NAME abort`` discards / reverts. An
    # uncommitted session survives the SSH session (it is lost on reboot and times out after 24 h), so
    # a dead client leaves a pending session, which rollback and ``push --recover`` abort.
    commit_confirm: ClassVar[bool] = True
    error_pattern: ClassVar[str] = r"^% "
    kind: ClassVar[str] = "configure session + commit timer"
    journal_fields: ClassVar[tuple[str, ...]] = ("opened", "committed")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.session = ctx.tag
        self.opened = False
        self.committed = False

    def _enable(self, conn: Session) -> None:
        if not conn.check_enable_mode():
            conn.enable()

    def fetch(self, conn: Session, names: Sequence[str]) -> dict[str, str]:
        self._enable(conn)
        return super().fetch(conn, names)

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
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

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self._enable(conn)
        self.opened = True
        self.cmd(conn, f"configure session {self.session}", expect=r"\)#")
        self.config_lines(conn, diff.commands)
        self.ctx.step("committing")
        self.cmd(conn, f"commit timer {hhmmss(self.ctx.confirm_timeout)}", expect=r"#")
        self.committed = True
        if conn.check_config_mode():
            self.cmd(conn, "end", expect=r"#")

    def confirm(self, conn: Session) -> None:
        self._enable(conn)
        self.cmd(conn, f"configure session {self.session} commit", expect=r"#")
        self.opened = False
        self.cmd(conn, "copy running-config startup-config", ok=r"Copy completed successfully")

    def rollback(self, conn: Session) -> None:
        self._enable(conn)
        if self.session in self.cmd(conn, "show configuration sessions", check=False):
            self.cmd(conn, f"configure session {self.session} abort", expect=r"#")
        self.opened = False

    def cleanup(self, conn: Session) -> None:
        self._enable(conn)
        if conn.check_config_mode():
            self.cmd(conn, "end", expect=r"#", check=False)
        if self.session in self.cmd(conn, "show configuration sessions", check=False):
            self.cmd(conn, f"no configure session {self.session}", expect=r"#", check=False)
            self.ctx.note(f"removed leftover configure session {self.session}")


TRANSACTION = EosTransaction
