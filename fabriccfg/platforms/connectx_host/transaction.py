"""The push transaction of the connectx_host platform (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from fabriccfg.platforms.connectx_host.render import UNAVAILABLE
from fabriccfg.push.files import FilesTransaction, last_line
from fabriccfg.session import Session


class ConnectxHostTransaction(FilesTransaction):
    """Install the NIC setup script and run it; verify by running the read-back script and comparing
    its output with the rendered expectation (line by line, as the renderer intends)."""

    run_scripts: ClassVar[Sequence[str]] = ("roce-setup.sh",)
    readback: ClassVar[tuple[str, str]] = ("roce-readback.sh", "roce-expected.txt")

    def verify(self, conn: Session, intended: Mapping[str, str]) -> list[str]:
        problems = super().verify(conn, intended)
        script, expected = self.readback
        if problems or script not in intended or expected not in intended:
            return problems
        code, out = self.status(conn, f"bash {self.path(script)}", timeout=self.long)
        if code:
            return [f"{script} failed (exit {code}): {last_line(out)}"]
        missing = readback_mismatches(intended[expected], out)
        if missing:
            problems.append(f"live NIC settings differ from intent in {len(missing)} value(s), "
                            f"first: {missing[0]}")
        return problems


def readback_mismatches(expected: str, readback: str) -> list[str]:
    """Expected ``key=value`` lines the read-back does not show. A key the running driver does not expose
    (read back as ``unavailable``: inbox mlx5 per-priority enable, verbs ToS) is not a mismatch."""
    want = {ln.strip() for ln in expected.splitlines() if ln.strip()}
    have = {ln.strip() for ln in readback.splitlines() if ln.strip()}
    absent = {ln.split("=", 1)[0] for ln in have if ln.endswith(f"={UNAVAILABLE}")}
    return sorted(ln for ln in want - have if ln.split("=", 1)[0] not in absent)


TRANSACTION = ConnectxHostTransaction
