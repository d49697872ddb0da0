"""Recommendation and sweep: which fabric wins (with ties and the paired spread), and how the answer
changes with cluster size.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

from fabriccfg.advise.estimate import Estimate, estimate
from fabriccfg.advise.inputs import AdviseError, Knobs, Workload
from fabriccfg.advise.sources import FabricProfile
from fabriccfg.advise.telemetry_input import Telemetry

TIE_TOLERANCE = 0.01  # relative difference under which two fabrics are called a tie


def is_tie(margin: float) -> bool:
    """Below TIE_TOLERANCE (compared at the 0.01% resolution the output prints)."""
    return round(margin, 4) < TIE_TOLERANCE


def _metric(estimates: list[Estimate]) -> tuple[str, Callable[[Estimate], float]]:
    if all(e.cost is not None for e in estimates):
        return "cost", lambda e: e.cost if e.cost is not None else math.inf
    return "time to train", lambda e: e.days


def within_spread(best: Estimate, other: Estimate, paired_pts: float) -> bool:
    """True when two fabrics' MFU differ by no more than the paired error bar (issue 18).

    ``paired_pts`` is the calibration's error on a *difference* between fabrics on one workload
    (calibration.paired_spread): the compute error is common to both and cancels, so it is not
    the absolute ± on each MFU.
    """
    return abs(best.mfu - other.mfu) * 100.0 <= paired_pts + 1e-9


def paired_text(best: Estimate, other: Estimate, paired_pts: float) -> str:
    """'ib-hdr-sharp ahead by 1.9 ± 2.0 pts (paired)': the gap with the error of a difference."""
    return f"{best.fabric} ahead by {abs(best.mfu - other.mfu) * 100:.1f} ± {paired_pts:.1f} pts (paired)"


def tied_with(estimates: list[Estimate], paired_pts: float = 0.0) -> list[str]:
    """Fabrics tied with the best: within TIE_TOLERANCE on the metric, or within the paired bar."""
    _, key = _metric(estimates)
    ranked = sorted(estimates, key=key)
    return [
        e.fabric
        for e in ranked[1:]
        if is_tie(key(e) / key(ranked[0]) - 1.0) or within_spread(ranked[0], e, paired_pts)
    ]


def recommend(estimates: list[Estimate], paired_pts: float = 0.0) -> tuple[str, list[str]]:
    """Pick the cheapest fabric (or the fastest when no price is known) and say why, term by term.

    ``paired_pts`` is the calibration's error on an MFU difference between two fabrics (compute
    error cancelled): a runner-up whose MFU is within it is a tie, because the model cannot tell
    the two apart (issue 18).
    """
    if not estimates:
        raise AdviseError("nothing to compare")
    metric, key = _metric(estimates)
    ranked = sorted(estimates, key=key)
    best = ranked[0]
    reasons: list[str] = []
    if len(ranked) == 1:
        return best.fabric, [f"only {best.fabric} was compared"]
    runner = ranked[1]
    margin = key(runner) / key(best) - 1.0
    paired = paired_text(best, runner, paired_pts)
    if is_tie(margin):
        reasons.append(
            f"{best.fabric} and {runner.fabric} are within {margin:.2%} on {metric} (tie below "
            f"{TIE_TOLERANCE:.0%}): decide on price per port, operations and reliability, not utilisation"
        )
    elif within_spread(best, runner, paired_pts):
        reasons.append(
            f"tie: {paired} over {runner.fabric} ({margin:.1%} on {metric}); the gap is inside the "
            "error of a fabric difference: the model cannot separate them; decide on price per "
            "port, operations and reliability"
        )
    else:
        reasons.append(f"{best.fabric} is {margin:.1%} better on {metric} than {runner.fabric}: {paired}")
    for other in ranked[1:]:
        reasons.append(_why(best, other))
    tail_terms = ("straggler", "hiccups")
    assumed_tail = [e.fabric for e in ranked[:2] if e.tail_source == "assumed"]
    if assumed_tail and any(t in reasons[1] for t in tail_terms):
        measured = [e.fabric for e in ranked[:2] if e.tail_source != "assumed"]
        reasons.append(
            f"the straggler/ECMP inputs of {', '.join(assumed_tail)} are assumptions [A] "
            "(no public per-fabric jitter data, analytics §9)"
            + (f"; those of {', '.join(measured)} are measured" if measured else "")
            + ": measure with verify/watch or probe and pass --from-telemetry, or vary them with --set"
        )
    if any(e.dp_algo.startswith("sharp") for e in estimates):
        reasons.append(
            "SHARP sends each gradient byte once per NIC instead of 2(N-1)/N times; it does not help "
            "reduce-scatter/all-gather, pipeline p2p or MoE all-to-all"
        )
    return best.fabric, reasons


def _why(best: Estimate, other: Estimate) -> str:
    terms = {
        "DP all-reduce (exposed)": other.dp_exposed - best.dp_exposed,
        "pipeline p2p": other.pp_exposed - best.pp_exposed,
        "MoE all-to-all": other.moe_exposed - best.moe_exposed,
        "straggler (E[max] of jitter)": other.straggler - best.straggler,
        "hiccups": other.hiccup - best.hiccup,
        "TP": other.tp_comm - best.tp_comm,
    }
    top = sorted(terms.items(), key=lambda kv: -abs(kv[1]))[:2]
    parts = [f"{name} {delta * 1e3:+.0f} ms" for name, delta in top if abs(delta) >= 5e-4]
    detail = ", ".join(parts) if parts else "no term differs by 0.5 ms"
    return (
        f"vs {other.fabric}: step {best.step:.2f} s vs {other.step:.2f} s "
        f"(MFU {best.mfu:.1%} vs {other.mfu:.1%}); largest differences ({other.fabric} minus "
        f"{best.fabric}): {detail}"
    )


def band(n: int) -> str:
    """The seed article's scale bands: up to 128, 128-512 (inclusive), above 512."""
    if n <= 128:
        return "<=128"
    if n <= 512:
        return "128-512"
    return "512+"


@dataclass(slots=True)
class SweepRow:
    gpus: int
    band: str
    estimates: list[Estimate]
    winner: str
    margin: float
    metric: str
    tie: bool = False  # margin below TIE_TOLERANCE or MFU gap inside the paired error bar
    gap_pts: float = 0.0  # MFU points between the winner and the runner-up
    paired_pts: float = 0.0  # the error bar the gap was held against (calibration.paired_spread)


def sweep(
    w: Workload,
    fabrics: list[FabricProfile],
    scales: list[int],
    *,
    knobs: Knobs | None = None,
    telemetry: dict[str, Telemetry] | None = None,
    port_costs: dict[str, float] | None = None,
    paired_pts: float = 0.0,
) -> list[SweepRow]:
    """Run the model at each scale; the winner and margin per scale are computed, never tabulated."""
    rows: list[SweepRow] = []
    for n in scales:
        wn = with_gpus(w, n)
        ests = [
            estimate(wn, f, knobs, (telemetry or {}).get(f.name), (port_costs or {}).get(f.name))
            for f in fabrics
        ]
        winner, _ = recommend(ests)
        metric, key = _metric(ests)
        ranked = sorted(ests, key=key)
        margin = key(ranked[1]) / key(ranked[0]) - 1.0 if len(ranked) > 1 else 0.0
        gap = abs(ranked[0].mfu - ranked[1].mfu) * 100.0 if len(ranked) > 1 else 0.0
        tie = len(ranked) > 1 and (is_tie(margin) or within_spread(ranked[0], ranked[1], paired_pts))
        rows.append(
            SweepRow(
                n, band(n), ests, winner, margin, "cost" if metric == "cost" else "days", tie, gap, paired_pts
            )
        )
    return rows


def band_summary(rows: list[SweepRow]) -> dict[str, str]:
    """Per band: which fabric won at which scales (ties named as such)."""
    out: dict[str, str] = {}
    for name in ("<=128", "128-512", "512+"):
        inside = [r for r in rows if r.band == name]
        if not inside:
            continue
        parts = []
        for r in inside:
            gap = f"{r.gap_pts:.1f} ± {r.paired_pts:.1f} pts paired"
            label = f"tie ({r.winner} by {r.margin:.2%}, {gap})" if r.tie else f"{r.winner} ({gap})"
            parts.append(f"{r.gpus}: {label}")
        winners = {r.winner for r in inside if not r.tie}
        head = winners.pop() if len(winners) == 1 else ("mixed" if winners else "tie")
        out[name] = f"{head} — " + "; ".join(parts)
    return out


def with_gpus(w: Workload, n: int) -> Workload:
    """The same workload on n GPUs (the sweep's one changing input)."""
    return replace(w, gpus=n)


FABRIC_FIELDS = (
    "nic_bw",
    "wire_eff",
    "e2e_latency",
    "sharp_traffic",
    "sharp_eff",
    "sharp_share",
    "jitter_cv",
    "ecmp_collision_p",
    "ecmp_slowdown",
    "pause_fraction",
    "incident_rate",
    "port_cost",
)
KNOB_FIELDS = (
    "overlap_eff",
    "moe_overlap",
    "compute_jitter_cv",
    "bucket_params",
    "restart_hours",
    "ckpt_interval_hours",
)


def apply_overrides(
    profiles: list[FabricProfile], knobs: Knobs, items: list[str]
) -> tuple[list[FabricProfile], Knobs]:
    """``--set FABRIC.FIELD=V`` (FABRIC a profile, ``ib``, ``roce`` or ``all``) or ``model.KNOB=V``."""
    for item in items:
        target, _, rest = item.partition(".")
        key, eq, raw = rest.partition("=")
        try:
            value = float(raw)
        except ValueError:
            eq = ""
        if not eq or not key:
            raise AdviseError(f"--set expects FABRIC.FIELD=NUMBER or model.KNOB=NUMBER, got {item!r}")
        if target == "model":
            if key not in KNOB_FIELDS:
                raise AdviseError(f"--set model.{key}: unknown knob; known: {', '.join(KNOB_FIELDS)}")
            knobs = replace(knobs, **{key: value})  # type: ignore[arg-type]
            continue
        if key not in FABRIC_FIELDS:
            raise AdviseError(f"--set {target}.{key}: unknown field; known: {', '.join(FABRIC_FIELDS)}")
        hit = [i for i, p in enumerate(profiles) if target in ("all", p.name, p.family)]
        if not hit:
            raise AdviseError(f"--set {item!r}: {target!r} is not a compared fabric, 'ib', 'roce' or 'all'")
        for i in hit:
            profiles[i] = profiles[i].with_values(f"--set {item}", **{key: value})
    return profiles, knobs
