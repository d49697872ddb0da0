"""Telemetry input of the advise model: what verify findings, probe results and raw stats say about
pause fraction, hiccups and rank jitter. The check ids here are verify's (``tests/advise`` holds them
to the loaded checks).
"""

from __future__ import annotations

import json
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from typing import Any

from fabriccfg.advise import sources as src
from fabriccfg.advise.inputs import AdviseError
from fabriccfg.advise.sources import FabricProfile


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Measured tail inputs for one fabric, replacing the assumed [A] defaults."""

    source: str
    step_jitter_mean: float | None = None  # seconds
    step_jitter_std: float | None = None  # seconds, per-rank step-time standard deviation
    pause_fraction: float | None = None
    hiccup_p: float = 0.0
    hiccup_delay: float = 0.0  # seconds
    distribution: str | None = None  # normal (default), exponential or lognormal
    fabric_values: dict[str, float] = field(default_factory=dict)
    """Measured profile inputs (``fabriccfg probe``): e2e_latency, wire_eff, jitter_cv."""


# verify/watch finding -> effect, by the finding's severity ("warning" / "critical"; "unknown" is
# ignored). The magnitudes are assumptions [A]: they fix the direction and rough size of the effect.
# pause: the fraction of time lossless queues are paused (a link paused f of the time delivers (1-f)
# of its bandwidth and a collective runs at its slowest link); hiccup: (p per rank per step, delay s).
FINDING_EFFECTS: dict[str, dict[str, tuple[float, float, float]]] = {
    # check id: {severity: (pause_fraction, hiccup_p, hiccup_delay_s)}
    "pfc-pause-storm": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 1e-3, 0.1)},
    "pfc-storm-origin": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 1e-3, 0.1)},
    "pfc-watchdog-fired": {"warning": (0.0, 1e-4, 0.1), "critical": (0.0, 1e-3, 0.1)},
    "ecn-congestion": {"warning": (0.005, 0.0, 0.0), "critical": (0.02, 0.0, 0.0)},
    "cnp-rate": {"warning": (0.005, 0.0, 0.0), "critical": (0.02, 0.0, 0.0)},
    "lossless-queue-drops": {"warning": (0.0, 1e-4, 0.05), "critical": (0.0, 1e-3, 0.05)},
    "ib-xmit-wait": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 0.0, 0.0)},
    "ib-link-downed": {"warning": (0.0, 1e-4, 1.0), "critical": (0.0, 1e-3, 1.0)},
    "ib-symbol-errors": {"warning": (0.0, 1e-5, 0.05), "critical": (0.0, 1e-4, 0.05)},
    "link-errors": {"warning": (0.0, 1e-5, 0.05), "critical": (0.0, 1e-4, 0.05)},
}
# Checks whose finding ``value`` is itself a share of time the link could not send (verify's
# checks/pfc-pause-storm.yaml "of the time paused", checks/ib-xmit-wait.yaml "of the time stalled"):
# that measured value replaces the severity default as the pause fraction.
VALUE_IS_PAUSE = frozenset({"pfc-pause-storm", "ib-xmit-wait"})
_CHECK_FAMILY = {
    "pfc-pause-storm": "roce",
    "pfc-storm-origin": "roce",
    "pfc-watchdog-fired": "roce",
    "ecn-congestion": "roce",
    "cnp-rate": "roce",
    "lossless-queue-drops": "roce",
    "ib-xmit-wait": "ib",
    "ib-link-downed": "ib",
    "ib-symbol-errors": "ib",
}


def load_telemetry(path: Path, fabrics: list[FabricProfile]) -> tuple[dict[str, Telemetry], list[str]]:
    """Read a telemetry JSON (own schema or ``verify --format json``) into per-fabric Telemetry.

    Own schema (all keys optional except one measurement)::

        {"source": "fabriccfg watch", "fabric": "roce-400g" | "roce" | "ib",
         "step_jitter_ms": {"mean": 3.0, "std": 12.0, "distribution": "normal"},
         "pause_fraction": 0.002,
         "hiccup": {"p": 1e-4, "delay_ms": 200}}

    ``fabric`` names a profile or a family; absent, the numbers apply to every compared fabric.
    verify output ``{"status": ..., "findings": [{"check": id, "severity": ...}, ...]}`` is mapped
    through FINDING_EFFECTS (worst severity per check; the largest pause share wins, hiccup
    probabilities add up) onto the fabrics of the check's family (PFC/ECN/CNP -> RoCE, ib-* -> IB,
    others -> all). pfc-pause-storm and ib-xmit-wait carry the measured share in ``value``.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdviseError(f"cannot read telemetry file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise AdviseError(f"telemetry file {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(doc, dict):
        raise AdviseError(f"telemetry file {path}: expected a JSON object")
    if doc.get("tool") == "fabriccfg probe":
        return _from_probe(doc, fabrics, path)
    if "findings" in doc:
        return _from_verify(doc, fabrics, path)
    return _from_stats(doc, fabrics, path)


def _num(doc: dict[str, Any], key: str, path: Path, lo: float = 0.0, hi: float = math.inf) -> float | None:
    val = doc.get(key)
    if val is None:
        return None
    if isinstance(val, bool) or not isinstance(val, int | float) or not lo <= val <= hi:
        raise AdviseError(f"telemetry file {path}: {key!r} must be a number in [{lo:g}, {hi:g}], got {val!r}")
    return float(val)


def _targets(spec: str | None, fabrics: list[FabricProfile]) -> list[FabricProfile]:
    if spec is None:
        return list(fabrics)
    return [f for f in fabrics if spec in (f.name, f.family)]


def _from_stats(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    source = str(doc.get("source", "telemetry"))
    jitter = doc.get("step_jitter_ms")
    mean = std = None
    dist = None
    if jitter is not None:
        if not isinstance(jitter, dict):
            raise AdviseError(f"telemetry file {path}: 'step_jitter_ms' must be an object with mean and std")
        mean = _num(jitter, "mean", path)
        std = _num(jitter, "std", path)
        if std is None:
            raise AdviseError(f"telemetry file {path}: 'step_jitter_ms' needs 'std'")
        dist = jitter.get("distribution")
        if dist is not None and dist not in src.JITTER_DISTRIBUTIONS:
            raise AdviseError(
                f"telemetry file {path}: distribution {dist!r} is not one of "
                f"{', '.join(src.JITTER_DISTRIBUTIONS)}"
            )
        if dist == "lognormal" and not mean:
            raise AdviseError(f"telemetry file {path}: a lognormal distribution needs a positive 'mean'")
    pause = _num(doc, "pause_fraction", path, 0.0, 0.99)
    hp = hd = 0.0
    if isinstance(doc.get("hiccup"), dict):
        hp = _num(doc["hiccup"], "p", path, 0.0, 1.0) or 0.0
        hd = (_num(doc["hiccup"], "delay_ms", path) or 0.0) / 1e3
    if std is None and pause is None and not hp:
        raise AdviseError(
            f"telemetry file {path}: no measurement found (expected step_jitter_ms, pause_fraction, "
            "hiccup, or verify's findings)"
        )
    spec = doc.get("fabric")
    targets = _targets(None if spec is None else str(spec), fabrics)
    if not targets:
        raise AdviseError(f"telemetry file {path}: fabric {spec!r} is not among the compared fabrics")
    tel = Telemetry(
        source=source,
        step_jitter_mean=None if mean is None else mean / 1e3,
        step_jitter_std=None if std is None else std / 1e3,
        pause_fraction=pause,
        hiccup_p=hp,
        hiccup_delay=hd,
        distribution=None if dist is None else str(dist),
    )
    names = ", ".join(f.name for f in targets)
    return {f.name: tel for f in targets}, [f"telemetry from {source} applied to {names}"]


def _fraction(value: object) -> float | None:
    """A number in [0, 1], else None (verify values may be null, counts or strings)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _from_verify(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    findings = doc.get("findings")
    if not isinstance(findings, list):
        raise AdviseError(f"telemetry file {path}: 'findings' must be a list")
    worst: dict[str, str] = {}
    measured: dict[str, float] = {}  # check -> largest measured share of time paused/stalled
    rank = {"warning": 1, "critical": 2}
    for item in findings:
        if not isinstance(item, dict):
            continue
        check = str(item.get("check") or item.get("id") or item.get("rule") or "")
        sev = str(item.get("severity", "warning")).lower()
        if check not in FINDING_EFFECTS or sev not in rank:
            continue  # unknown checks, and "unknown"/"ok" severities, carry no penalty
        if rank[sev] > rank.get(worst.get(check, ""), 0):
            worst[check] = sev
        share = _fraction(item.get("value"))
        if check in VALUE_IS_PAUSE and share is not None:
            measured[check] = max(measured.get(check, 0.0), share)
    source = f"fabriccfg verify (status {doc.get('status', '?')})"
    per_fabric: dict[str, list[tuple[float, float, float]]] = {f.name: [] for f in fabrics}
    notes: list[str] = []
    for check, sev in sorted(worst.items()):
        pause, hp, hd = FINDING_EFFECTS[check][sev]
        how = "by severity"
        if check in measured:
            pause, how = measured[check], "measured value"
        effect = (pause, hp, hd)
        family = _CHECK_FAMILY.get(check)
        hit = [f for f in fabrics if family is None or f.family == family]
        for f in hit:
            per_fabric[f.name].append(effect)
        notes.append(
            f"{check} ({sev}) -> pause {pause:g} ({how}), hiccup p {hp:g} x {hd * 1e3:g} ms "
            f"on {', '.join(f.name for f in hit) or 'no compared fabric'}"
        )
    if not worst:
        notes.append(f"{source}: no finding that maps to a penalty; defaults kept")
        return {}, notes
    notes.append(
        "a verify report is a snapshot: the estimate assumes that state lasts the whole run "
        "(pause: the largest share; hiccups add up)"
    )
    out: dict[str, Telemetry] = {}
    for name, effects in per_fabric.items():
        if not effects:
            continue
        pause = min(0.99, max(e[0] for e in effects))  # storm, origin, ECN see the same links
        hp = min(1.0, sum(e[1] for e in effects))
        hd = max((e[2] for e in effects if e[1] > 0), default=0.0)
        out[name] = Telemetry(source=source, pause_fraction=pause, hiccup_p=hp, hiccup_delay=hd)
    return out, notes


PROBE_Z999 = NormalDist().inv_cdf(0.999)
"""Phi^-1(0.999) = 3.090: the 99.9th percentile of N(0,1), for the lognormal fit through p50 and p99.9."""


def probe_sigma_ln(p50: float, p999: float) -> float:
    """Lognormal shape through a median and a 99.9th percentile: ln(p99.9 / p50) / Phi^-1(0.999)."""
    if p50 <= 0 or p999 < p50:
        return 0.0
    return math.log(p999 / p50) / PROBE_Z999


def _from_probe(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    """``fabriccfg probe --format json``: measured latency, jitter and busbw for the probed fabric.

    - ``e2e_latency`` (us) := median p50 of the pairs that cross a spine (all pairs when none does);
    - ``wire_eff`` := median over rails of the rail's lowest all_reduce_perf busbw / line rate
      (nccl-tests busbw is comparable to line rate for any rank count, PERFORMANCE.md);
    - ``jitter_cv`` := the per-rank fabric-time CV of the slowest path: per pair a lognormal is fitted
      through p50 and p99.9 (sigma_ln = ln(p99.9/p50) / Phi^-1(0.999)), the largest sigma_ln is
      kept (the step waits for the slowest rank, whose traffic crosses the worst path) and
      cv = sqrt(exp(sigma_ln^2) - 1) (lognormal moments). The straggler term then stays
      E[max of n ranks] of Normal(0, sqrt((cv_c T_comp)^2 + (cv T_fabric)^2)) (analytics §2.1, exact
      or Blom), so the change is attributable to the measured input alone. Treating the per-message
      tail as the per-step tail assumes the slow messages of a step are correlated (pause and queue
      build-up events are): an upper bound.
    """
    tech = str(doc.get("technology", ""))
    family = {"roce": "roce", "infiniband": "ib"}.get(tech)
    targets = [f for f in fabrics if f.family == family]
    if family is None or not targets:
        raise AdviseError(
            f"telemetry file {path}: the probe measured a {tech or 'unknown'} fabric; none of the compared "
            f"fabrics ({', '.join(f.name for f in fabrics)}) is of that family"
        )
    results = doc.get("results")
    if not isinstance(results, list):
        raise AdviseError(f"telemetry file {path}: 'results' must be a list")
    values: dict[str, float] = {}
    measured: list[str] = []
    lat = [r for r in results if isinstance(r, dict) and isinstance(r.get("latency_us"), dict)]
    shapes: list[tuple[float, str]] = []
    for r in lat:
        x = r["latency_us"]
        p50, p999 = x.get("typical"), x.get("p999")
        if isinstance(p50, int | float) and isinstance(p999, int | float):
            shapes.append((probe_sigma_ln(float(p50), float(p999)), str(r.get("pair", "?"))))
    if shapes:
        sigma, worst = max(shapes)
        values["jitter_cv"] = math.sqrt(math.expm1(sigma * sigma))
        crossing = [r for r in lat if r.get("kind") != "same-leaf"] or lat
        values["e2e_latency"] = statistics.median(float(r["latency_us"]["typical"]) for r in crossing)
        measured.append(
            f"jitter cv {values['jitter_cv']:.3f} (lognormal through p50/p99.9 of the slowest path {worst}, "
            f"sigma_ln {sigma:.3f})"
        )
        measured.append(f"e2e latency {values['e2e_latency']:.2f} us (median p50 of {len(crossing)} pairs)")
    rate = doc.get("line_rate_gbytes")
    rails: dict[int, float] = {}
    for r in results:
        bus = r.get("busbw_gbytes") if isinstance(r, dict) else None
        if isinstance(bus, int | float):
            rail = int(r.get("rail", 0))
            rails[rail] = min(rails.get(rail, math.inf), float(bus))
    if rails and isinstance(rate, int | float) and rate > 0:
        values["wire_eff"] = min(1.0, statistics.median(rails.values()) / float(rate))
        measured.append(
            f"wire efficiency {values['wire_eff']:.2f} (busbw/line rate, median of {len(rails)} rails)"
        )
    if not values:
        raise AdviseError(f"telemetry file {path}: the probe document has no latency or busbw result")
    source = f"fabriccfg probe of {doc.get('fabric', '?')} ({doc.get('status', '?')})"
    tel = Telemetry(source=source, fabric_values=values)
    names = ", ".join(f.name for f in targets)
    assumed = "compute jitter cv, ECMP collision probability, pause fraction, incident rate, hiccups"
    notes = [f"measured ({source}) on {names}: " + "; ".join(measured), f"still assumed [A]: {assumed}"]
    return {f.name: tel for f in targets}, notes
