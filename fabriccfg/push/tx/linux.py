"""Linux hosts (OpenSM/SHARP host, ConnectX GPU node): upload files with backups, pre-check, restart, check.

Steps: every changed file is uploaded next to its target as ``FILE.<tag>.new`` (base64 over the
shell, checksum checked), pre-checked where the platform has a checker (OpenSM parses its config),
then all are moved into place together, the affected services restarted (or scripts run) and checked
to be running. The old files are kept as ``FILE.<tag>.bak`` until confirm; rollback moves them back
and restarts again. Work happens in a root shell (``sudo -s``, netmiko's enable on Linux).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from fabriccfg import platforms
from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError, read_file, upload

RC = "FCRC="


class LinuxFilesTransaction(CliTransaction):
    error_pattern: ClassVar[str] = r"command not found|Permission denied"
    default_dir: ClassVar[str] = "/etc/fabriccfg"
    prechecks: ClassVar[Mapping[str, str]] = {}
    """File name -> a command (``{path}``: the new file, ``{tag}``) that exits non-zero on a bad file."""
    services: ClassVar[Mapping[str, str]] = {}
    """File name -> the systemd service that reads it (restarted when the file changes)."""
    run_scripts: ClassVar[Sequence[str]] = ()
    """File names that are scripts to run (``bash FILE``) after they are installed."""

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        spec = getattr(platforms.module(ctx.platform), "RENDER", None)
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
        return self.install_paths.get(name) or f"{self.default_dir}/{name}"

    def _root(self, conn: Any) -> None:
        if not conn.check_enable_mode():
            conn.enable()

    def status(self, conn: Any, command: str, timeout: float | None = None) -> tuple[int, str]:
        """Run ``command`` and return (0 or 1, output); ``&&``/``||`` so no shell needs ``$?`` semantics."""
        out = self.cmd(conn, f"{command} && echo {RC}0 || echo {RC}1", check=False, timeout=timeout)
        m = re.search(rf"{RC}(\d+)", out)
        if not m:
            raise TxError(f"{command!r}: no exit status in the answer")
        return int(m.group(1)), out[: m.start()].strip()

    # ----------------------------------------------------------------- protocol
    def fetch(self, conn: Any, names: Sequence[str]) -> dict[str, str]:
        self._root(conn)
        out: dict[str, str] = {}
        for n in names:
            text = read_file(self, conn, self.path(n))
            self.exists[n] = text is not None
            out[n] = text or ""
        return out

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
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
                raise TxError(f"backup copies failed: {_last(out)}")
        self.backed = {n: self.exists[n] for n in running}

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
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
                code, out = self.status(conn, check.format(path=f"{self.path(name)}.{self.ctx.tag}.new",
                                                           tag=self.ctx.tag))
                if code:
                    raise TxError(f"pre-check of {name} failed: {_last(out)}")
        self.installed.extend(changed)
        moves = [f"mv {self.path(n)}.{self.ctx.tag}.new {self.path(n)}" for n in changed]
        code, out = self.status(conn, " && ".join(moves))
        if code:
            raise TxError(f"installing the new files failed: {_last(out)}")
        self.uploaded = []
        self.ctx.step("restarting")
        self._activate(conn, changed)

    def _activate(self, conn: Any, names: Sequence[str]) -> None:
        for service in sorted({self.services[n] for n in names if n in self.services}):
            code, out = self.status(conn, f"systemctl restart {service}", timeout=self.long)
            if code:
                raise TxError(f"systemctl restart {service} failed: {_last(out)}")
        for name in names:
            if name in self.run_scripts:
                code, out = self.status(conn, f"bash {self.path(name)}", timeout=self.long)
                if code:
                    raise TxError(f"running {self.path(name)} failed (exit {code}): {_last(out)}")

    def verify(self, conn: Any, intended: Mapping[str, str]) -> list[str]:
        problems = super().verify(conn, intended)
        for service in sorted({self.services[n] for n in intended if n in self.services}):
            out = self.cmd(conn, f"systemctl is-active {service}", check=False).strip()
            if out.splitlines()[-1:] != ["active"]:
                problems.append(f"service {service} is not running after the change "
                                f"({out[:60] or 'no answer'})")
        return problems

    def confirm(self, conn: Any) -> None:
        self._root(conn)
        baks = [f"{self.path(n)}.{self.ctx.tag}.bak" for n, had in self.backed.items() if had]
        if baks:
            self.status(conn, f"rm -f {' '.join(baks)}")
        self.backed = {}

    def rollback(self, conn: Any) -> None:
        self._root(conn)
        steps = [f"mv {self.path(n)}.{self.ctx.tag}.bak {self.path(n)}" if had else f"rm -f {self.path(n)}"
                 for n, had in self.backed.items()]
        if steps:
            code, out = self.status(conn, " && ".join(steps))
            if code:
                raise TxError(f"restoring the old files failed: {_last(out)}")
        # restart what reads the restored files; re-run only scripts that existed before
        again = [n for n, had in self.backed.items() if n in self.services or (had and n in self.run_scripts)]
        self.backed = {}
        self._cleanup_new(conn)
        self._activate(conn, again)

    def _cleanup_new(self, conn: Any) -> None:
        if self.uploaded:
            news = [f"{self.path(n)}.{self.ctx.tag}.new" for n in self.uploaded]
            self.status(conn, "rm -f " + " ".join(news))
        self.uploaded = []

    def cleanup(self, conn: Any) -> None:
        self._root(conn)
        self._cleanup_new(conn)


def _last(out: str) -> str:
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[-1][:160] if lines else "no output"


class OpensmHostTransaction(LinuxFilesTransaction):
    """OpenSM (and SHARP AM): OpenSM must parse the new opensm.conf before it replaces the old one."""

    prechecks: ClassVar[Mapping[str, str]] = {
        "opensm.conf": "opensm -F {path} -c /tmp/{tag}.opensm-check.conf",
        "sharp_am.cfg": "sharp_am -O {path} --check",
    }
    services: ClassVar[Mapping[str, str]] = {
        "opensm.conf": "opensmd",
        "partitions.conf": "opensmd",
        "root_guids.conf": "opensmd",
        "cn_guids.conf": "opensmd",
        "node-name-map": "opensmd",
        "sharp_am.cfg": "sharp_am",
    }


class ConnectxHostTransaction(LinuxFilesTransaction):
    """A GPU node: install the NIC setup script and run it; verify by running the read-back script and
    comparing its output with the rendered expectation (line by line, as the renderer intends)."""

    run_scripts: ClassVar[Sequence[str]] = ("roce-setup.sh",)
    readback: ClassVar[tuple[str, str]] = ("roce-readback.sh", "roce-expected.txt")

    def verify(self, conn: Any, intended: Mapping[str, str]) -> list[str]:
        problems = super().verify(conn, intended)
        script, expected = self.readback
        if problems or script not in intended or expected not in intended:
            return problems
        code, out = self.status(conn, f"bash {self.path(script)}", timeout=self.long)
        if code:
            return [f"{script} failed (exit {code}): {_last(out)}"]
        want = {ln.strip() for ln in intended[expected].splitlines() if ln.strip()}
        have = {ln.strip() for ln in out.splitlines() if ln.strip()}
        missing = sorted(want - have)
        if missing:
            problems.append(f"live NIC settings differ from intent in {len(missing)} value(s), "
                            f"first: {missing[0]}")
        return problems
