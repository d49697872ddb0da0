"""perftest (linux-rdma/perftest) output: ``ib_write_lat`` / ``ib_send_lat`` / ``ib_write_bw``.

Why a parser of its own: the probe runs these tools on GPU hosts and needs the latency
distribution exactly as perftest prints it (the columns of ``RESULT_FMT_LAT`` plus the
``t_avg``/``t_stdev``/percentile columns of current releases, src/perftest_parameters.h) and the
bandwidth table (``RESULT_FMT`` in MB/sec, ``RESULT_FMT_G`` with ``--report_gbits``). The
preamble (``Link type``, ``GID index``, ``Device``, ``Mtu``) is kept: a probe run in the wrong
GID/traffic class is itself a finding. Older perftest prints only the first five latency columns;
the missing ones are None. Sizes in bytes, times in microseconds, bandwidth in Gb/s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.text import split_lines

LISTENING = re.compile(r"Waiting for client to connect|Waiting for client rdma_cm QP to connect")
"""What a perftest server prints once it listens (the probe waits for it before starting the client)."""

_PRE = re.compile(r"^\s*([A-Za-z][A-Za-z .*/_-]*?)\s*:\s*(\S.*?)\s*$")
_LAT_HEADER = re.compile(r"#bytes\s+#iterations\s+t_min\[usec\]")
_BW_HEADER = re.compile(r"#bytes\s+#iterations\s+BW peak\[(MB|Gb)/sec\]")
_NUM = r"[-+]?\d+(?:\.\d+)?"
MB_TO_GBPS = 8 * 2**20 / 1e9
"""perftest's MB/sec counted as 2**20 bytes per second (ASSUMPTION: read from how its MB/sec and
``--report_gbits`` figures compare; use --report_gbits, which the probe does, to avoid it)."""


class PerftestError(ValueError):
    """The text is not perftest output with a result table."""


@dataclass(frozen=True)
class LatencyRow:
    size: int
    iterations: int
    t_min: float
    t_max: float
    t_typical: float
    t_avg: float | None = None
    t_stdev: float | None = None
    p99: float | None = None
    p999: float | None = None


@dataclass(frozen=True)
class BandwidthRow:
    size: int
    iterations: int
    bw_peak_gbps: float
    bw_avg_gbps: float
    msg_rate_mpps: float | None = None


@dataclass
class PerftestResult:
    test: str = ""
    """The banner, e.g. 'RDMA_Write Latency Test'."""
    kind: str = ""
    """'latency' or 'bandwidth'."""
    info: dict[str, str] = field(default_factory=dict)
    """Preamble fields: Device, Link type, GID index, Mtu, Transport type, Connection type ..."""
    latency: list[LatencyRow] = field(default_factory=list)
    bandwidth: list[BandwidthRow] = field(default_factory=list)
    server: bool = False
    """The text has the server's 'Waiting for client to connect' banner."""
    warnings: list[str] = field(default_factory=list)

    @property
    def link_type(self) -> str:
        return self.info.get("Link type", "")

    @property
    def gid_index(self) -> int | None:
        raw = self.info.get("GID index", "")
        return int(raw) if raw.isdigit() else None


def _preamble(line: str, info: dict[str, str]) -> None:
    # "Dual-port       : OFF\t\tDevice         : mlx5_0" holds two fields on one line
    # and "rdma_cm QPs\t : OFF" has a tab before its colon: split only before the next name
    for part in re.split(r"(?:\t+|\s{3,})(?=[A-Za-z][A-Za-z .*/_-]*?\s*:)", line.strip()):
        m = _PRE.match(part)
        if m:
            info.setdefault(m.group(1).strip(), m.group(2).strip())


def _floats(line: str) -> list[str]:
    return re.findall(_NUM, line)


def parse(text: str) -> PerftestResult:
    """Parse one perftest run (server or client side); raises PerftestError without a result header."""
    res = PerftestResult()
    lines = split_lines(text)
    mode = ""
    unit_gb = True
    seen_header = False
    for raw in lines:
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped:
            continue
        if LISTENING.search(stripped):
            res.server = True
            continue
        if stripped.startswith("WARNING") or "Conflicting CPU frequency" in stripped:
            res.warnings.append(stripped)
            continue
        if not res.test and re.search(r"(Latency|BW) Test\s*$", stripped):
            res.test = stripped
            continue
        if _LAT_HEADER.search(stripped):
            mode, res.kind, seen_header = "lat", "latency", True
            continue
        m = _BW_HEADER.search(stripped)
        if m:
            mode, res.kind, seen_header = "bw", "bandwidth", True
            unit_gb = m.group(1) == "Gb"
            continue
        if stripped.startswith("---") or stripped.startswith("*"):
            continue
        if mode and re.match(r"^\d+\s", stripped):
            nums = _floats(stripped)
            if mode == "lat" and len(nums) >= 5:
                vals: list[float | None] = [float(x) for x in nums[2:9]]
                vals += [None] * (7 - len(vals))
                t_min, t_max, typical = (float(v or 0.0) for v in vals[:3])
                res.latency.append(
                    LatencyRow(
                        int(nums[0]), int(nums[1]), t_min, t_max, typical, vals[3], vals[4], vals[5], vals[6]
                    )
                )
            elif mode == "bw" and len(nums) >= 4:
                scale = 1.0 if unit_gb else MB_TO_GBPS
                rate = float(nums[4]) if len(nums) > 4 else None
                res.bandwidth.append(
                    BandwidthRow(
                        int(nums[0]), int(nums[1]), float(nums[2]) * scale, float(nums[3]) * scale, rate
                    )
                )
            continue
        if (
            not mode
            and ":" in stripped
            and not stripped.startswith(("local address", "remote address", "GID:"))
        ):
            _preamble(line, res.info)
    if not seen_header and not res.server:
        raise PerftestError("no perftest result header ('#bytes #iterations ...') in the output")
    return res
