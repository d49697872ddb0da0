"""Whole-file transactions for Linux hosts: upload with backups, pre-check, install, restart, check.

Generic machinery only; a platform module (``fabriccfg.platforms.opensm_host``, ``.connectx_host``)
subclasses :class:`FilesTransaction` and declares its specifics as data: which files are pre-checked
and how (:class:`Precheck`), which service reads which file, which files are scripts to run.

Steps: every changed file is uploaded next to its target as ``FILE.<tag>.new`` (base64 over the
shell, checksum checked), pre-checked where the platform has a checker, then all are moved into
place together, the affected services restarted (or scripts run) and checked to be running. The old
files are kept as ``FILE.<tag>.bak`` until confirm; rollback moves them back and restarts again.
Work happens in a root shell (``sudo -s``, netmiko's enable on Linux). Install paths come from the
platform's ``RENDER.install_paths`` (``default_dir/NAME`` otherwise).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from fabriccfg import registry
from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError, first_error_line, read_file, upload
from fabriccfg.session import Session


@dataclass(frozen=True)
class Precheck:
    """A checker run on the uploaded ``FILE.<tag>.new`` before anything is installed.

    ``command``: ``{path}`` is the new file, ``{tag}`` the transaction tag; a non-zero exit fails.
    ``fails``: a regex for output lines that mean failure even when the checker exits 0 (OpenSM
    prints ``Unrecognized token`` and carries on).
    """

    command: str
    fails: str | None = None


RC = "FCRC="
SAFE_PATH = re.compile(r"^/[A-Za-z0-9._+@/-]+$")
"""A path that needs no shell quoting (no space, quote, '$', ';', glob or control character)."""


class FilesTransaction(CliTransaction):
    """Whole files on a Linux host; subclasses declare ``prechecks``, ``services`` and ``run_scripts``."""

    error_pattern: ClassVar[str] = r"command not found|Permission denied"
    kind: ClassVar[str] = "whole files (.bak copies, .new uploads, one mv) + service restart"
    journal_fields: ClassVar[tuple[str, ...]] = ("exists", "backed", "installed")
    default_dir: ClassVar[str] = "/etc/fabriccfg"
    prechecks: ClassVar[Mapping[str, Precheck]] = {}
    """File name -> how to check a new version of it before it replaces the old one."""
    services: ClassVar[Mapping[str, str]] = {}
    """File name -> the systemd service that reads it (restarted when the file changes)."""
    run_scripts: ClassVar[Sequence[str]] = ()
    """File names that are scripts to run (``bash FILE``) after they are installed."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        spec = registry.render(ctx.platform)
        self.install_paths: Mapping[str, str] = dict(getattr(spec, "install_paths", {}) or {})
        self.exists: dict[str, bool] = {}
        """File name -> whether it existed when fetched."""
        self.backed: dict[str, bool] = {}
        """File name -> True when a .bak copy exists (False: the file did not exist before)."""
        self.uploaded: list[str] = []
        self.installed: list[str] = []

    @property
    def long(self) -> float:
        return max(self.ctx.read_timeout, 120.0)

    def path(self, name: str) -> str:
        """The install path of ``name``; refused unless it is a plain absolute path (it is put into shell
        command lines unquoted) and the transaction tag is a plain word."""
        path = self.install_paths.get(name) or f"{self.default_dir}/{name}"
        if not SAFE_PATH.match(path) or not SAFE_PATH.match(f"/{self.ctx.tag}"):
            raise TxError(f"refusing unsafe install path {path!r} (tag {self.ctx.tag!r}) in a shell command")
        return path

    def _root(self, conn: Session) -> None:
        if not conn.check_enable_mode():
            conn.enable()

    def status(self, conn: Session, command: str, timeout: float | None = None) -> tuple[int, str]:
        """Run ``command`` and return (0 or 1, output); ``&&``/``||`` so no shell needs ``$?`` semantics."""
        out = self.cmd(conn, f"{command} && echo {RC}0 || echo {RC}1", check=False, timeout=timeout)
        m = re.search(rf"{RC}(\d+)", out)
        if not m:
            raise TxError(f"{command!r}: no exit status in the answer")
        return int(m.group(1)), out[: m.start()].strip()

    # ----------------------------------------------------------------- protocol
    def fetch(self, conn: Session, names: Sequence[str]) -> dict[str, str]:
        self._root(conn)
        out: dict[str, str] = {}
        for n in names:
            text = read_file(self, conn, self.path(n))
            self.exists[n] = text is not None
            out[n] = text or ""
        return out

    def backup(self, conn: Session, running: Mapping[str, str]) -> None:
        """Copy every existing file to ``FILE.<tag>.bak`` in one command line."""
        self._root(conn)
        for name in running:
            if name not in self.exists:
                self.exists[name] = self.status(conn, f"test -f {self.path(name)}")[0] == 0
        tag = self.ctx.tag
        copies = [f"cp -p {self.path(n)} {self.path(n)}.{tag}.bak" for n in running if self.exists[n]]
        if copies:
            code, out = self.status(conn, " && ".join(copies))
            if code:
                raise TxError(f"backup copies failed: {last_line(out)}")
        self.backed = {n: self.exists[n] for n in running}

    def apply(self, conn: Session, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self._root(conn)
        changed = [n for n in intended if n in diff.files] or list(intended)
        dirs = sorted({self.path(n).rsplit("/", 1)[0] or "/" for n in changed})
        self.status(conn, f"mkdir -p {' '.join(dirs)}")
        for name in changed:
            self.uploaded.append(name)
            upload(self, conn, f"{self.path(name)}.{self.ctx.tag}.new", intended[name])
        for name in changed:
            check = self.prechecks.get(name)
            if check:
                self.ctx.step("pre-checking")
                self.precheck(conn, name, check)
        self.installed.extend(changed)
        moves = [f"mv {self.path(n)}.{self.ctx.tag}.new {self.path(n)}" for n in changed]
        code, out = self.status(conn, " && ".join(moves))
        if code:
            raise TxError(f"installing the new files failed: {last_line(out)}")
        self.uploaded = []
        self.ctx.step("restarting")
        self._activate(conn, changed)

    def precheck(self, conn: Session, name: str, check: Precheck) -> None:
        """Run ``check`` on the uploaded new version of ``name``; raise :class:`TxError` when it fails."""
        code, out = self.status(conn, check.command.format(path=f"{self.path(name)}.{self.ctx.tag}.new",
                                                           tag=self.ctx.tag))
        if code:
            raise TxError(f"pre-check of {name} failed: {last_line(out)}")
        if check.fails is not None and re.search(check.fails, out, re.M):
            raise TxError(f"pre-check of {name} failed: {first_error_line(out, check.fails)}")

    def _activate(self, conn: Session, names: Sequence[str]) -> None:
        for service in sorted({self.services[n] for n in names if n in self.services}):
            code, out = self.status(conn, f"systemctl restart {service}", timeout=self.long)
            if code:
                raise TxError(f"systemctl restart {service} failed: {last_line(out)}")
        for name in names:
            if name in self.run_scripts:
                code, out = self.status(conn, f"bash {self.path(name)}", timeout=self.long)
                if code:
                    raise TxError(f"running {self.path(name)} failed (exit {code}): {last_line(out)}")

    def verify(self, conn: Session, intended: Mapping[str, str]) -> list[str]:
        problems = super().verify(conn, intended)
        for service in sorted({self.services[n] for n in intended if n in self.services}):
            out = self.cmd(conn, f"systemctl is-active {service}", check=False).strip()
            if out.splitlines()[-1:] != ["active"]:
                problems.append(f"service {service} is not running after the change "
                                f"({out[:60] or 'no answer'})")
        return problems

    def confirm(self, conn: Session) -> None:
        self._root(conn)
        baks = [f"{self.path(n)}.{self.ctx.tag}.bak" for n, had in self.backed.items() if had]
        if baks:
            self.status(conn, f"rm -f {' '.join(baks)}")
        self.backed = {}

    def rollback(self, conn: Session) -> None:
        self._root(conn)
        steps = [f"mv {self.path(n)}.{self.ctx.tag}.bak {self.path(n)}" if had else f"rm -f {self.path(n)}"
                 for n, had in self.backed.items()]
        if steps:
            code, out = self.status(conn, " && ".join(steps))
            if code:
                raise TxError(f"restoring the old files failed: {last_line(out)}")
        # restart what reads the restored files; re-run only scripts that existed before
        again = [n for n, had in self.backed.items() if n in self.services or (had and n in self.run_scripts)]
        self.backed = {}
        self._cleanup_new(conn)
        self._activate(conn, again)

    def _cleanup_new(self, conn: Session) -> None:
        if self.uploaded:
            news = [f"{self.path(n)}.{self.ctx.tag}.new{ext}" for n in self.uploaded for ext in ("", ".b64")]
            self.status(conn, "rm -f " + " ".join(news))
        self.uploaded = []

    def cleanup(self, conn: Session) -> None:
        self._root(conn)
        self._cleanup_new(conn)

    def resume(self, restore: Mapping[str, Any], backup: Mapping[str, str]) -> None:
        super().resume(restore, backup)
        self.uploaded = list(backup)  # an upload may have been cut off: remove every FILE.<tag>.new


def last_line(out: str) -> str:
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1][:160] if lines else "no output"
