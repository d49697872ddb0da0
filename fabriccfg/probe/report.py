"""The probe's JSON document (also ``advise --from-telemetry`` input), table and Prometheus text."""

from __future__ import annotations

import statistics
import time
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.probe.checks import Finding, exit_code
from fabriccfg.probe.plan import Pair
from fabriccfg.probe.runner import PairResult

STATUS = {0: "OK", 1: "WARNING", 2: "CRITICAL", 3: "UNKNOWN"}
TOOL = "fabriccfg probe"


def pair_doc(r: PairResult) -> dict[str, Any]:
    p = r.pair
    lat = r.latency
    return {
        "pair": p.name,
        "kind": p.kind,
        "rail": p.rail,
        "leaves": list(p.leaves),
        "client": {"host": p.client.host, "nic": p.client.nic},
        "server": {"host": p.server.host, "nic": p.server.nic},
        "tclass": r.tclass,
        "gid_index": r.gid_index_seen,
        "link_type": r.link_type,
        "latency_us": None
        if lat is None
        else {
            "tool": r.latency_tool,
            "size": lat.size,
            "iterations": lat.iterations,
            "min": lat.t_min,
            "typical": lat.t_typical,
            "avg": lat.t_avg,
            "stdev": lat.t_stdev,
            "max": lat.t_max,
            "p99": lat.p99,
            "p999": lat.p999,
        },
        "write_bw_gbps": r.bw_gbps,
        "busbw_gbytes": r.busbw_gbytes,
        "nccl": [
            {"size": x.size, "time_us": x.time_us, "algbw": x.algbw, "busbw": x.busbw} for x in r.nccl_rows
        ],
        "errors": r.errors,
        "seconds": round(r.seconds, 3),
    }


def summary(results: list[PairResult]) -> dict[str, Any]:
    """Fabric-wide: median p50/p99/p99.9 over pairs, the worst pair's, jitter, busbw per rail."""
    lats = [r.latency for r in results if r.latency is not None]
    out: dict[str, Any] = {"pairs_measured": len(lats)}
    if lats:

        def med(vals: list[float | None]) -> float | None:
            got = [v for v in vals if v is not None]
            return statistics.median(got) if got else None

        out["latency_us"] = {
            "p50": med([x.t_typical for x in lats]),
            "p99": med([x.p99 for x in lats]),
            "p999": med([x.p999 for x in lats]),
            "stdev": med([x.t_stdev for x in lats]),
            "worst_p999": max((x.p999 for x in lats if x.p999 is not None), default=None),
            "worst_max": max(x.t_max for x in lats),
        }
    rails: dict[int, list[float]] = {}
    for r in results:
        if r.busbw_gbytes is not None:
            rails.setdefault(r.pair.rail, []).append(r.busbw_gbytes)
    if rails:
        out["busbw_gbytes_per_rail"] = {str(k): min(v) for k, v in sorted(rails.items())}
        out["busbw_gbytes"] = statistics.median(min(v) for v in rails.values())
    return out


def document(  # noqa: PLR0917 (the run's parts, each needed once)
    fabric: Fabric,
    pairs: list[Pair],
    leaves: int,
    results: list[PairResult],
    findings: list[Finding],
    line_rate_gbytes: float | None = None,
) -> dict[str, Any]:
    code = exit_code(findings, results)
    return {
        "tool": TOOL,
        "ts": time.time(),
        "fabric": fabric.fabric.name,
        "technology": fabric.fabric.technology,
        "status": STATUS[code],
        "exit_code": code,
        "plan": {
            "pairs": len(pairs),
            "leaves": leaves,
            "kinds": {k: sum(1 for p in pairs if p.kind == k) for k in sorted({p.kind for p in pairs})},
        },
        "line_rate_gbytes": line_rate_gbytes,
        "summary": summary(results),
        "results": [pair_doc(r) for r in results],
        "probe_findings": [
            {
                "check": f.check,
                "severity": f.severity,
                "subject": f.subject,
                "message": f.message,
                "value": f.value,
            }
            for f in findings
        ],
    }


def table(doc: dict[str, Any]) -> str:
    lines = [
        f"probe {doc['fabric']} ({doc['technology']}): {doc['plan']['pairs']} pairs over "
        f"{doc['plan']['leaves']} leaves -> {doc['status']}"
    ]
    lines.append(
        f"{'pair':<40} {'kind':<10} {'p50':>6} {'p99':>7} {'p99.9':>7} {'stdev':>6} "
        f"{'bw Gb/s':>8} {'busbw':>6}"
    )
    for r in doc["results"]:
        lat = r["latency_us"] or {}

        def f(v: Any, w: int) -> str:
            return f"{v:>{w}.2f}" if isinstance(v, int | float) else f"{'-':>{w}}"

        lines.append(
            f"{r['pair']:<40} {r['kind']:<10} {f(lat.get('typical'), 6)} {f(lat.get('p99'), 7)} "
            f"{f(lat.get('p999'), 7)} {f(lat.get('stdev'), 6)} {f(r['write_bw_gbps'], 8)} "
            f"{f(r['busbw_gbytes'], 6)}"
        )
    for x in doc["probe_findings"]:
        lines.append(f"{x['severity'].upper():<8} {x['check']:<13} {x['subject']}: {x['message']}")
    if not doc["probe_findings"]:
        lines.append("OK       no finding")
    return "\n".join(lines) + "\n"


def prometheus(doc: dict[str, Any]) -> str:
    """Summaries (latency quantiles per pair) and gauges (bandwidth) in the exposition format."""
    from prometheus_client import CollectorRegistry, generate_latest
    from prometheus_client.core import GaugeMetricFamily, Metric

    class _Collector:
        def collect(self) -> Any:
            lat = Metric(
                "fabriccfg_probe_latency_microseconds", "perftest one-way latency per pair", "summary"
            )
            bw = GaugeMetricFamily(
                "fabriccfg_probe_write_bw_gbps",
                "ib_write_bw average per pair",
                labels=["fabric", "pair", "kind", "rail"],
            )
            bus = GaugeMetricFamily(
                "fabriccfg_probe_busbw_gbytes",
                "all_reduce_perf peak busbw per pair",
                labels=["fabric", "pair", "kind", "rail"],
            )
            for r in doc["results"]:
                labels = {
                    "fabric": doc["fabric"],
                    "pair": r["pair"],
                    "kind": r["kind"],
                    "rail": str(r["rail"]),
                }
                x = r["latency_us"]
                if x:
                    for q, key in (("0.5", "typical"), ("0.99", "p99"), ("0.999", "p999")):
                        if x.get(key) is not None:
                            lat.add_sample(lat.name, {**labels, "quantile": q}, float(x[key]))
                    lat.add_sample(lat.name + "_count", labels, float(x["iterations"]))
                    lat.add_sample(
                        lat.name + "_sum", labels, float((x["avg"] or x["typical"]) * x["iterations"])
                    )
                vals = list(labels.values())
                if r["write_bw_gbps"] is not None:
                    bw.add_metric(vals, float(r["write_bw_gbps"]))
                if r["busbw_gbytes"] is not None:
                    bus.add_metric(vals, float(r["busbw_gbytes"]))
            yield lat
            yield bw
            yield bus
            status = GaugeMetricFamily(
                "fabriccfg_probe_status", "0 ok, 1 warning, 2 critical, 3 unknown", labels=["fabric"]
            )
            status.add_metric([doc["fabric"]], float(doc["exit_code"]))
            yield status

    reg = CollectorRegistry()
    reg.register(_Collector())
    return generate_latest(reg).decode()
