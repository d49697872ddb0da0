"""nccl-tests (NVIDIA/nccl-tests) ``*_perf`` output: time, algbw and busbw per size.

The table follows the ``out-of-place / in-place`` header of src/common.cu: ``size count type
redop root time algbw busbw #wrong`` twice (out-of-place then in-place); ``#wrong`` is ``N/A``
when validation is off and ``redop``/``root`` are ``none``/``-1`` for ops without them. Times in
microseconds, bandwidths in GB/s (10**9 bytes per second, nccl-tests doc/PERFORMANCE.md). The
trailer ``# Avg bus bandwidth : X`` is kept; rank lines (``#  Rank  0 Group ... on HOST``) give the
rank count and hosts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.text import split_lines

_ROW = re.compile(
    r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+"
    r"(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)
_RANK = re.compile(r"^#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)")
_AVG = re.compile(r"#\s*Avg bus bandwidth\s*:\s*([0-9.]+)")
_HEADER = re.compile(r"out-of-place\s+in-place")


class NcclTestsError(ValueError):
    """The text has no nccl-tests result table."""


@dataclass(frozen=True)
class NcclRow:
    size: int
    count: int
    dtype: str
    redop: str
    root: int
    time_us: float
    algbw: float
    busbw: float
    wrong: int | None
    time_us_inplace: float
    algbw_inplace: float
    busbw_inplace: float
    wrong_inplace: int | None


@dataclass
class NcclResult:
    rows: list[NcclRow] = field(default_factory=list)
    avg_busbw: float | None = None
    ranks: dict[int, str] = field(default_factory=dict)
    """Rank -> host, from the '# Using devices' block."""

    def peak_busbw(self) -> float:
        """Largest out-of-place busbw (GB/s) over all sizes; 0 without rows."""
        return max((r.busbw for r in self.rows), default=0.0)


def _wrong(text: str) -> int | None:
    return int(text) if text.isdigit() else None


def parse(text: str) -> NcclResult:
    """Parse one ``all_reduce_perf`` (or any ``*_perf``) run; NcclTestsError without the table header."""
    res = NcclResult()
    header = False
    for raw in split_lines(text):
        line = raw.rstrip()
        if _HEADER.search(line):
            header = True
            continue
        m = _RANK.match(line.strip())
        if m:
            res.ranks[int(m.group(1))] = m.group(2)
            continue
        m = _AVG.search(line)
        if m:
            res.avg_busbw = float(m.group(1))
            continue
        if not header or line.lstrip().startswith("#"):
            continue
        m = _ROW.match(line)
        if not m:
            continue
        g = m.groups()
        try:
            res.rows.append(
                NcclRow(
                    int(g[0]),
                    int(g[1]),
                    g[2],
                    g[3],
                    int(g[4]),
                    float(g[5]),
                    float(g[6]),
                    float(g[7]),
                    _wrong(g[8]),
                    float(g[9]),
                    float(g[10]),
                    float(g[11]),
                    _wrong(g[12]),
                )
            )
        except ValueError:
            continue  # a NCCL INFO/WARN line that happens to have 13 fields
    if not header:
        raise NcclTestsError("no nccl-tests result table ('out-of-place  in-place' header) in the output")
    return res
