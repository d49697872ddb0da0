"""The push transaction of the cumulus_nvue platform (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError
from fabriccfg.session import Session

# NVUE: stage ``nv set``, apply with ``--confirm T``, verify, ``nv config confirm``. The applied revision
# is the restore point. A pending revision someone else staged is never touched: the push refuses the
# device instead of applying their half-done work with ours.


class NvueTransaction(CliTransaction):
    # NVUE command reference, "Config Commands" (https://docs.nvidia.com/networking-ethernet-software/
    # nvue-reference/Config-Commands): ``nv set``/``nv unset``
    # stage a pending revision that the running config does not see; ``nv config apply`` makes it the
    # applied revision in one step; ``--confirm TIME`` rolls back unless ``nv config confirm``;
    # ``nv config detach`` drops the pending revision.
    commit_confirm: ClassVar[bool] = True
    error_pattern: ClassVar[str] = r"^Error:"
    running_command: ClassVar[str] = "nv config show -o commands"
    kind: ClassVar[str] = "pending revision + nv config apply --confirm"
    journal_fields: ClassVar[tuple[str, ...]] = ("staged", "apply_sent")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.backup_running: dict[str, str] = {}
        self.staged = False
        self.apply_sent = False

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        pending = self.cmd(conn, "nv config diff")
        if pending.strip():
            raise TxError("a pending NVUE revision exists (nv config diff is not empty): someone else is "
                          "editing this switch; not touching it")
        self.backup_running = dict(running)

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self.staged = True
        self.config_lines(conn, diff.commands)
        self.ctx.step("committing")
        self.apply_sent = True
        self.cmd(conn, f"nv config apply -y --confirm {max(1, int(self.ctx.confirm_timeout))}s",
                 ok=r"applied", timeout=max(self.ctx.read_timeout, 120))
        self.staged = False

    def confirm(self, conn: Session) -> None:
        self.cmd(conn, "nv config confirm", ok=r"applied")
        self.cmd(conn, "nv config save", check=False)

    def rollback(self, conn: Session) -> None:
        """Drop anything staged; if the change went in, apply its inverse now (the timer is the fallback)."""
        self.cmd(conn, "nv config detach", check=False)
        self.staged = False
        if not self.backup_running:
            return
        if self.apply_sent:
            # NVUE refuses a new apply while a --confirm is pending: accept it, then apply the inverse now
            self.cmd(conn, "nv config confirm", check=False)
        now = self.fetch(conn, list(self.backup_running))
        undo: list[str] = []
        for name, before in self.backup_running.items():
            undo += undo_commands(before, now.get(name, ""))
        if undo:
            self.config_lines(conn, undo)
            self.cmd(conn, "nv config apply -y", ok=r"applied", timeout=max(self.ctx.read_timeout, 120))

    def cleanup(self, conn: Session) -> None:
        if self.staged:
            self.cmd(conn, "nv config detach", check=False)
            self.staged = False

    def resume(self, restore: Mapping[str, Any], backup: Mapping[str, str]) -> None:
        """After a dead run: assume the worst (staged and applied); both steps are harmless otherwise."""
        self.backup_running = dict(backup)
        self.staged = self.apply_sent = True


def _keyed(text: str) -> dict[str, str]:
    """``nv set`` lines by key (every word but the value: NVUE replaces a line with the same key)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line.startswith("nv set "):
            out[line.rsplit(" ", 1)[0]] = line
    return out


def undo_commands(before: str, now: str) -> list[str]:
    """Commands that turn the applied config ``now`` back into ``before`` (``nv config show -o commands``)."""
    b, n = _keyed(before), _keyed(now)
    unset = [f"nv unset {key.removeprefix('nv set ')}" for key in n if key not in b]
    reset = [line for key, line in b.items() if n.get(key) != line]
    return unset + reset


TRANSACTION = NvueTransaction
