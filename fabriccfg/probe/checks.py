"""Checks over probe results: tail-latency, jitter, busbw-low, straggler, probe-class, probe-run.

Budgets are configurable (``Budgets``); every default is an ASSUMPTION marked [A] below (no public
per-fabric tail-latency budget exists: analytics §9 item 4), chosen so a healthy fabric's
microsecond-scale spread passes and a queue that runs to PFC Xoff (tens of microseconds) fails.

busbw-low follows nccl-tests' definition (NVIDIA/nccl-tests doc/PERFORMANCE.md): busbw =
algbw x 2(n-1)/n for all-reduce, "a number comparable to the hardware peak bandwidth" whatever
the rank count, so the budget is a fraction of the NIC's line rate in GB/s (Gb/s / 8) times the
algorithm factor (1 for ring/tree; in-network NVLS reduction reports a different busbw, analytics
§1.2, so the probe forces NCCL_ALGO=Ring).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from fabriccfg.inventory.models import Fabric
from fabriccfg.probe import commands
from fabriccfg.probe.runner import PairResult

SEVERITIES = ("ok", "warning", "critical", "unknown")
ALGO_FACTOR = {"ring": 1.0, "tree": 1.0}


@dataclass(frozen=True)
class Budgets:
    tail_ratio: float = 3.0
    """[A] p99.9 / p50 above this: tail-latency warning (x3 of it: critical)."""
    tail_us: float = 10.0
    """[A] p99.9 above this many microseconds: tail-latency warning (RoCE 2-tier one-way ~2-4 us)."""
    jitter_stdev_us: float = 1.0
    """[A] t_stdev above this: jitter warning."""
    jitter_spread_us: float = 20.0
    """[A] t_max - t_typical above this: jitter warning (one PFC pause at 400G is ~84 us)."""
    busbw_fraction: float = 0.8
    """[A] busbw below this fraction of line rate x algorithm factor: warning (half of it: critical).
    nccl#1368 reports ~95 % of 4x400G on RoCE ring (analytics §1.2), so 80 % leaves room."""
    straggler_ratio: float = 3.0
    """[A] a pair's p99.9 above this multiple of the median pair's: straggler warning."""
    straggler_busbw: float = 0.7
    """[A] a rail's busbw below this fraction of the median rail's: straggler warning."""


@dataclass
class Finding:
    check: str
    severity: str
    subject: str
    message: str
    value: float | None = None
    extra: dict[str, object] = field(default_factory=dict)


def _lat_findings(r: PairResult, b: Budgets) -> list[Finding]:
    out: list[Finding] = []
    lat = r.latency
    if lat is None:
        return out
    name = r.pair.name
    p50 = lat.t_typical
    if lat.p999 is not None and p50 > 0:
        ratio = lat.p999 / p50
        if ratio > b.tail_ratio or lat.p999 > b.tail_us:
            sev = "critical" if ratio > 3 * b.tail_ratio or lat.p999 > 3 * b.tail_us else "warning"
            out.append(
                Finding(
                    "tail-latency",
                    sev,
                    name,
                    f"p99.9 {lat.p999:.2f} us = {ratio:.1f}x p50 {p50:.2f} us "
                    f"(budget {b.tail_ratio:g}x or {b.tail_us:g} us)",
                    lat.p999,
                )
            )
    spread = lat.t_max - lat.t_typical
    if (lat.t_stdev is not None and lat.t_stdev > b.jitter_stdev_us) or spread > b.jitter_spread_us:
        out.append(
            Finding(
                "jitter",
                "warning",
                name,
                f"stdev {lat.t_stdev if lat.t_stdev is not None else float('nan'):.2f} us, "
                f"max-typical {spread:.2f} us (budget {b.jitter_stdev_us:g} / "
                f"{b.jitter_spread_us:g} us)",
                spread,
            )
        )
    return out


def line_rate_gbytes(fabric: Fabric, r: PairResult) -> float:
    """The slower NIC of the pair's line rate in GB/s."""
    speeds = []
    for nic in (r.pair.client, r.pair.server):
        host = next(h for h in fabric.hosts if h.name == nic.host)
        model_nic = next(n for n in host.nics if n.name == nic.nic)
        link = fabric.link_by_end.get((nic.host, nic.nic))
        speeds.append(
            (link.speed if link and link.speed else None) or model_nic.speed or fabric.fabric.link_speed
        )
    return min(speeds) / 8.0


def evaluate(
    fabric: Fabric, results: list[PairResult], b: Budgets | None = None, algo: str = "ring"
) -> list[Finding]:
    b = b or Budgets()
    out: list[Finding] = []
    for r in results:
        for err in r.errors:
            out.append(Finding("probe-run", "unknown", r.pair.name, err))
        out += _lat_findings(r, b)
        want = commands.intended_class(fabric, r.pair.client)
        if want is not None and r.tclass is not None and r.tclass != want:
            out.append(
                Finding(
                    "probe-class",
                    "warning",
                    r.pair.name,
                    f"probe ran in traffic class {r.tclass}, the lossless class is {want}: "
                    "it measured another queue than the training traffic uses",
                    r.tclass,
                )
            )
        if fabric.fabric.technology == "roce" and r.link_type and r.link_type != "Ethernet":
            out.append(
                Finding(
                    "probe-class",
                    "warning",
                    r.pair.name,
                    f"perftest reports link type {r.link_type} on a RoCE fabric",
                )
            )
        if r.busbw_gbytes is not None:
            rate = line_rate_gbytes(fabric, r) * ALGO_FACTOR.get(algo, 1.0)
            frac = r.busbw_gbytes / rate if rate else 0.0
            if frac < b.busbw_fraction:
                sev = "critical" if frac < b.busbw_fraction / 2 else "warning"
                out.append(
                    Finding(
                        "busbw-low",
                        sev,
                        f"rail {r.pair.rail} {r.pair.name}",
                        f"busbw {r.busbw_gbytes:.1f} GB/s = {frac:.0%} of {rate:.1f} GB/s line rate "
                        f"(budget {b.busbw_fraction:.0%})",
                        r.busbw_gbytes,
                    )
                )
    out += _stragglers(results, b)
    return out


def _stragglers(results: list[PairResult], b: Budgets) -> list[Finding]:
    out: list[Finding] = []
    tails = [(r, r.latency.p999) for r in results if r.latency is not None and r.latency.p999 is not None]
    if len(tails) >= 3:
        med = statistics.median(v for _, v in tails)
        worst, val = max(tails, key=lambda x: x[1])
        if med > 0 and val / med > b.straggler_ratio:
            out.append(
                Finding(
                    "straggler",
                    "warning",
                    worst.pair.name,
                    f"slowest pair: p99.9 {val:.2f} us = {val / med:.1f}x the median pair "
                    f"({med:.2f} us, budget {b.straggler_ratio:g}x)",
                    val / med,
                )
            )
    rails: dict[int, list[float]] = {}
    for r in results:
        if r.busbw_gbytes is not None:
            rails.setdefault(r.pair.rail, []).append(r.busbw_gbytes)
    per_rail = {rail: min(v) for rail, v in rails.items()}
    if len(per_rail) >= 3:
        med = statistics.median(per_rail.values())
        rail, val = min(per_rail.items(), key=lambda x: x[1])
        if med > 0 and val / med < b.straggler_busbw:
            out.append(
                Finding(
                    "straggler",
                    "warning",
                    f"rail {rail}",
                    f"slowest rail: busbw {val:.1f} GB/s = {val / med:.0%} of the median rail "
                    f"({med:.1f} GB/s, budget {b.straggler_busbw:.0%})",
                    val / med,
                )
            )
    return out


def exit_code(findings: list[Finding], results: list[PairResult]) -> int:
    """Nagios: 2 critical, 3 unknown (a pair could not be measured), 1 warning, 0 ok."""
    sev = {f.severity for f in findings}
    if "critical" in sev:
        return 2
    if "unknown" in sev or not results:
        return 3
    return 1 if "warning" in sev else 0
