"""CPU time of other processes (the mock's workers, push worker processes), read from /proc: the
benchmarks charge the client and the mock separately. Standard library only, so a benchmark can import it
while it runs an older fabriccfg."""

from __future__ import annotations

import os
from pathlib import Path


def proc_cpu(pids: list[int]) -> float:
    """User + system CPU seconds of the live processes ``pids`` (Linux; a process gone is skipped)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total
