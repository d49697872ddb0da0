"""The per-device transaction protocol every platform's ``TRANSACTION`` implements.

The runner (``fabriccfg.push.device``) drives one transaction per device, always in this order::

    fetch -> (diff: nothing to do? "unchanged") -> backup -> apply -> verify -> confirm
        on any error at or after backup: rollback (on a fresh session if the old one died)
    cleanup: always, best effort (never leave a session or checkpoint behind)

A transaction object lives for one device and one run, so it may remember what it created
(a session name, a checkpoint, uploaded temp files). Every platform difference lives in the
platform's transaction class; the runner never branches on a platform name.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, runtime_checkable

from fabriccfg import registry
from fabriccfg.session import Session


class DiffLike(Protocol):
    """What the push needs from ``fabriccfg.render.diff.DeviceDiff``."""

    @property
    def changed(self) -> bool: ...
    @property
    def text(self) -> str: ...
    @property
    def commands(self) -> list[str]: ...
    @property
    def patch(self) -> list[dict[str, Any]]: ...
    @property
    def files(self) -> dict[str, str]: ...


Differ = Callable[[str, dict[str, str], dict[str, str]], DiffLike]
"""``diff_device(platform, intended, running)``."""


class TxError(Exception):
    """A transaction step failed; the message is safe to print (it names the step and the device's answer)."""


class VerifyError(TxError):
    """The change went in but verification found problems; the transaction is rolled back."""


@dataclass
class TxContext:
    """What a transaction knows about its device and run."""

    name: str
    platform: str
    tag: str
    """Unique per run and device, safe as a session, checkpoint or file name (``fc-<run>-<n>``)."""
    differ: Differ
    confirm_timeout: float = 300.0
    """Commit-confirm timer (EOS ``commit timer``, NVUE ``--confirm``): the platform reverts on its own
    if fabriccfg dies before it confirms."""
    read_timeout: float = 60.0
    """Longest wait for one command's answer (the runner's per-device deadline usually fires first)."""
    notes: list[str] = field(default_factory=list)
    step: Callable[[str], None] = lambda _s: None
    """Progress callback: the step now running (``applying``, ``verifying`` ...)."""

    def note(self, text: str) -> None:
        self.notes.append(text)


@runtime_checkable
class Transaction(Protocol):
    """One device's guarded change. Raise :class:`TxError` (or let netmiko's exceptions through)."""

    commit_confirm: ClassVar[bool]
    """True when the platform itself reverts an unconfirmed change (so a lost session is still safe)."""

    def __init__(self, ctx: TxContext) -> None: ...

    def fetch(self, conn: Session, names: Sequence[str]) -> dict[str, str]:
        """The running config as ``{file name: text}``, with the file names the renderer produces."""
        ...

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        """Make the on-device restore point (session, checkpoint, saved file, file copies)."""
        ...

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        """Apply ``diff`` (merge semantics), committing with a confirm timer where the platform has one."""
        ...

    def verify(self, conn: Session, intended: Mapping[str, str]) -> list[str]:
        """Problems found after apply (re-fetch and diff; services up). Empty means good."""
        ...

    def confirm(self, conn: Session) -> None:
        """Make the change permanent (confirm the commit, save, drop the restore point)."""
        ...

    def rollback(self, conn: Session) -> None:
        """Bring back the config from before :meth:`backup`; must also work on a fresh session."""
        ...

    def cleanup(self, conn: Session) -> None:
        """Remove whatever this transaction left on the device (best effort, must not raise)."""
        ...

    def restore_point(self) -> dict[str, Any]:
        """What this object remembers about its restore point, as JSON (journaled after every state)."""
        ...

    def resume(self, restore: Mapping[str, Any], backup: Mapping[str, str]) -> None:
        """Take back :meth:`restore_point`'s fields in a new process (``push --recover``), so that
        :meth:`rollback`, :meth:`confirm` and :meth:`cleanup` work on the device a dead run left."""
        ...


def transaction_class(platform: str) -> type[Transaction] | None:
    """The platform's ``TRANSACTION`` class from the registry; None when it is never a push target."""
    cls = registry.transaction(platform)
    return cls if isinstance(cls, type) else None


def first_error_line(output: str, pattern: str) -> str:
    for line in output.splitlines():
        if re.search(pattern, line):
            return line.strip()
    return output.strip().splitlines()[-1] if output.strip() else ""


class CliTransaction:
    """Helpers shared by the platform transactions (netmiko sessions)."""

    commit_confirm: ClassVar[bool] = False
    kind: ClassVar[str] = "config lines"
    """How the change is made atomic (or not), in a few words: journaled and shown by ``--recover``."""
    journal_fields: ClassVar[tuple[str, ...]] = ()
    """Attributes that describe the on-device restore point: journaled, and set again by :meth:`resume`."""
    error_pattern: ClassVar[str] = r"^%"
    """A line of a device answer that means the command failed."""
    running_command: ClassVar[str] = "show running-config"
    pipeline: ClassVar[int] = 16
    """Config lines sent ahead of their answers (1: strictly one by one)."""

    def __init__(self, ctx: TxContext) -> None:
        self.ctx = ctx

    # ----------------------------------------------------------------- primitives
    def cmd(self, conn: Session, command: str, *, expect: str | None = None, timeout: float | None = None,
            check: bool = True, ok: str | None = None) -> str:
        """Send one command and return its output; raise :class:`TxError` on an error answer.

        ``ok``: a regex the output must contain for success (when the platform prints one).
        """
        out: str
        if hasattr(conn, "fc_command"):  # fabriccfg.connect sessions: event-driven, no fixed sleeps
            out = conn.fc_command(command, expect=expect, timeout=timeout or self.ctx.read_timeout)
        else:
            kwargs: dict[str, Any] = {"read_timeout": timeout or self.ctx.read_timeout, "strip_prompt": True,
                                      "strip_command": True, "auto_find_prompt": False}
            if expect is not None:
                kwargs["expect_string"] = expect
            out = conn.send_command(command, **kwargs)
        if check and re.search(self.error_pattern, out, re.M):
            raise TxError(f"{command!r} failed: {first_error_line(out, self.error_pattern)}")
        if ok is not None and not re.search(ok, out, re.M):
            last = out.strip().splitlines()[-1] if out.strip() else "no output"
            raise TxError(f"{command!r} failed: {last}")
        return out

    def config_lines(self, conn: Session, lines: Sequence[str]) -> None:
        """Send config lines in the mode the caller entered; stop at the first line the device rejects."""
        from netmiko.exceptions import ConfigInvalidException

        lines = [ln for ln in lines if ln.strip()]
        if not lines:
            return
        if hasattr(conn, "fc_lines"):
            outs = conn.fc_lines(list(lines), window=self.pipeline, timeout=self.ctx.read_timeout)
            for line, out in zip(lines, outs, strict=False):
                if re.search(self.error_pattern, out, re.M):
                    why = first_error_line(out, self.error_pattern)
                    raise TxError(f"the device rejected config line {line.strip()!r}: {why}")
            return
        try:
            conn.send_config_set(lines, enter_config_mode=False, exit_config_mode=False,
                                 error_pattern=self.error_pattern, read_timeout=self.ctx.read_timeout,
                                 cmd_verify=True)
        except ConfigInvalidException as exc:
            m = re.search(r"at command:\s*(.*?), matched error", str(exc), re.S)
            line = m.group(1).strip() if m else str(exc).strip()[:120]
            raise TxError(f"the device rejected config line {line!r}") from None

    def single(self, names: Sequence[str], text: str) -> dict[str, str]:
        """A CLI platform renders one file: the running config goes under that file's name."""
        name = names[0] if names else "running-config"
        return {name: text if text.endswith("\n") else text + "\n"}

    # ----------------------------------------------------------------- defaults
    def fetch(self, conn: Session, names: Sequence[str]) -> dict[str, str]:
        """The output of :attr:`running_command` as the platform's one rendered file."""
        return self.single(names, self.cmd(conn, self.running_command))

    def verify(self, conn: Session, intended: Mapping[str, str]) -> list[str]:
        running = self.fetch(conn, list(intended))
        diff = self.ctx.differ(self.ctx.platform, dict(intended), running)
        if diff.changed:
            lines = [ln for ln in diff.text.splitlines() if ln.startswith(("+", "-"))
                     and not ln.startswith(("+++", "---"))]
            return [f"running config still differs from intent after apply ({len(lines)} lines), "
                    f"first: {lines[0] if lines else diff.text.strip()[:120]}"]
        return []

    def cleanup(self, conn: Session) -> None:
        return None

    def restore_point(self) -> dict[str, Any]:
        return {f: getattr(self, f) for f in self.journal_fields}

    def resume(self, restore: Mapping[str, Any], backup: Mapping[str, str]) -> None:
        for f in self.journal_fields:
            if f in restore:
                setattr(self, f, restore[f])


# --------------------------------------------------------------------- file upload over a shell
UPLOAD_CHUNK = 3000
"""Base64 characters per shell line (well under a terminal's 4096-byte canonical line limit)."""


WROTE = "FCWROTE"
_SAY_WROTE = "printf 'FC%s\\n' WROTE"
"""Prints :data:`WROTE` after a write that worked; the command line itself never contains that word,
so an echoed (or terminal-wrapped) command cannot fake success."""


def _write(tx: CliTransaction, conn: Session, command: str, target: str) -> None:
    """Run one shell write; raise :class:`TxError` with the shell's own words (``Permission denied``,
    ``No space left on device``) when it did not report success."""
    out = tx.cmd(conn, f"{command} && {_SAY_WROTE}", check=False)
    if not re.search(rf"^{WROTE}\s*$", out, re.M):
        lines = [ln.strip() for ln in out.splitlines() if ln.strip() and WROTE not in ln]
        raise TxError(f"writing {target} failed: {lines[-1][:160] if lines else 'no answer from the shell'}")


def upload(tx: CliTransaction, conn: Session, path: str, content: str) -> None:
    """Write ``content`` to ``path`` on a Linux shell, in base64 chunks, and check its sha256.

    Large files go through ``PATH.b64``, removed here on success and failure alike (and by the
    transactions' cleanup when the session died mid-way).
    """
    data = content.encode("utf-8")
    quoted = shlex.quote(path)
    b64 = base64.b64encode(data).decode("ascii")
    digest = hashlib.sha256(data).hexdigest()
    if len(b64) <= UPLOAD_CHUNK:
        _write(tx, conn, f"printf '%s' '{b64}' | base64 -d > {quoted}", path)
    else:
        staging = shlex.quote(f"{path}.b64")
        try:
            for i in range(0, len(b64), UPLOAD_CHUNK):
                redirect = ">" if i == 0 else ">>"
                chunk = b64[i:i + UPLOAD_CHUNK]
                _write(tx, conn, f"printf '%s' '{chunk}' {redirect} {staging}", f"{path}.b64")
            _write(tx, conn, f"base64 -d {staging} > {quoted}", path)
        finally:
            with contextlib.suppress(Exception):  # best effort on a dying session; cleanup/rollback retry
                tx.cmd(conn, f"rm -f {staging}", check=False)
    out = tx.cmd(conn, f"sha256sum {quoted}", check=False)
    if digest not in out:
        raise TxError(f"upload of {path} failed: its sha256 on the device differs from the intended file "
                      f"({out.strip()[:120] or 'no answer'})")


MISSING = "__FABRICCFG_MISSING__"


def read_file(tx: CliTransaction, conn: Session, path: str) -> str | None:
    """The exact content of ``path`` on a Linux shell (base64 round trip), None when it does not exist."""
    path = shlex.quote(path)
    out = tx.cmd(conn, f"test -f {path} && cat {path} | base64 || echo {MISSING}", check=False)
    if MISSING in out:
        return None
    b64 = "".join(out.split())
    try:
        return base64.b64decode(b64, validate=True).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        raise TxError(f"could not read {path}: unexpected output {out.strip()[:80]!r}") from None
