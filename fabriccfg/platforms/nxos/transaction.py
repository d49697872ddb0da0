"""The push transaction of the nxos platform (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike
from fabriccfg.session import Session

# Cisco NX-OS: a checkpoint (the restore point once the change is in), then the lines in a named
# configuration session, ``verify``, ``commit``: the session's lines reach the running config all at
# once or not at all, so a client that dies mid-change leaves at most a pending session, never a partial
# config. Commands, per the Cisco Nexus 9000 NX-OS System Management Configuration Guide, Release 10.5(x),
# "Configuring Session Manager" (https://cisco.com/c/en/us/td/docs/switches/datacenter/nexus9000/sw/105x/
# config-guides/cisco-nexus-9000-series-nx-os-system-management-configuration-guide-release-105x/
# m-configuring-session-manager-10x.html): ``configure session NAME`` (enter or resume a session),
# ``verify`` (the configuration as a whole), ``commit`` ("verifies the complete configuration and
# applies the changes ... If a failure occurs, Cisco NX-OS reverts to the original configuration"),
# ``abort`` (discard), ``show configuration session summary``. Sessions survive the SSH session (not a
# reload), so a dead client's session is aborted by the rollback / ``push --recover``. Same guide:
# ``checkpoint NAME`` / ``rollback running-config checkpoint NAME`` ("Configuring Rollback").
# Caveat (same guide, Guidelines): Session Manager officially supports ACL and QoS features; our
# render is QoS plus interface lines, which a real switch may refuse in a session (the push then
# fails and rolls back cleanly; it does not fall back to line-by-line config).


def session_names(summary: str) -> list[str]:
    """Session names in ``show configuration session summary`` (a ``Name`` column of the table)."""
    out = []
    for line in summary.splitlines():
        parts = line.split()
        if parts and parts[0] not in ("Name", "Session", "Number") and not set(parts[0]) <= {"-"} \
                and ":" not in parts[0]:
            out.append(parts[0])
    return out


class NxosTransaction(CliTransaction):
    error_pattern: ClassVar[str] = r"^% |^ERROR:"
    kind: ClassVar[str] = "configuration session (verify, commit) + checkpoint"
    journal_fields: ClassVar[tuple[str, ...]] = ("have_checkpoint", "session_open", "committed")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.session = ctx.tag
        self.have_checkpoint = False
        self.session_open = False
        self.committed = False

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"checkpoint {self.checkpoint}", ok=r"Done")
        self.have_checkpoint = True

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self.session_open = True
        self.cmd(conn, f"configure session {self.session}", expect=r"\)#")
        self.config_lines(conn, diff.commands)
        self.ctx.step("committing")
        long = max(self.ctx.read_timeout, 120)
        self.cmd(conn, "verify", expect=r"#", ok=r"Verification Successful", timeout=long)
        self.committed = True  # from the moment commit is sent, the running config may hold the change
        self.cmd(conn, "commit", expect=r"#", ok=r"Commit Successful", timeout=long)
        self.session_open = False

    def confirm(self, conn: Session) -> None:
        self.cmd(conn, "copy running-config startup-config", ok=r"Copy complete", timeout=120)
        self._drop(conn)

    def _sessions(self, conn: Session) -> list[str]:
        return session_names(self.cmd(conn, "show configuration session summary", check=False))

    def _abort(self, conn: Session) -> bool:
        """Abort this run's session if the switch still has it (it outlives a dead client)."""
        if conn.check_config_mode():
            self.cmd(conn, "end", expect=r"#", check=False)
        if self.session not in self._sessions(conn):
            return False
        self.cmd(conn, f"configure session {self.session}", expect=r"\)#")
        self.cmd(conn, "abort", expect=r"#")
        self.session_open = False
        return True

    def rollback(self, conn: Session) -> None:
        self._abort(conn)
        if self.have_checkpoint:  # a no-op when the session never committed
            self.cmd(conn, f"rollback running-config checkpoint {self.checkpoint}",
                     ok=r"Rollback completed successfully", timeout=max(self.ctx.read_timeout, 120))
        self.committed = False

    def _drop(self, conn: Session) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"no checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Session) -> None:
        if self._abort(conn):
            self.ctx.note(f"aborted leftover configuration session {self.session}")
        self._drop(conn)


TRANSACTION = NxosTransaction
