"""What checks and analyzers speak: findings, results, checks, the evaluation context, and the analyzer
registry. Its own module so that the analyzers (``analyzers.py``, ``storm.py``) and the engine that
imports them both build on it, with no import running back up (the engine lists its analyzers).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Host, Switch
from fabriccfg.render.derive import BufferThresholds, buffer_thresholds
from fabriccfg.telemetry.counters import compute_rates
from fabriccfg.telemetry.model import COUNTER_KINDS, Rate, Sample, SampleKey, Snapshot
from fabriccfg.telemetry.shard import in_shard
from fabriccfg.verify import expr as ex

Severity = Literal["ok", "warning", "critical", "unknown"]


SEVERITIES: tuple[Severity, ...] = ("ok", "warning", "critical", "unknown")


EXIT_CODES: dict[str, int] = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}


RANK: dict[str, int] = {"ok": 0, "unknown": 1, "warning": 2, "critical": 3}


CheckState = Literal["ok", "warning", "critical", "unknown", "skipped"]


OPS = (">=", "<=", "==", "!=", ">", "<")


class CheckError(ValueError):
    """A check file is invalid (message names the file; safe to print)."""


def worst(severities: Iterable[str]) -> Severity:
    out: Severity = "ok"
    for s in severities:
        if RANK.get(s, 0) > RANK[out]:
            out = s  # type: ignore[assignment]
    return out


def fmt_number(v: Any) -> str:
    """Readable numbers for messages: 205109.7 -> '205,110', 0.29961 -> '0.2996'."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return str(v)
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


# --------------------------------------------------------------------------- findings and results
@dataclass
class Finding:
    """One problem at one place: what a person, CI or an alert needs to act on."""

    check: str
    severity: Severity
    device: str | None = None
    port: str | None = None
    priority: int | None = None
    value: Any = None
    threshold: str | None = None
    hint: str = ""
    message: str = ""
    origin: str | None = None
    path: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def where(self) -> str:
        return where(self.device, self.port, self.priority)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "check": self.check, "severity": self.severity, "device": self.device, "port": self.port,
            "priority": self.priority, "value": _jsonable(self.value), "threshold": self.threshold,
            "hint": self.hint, "message": self.message,
        }
        if self.origin is not None:
            d["origin"] = self.origin
            d["path"] = list(self.path)
        if self.details:
            d["details"] = {k: _jsonable(v) for k, v in self.details.items()}
        return d


def where(device: str | None, port: str | None = None, priority: int | None = None) -> str:
    """'leaf-r0:swp3 prio 3' (the name of a scope in tables and JUnit test cases)."""
    out = device or "fabric"
    if port:
        out += f":{port}"
    if priority is not None:
        out += f" prio {priority}"
    return out


def _jsonable(v: Any) -> Any:
    if isinstance(v, float):
        return round(v, 6)
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return v


@dataclass
class CheckResult:
    """How one check went: its state, how many scopes it looked at, why it could not run."""

    check: str
    state: CheckState
    scopes: int = 0
    nodata: int = 0
    message: str = ""
    findings: list[Finding] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    """Scopes evaluated without a finding (JUnit passing test cases)."""

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.check, "state": self.state, "scopes": self.scopes, "nodata": self.nodata,
                "message": self.message}


@dataclass
class Report:
    status: Severity
    findings: list[Finding]
    results: list[CheckResult]
    points: int = 0
    interval_s: float | None = None
    devices: int = 0
    errors: dict[str, list[str]] = field(default_factory=dict)
    elapsed_s: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """Things the operator chose that weaken the result (e.g. ``--insecure-host-keys``), recorded."""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status.upper(),
            "exit_code": self.exit_code,
            "findings": [f.to_dict() for f in self.findings],
            "checks": [r.to_dict() for r in self.results],
            "points": self.points,
            "interval_s": self.interval_s,
            "devices": self.devices,
            "errors": {d: list(m) for d, m in self.errors.items()},
            "elapsed_s": round(self.elapsed_s, 3),
            "warnings": list(self.warnings),
        }


# --------------------------------------------------------------------------- check specs
@dataclass(frozen=True)
class Condition:
    expr: ex.Expr
    threshold: str


@dataclass(frozen=True)
class Scope:
    technology: frozenset[str] | None = None
    kinds: frozenset[str] | None = None
    platforms: frozenset[str] | None = None
    devices: re.Pattern[str] | None = None
    ports: re.Pattern[str] | None = None
    cabled: bool = False
    priority: str | int | None = None
    level: Literal["port", "device"] = "port"


@dataclass(frozen=True)
class Check:
    id: str
    description: str
    severity: Severity
    hint: str
    scope: Scope
    source: str
    value: ex.Expr | None = None
    when: ex.Expr | None = None
    warn: Condition | None = None
    crit: Condition | None = None
    for_points: int = 1
    unit: str = ""
    analyzer: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    enabled: bool = True


# --------------------------------------------------------------------------- evaluation context
@dataclass
class Point:
    """One evaluation point: a snapshot and the rates against the one before it."""

    snapshot: Snapshot
    rates: dict[SampleKey, Rate]
    by_port: dict[tuple[str, str | None, str], list[Sample]]
    interval_s: float | None
    by_metric: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict, repr=False)
    """metric -> (device, port) pairs holding it; filled on first use (:func:`metric_index`)."""
    verdicts: dict[tuple[int, str, str | None, int], Verdict] = field(default_factory=dict, repr=False,
                                                                      compare=False)
    """What checks with a ``for:`` window of 2+ points found at this point while it was the newest, per
    (check, device, port, number of points): the next rounds read them back instead of evaluating the
    point again (the engine's cache; the watcher keeps them on the newest point only)."""


Verdict = tuple[Any, Any, Any, Any, frozenset[str], bool]
"""(value, guard, critical, warning, saturated counters, a counter without a baseline) of one point."""


def metric_index(point: Point) -> dict[str, list[tuple[str, str | None]]]:
    """``point.by_metric``, built once per point: each check looks up its metrics' ports instead of
    walking every (device, port, metric) of the round (~20 checks x 900,000 keys at 2,000 devices)."""
    if not point.by_metric and point.by_port:
        idx = point.by_metric
        for device, port, metric in point.by_port:
            idx.setdefault(metric, []).append((device, port))
    return point.by_metric


def _index(snapshot: Snapshot) -> dict[tuple[str, str | None, str], list[Sample]]:
    out: dict[tuple[str, str | None, str], list[Sample]] = {}
    for rows in snapshot.samples.values():
        for s in rows:
            k = s[:3]  # (device, port, metric), sliced in C
            got = out.get(k)
            if got is None:
                out[k] = [s]
            else:
                got.append(s)
    return out


@dataclass
class Context:
    """Everything a check or an analyzer may look at."""

    fabric: Fabric
    snapshots: list[Snapshot]
    running_configs: dict[str, dict[str, str]] | None = None
    options: dict[str, Any] = field(default_factory=dict)
    points: list[Point] = field(default_factory=list)
    metrics: frozenset[str] | None = None
    """Counters to compute rates for (None: all); see :func:`needed_metrics`."""
    _scope_env: dict[tuple[str, str | None], dict[str, Any]] = field(default_factory=dict, repr=False,
                                                                     compare=False)
    _lossless: dict[str, int | None] = field(default_factory=dict, repr=False, compare=False)

    def scope_env(self, device: str, port: str | None) -> dict[str, Any]:
        """What a check's expression may name about one (device, port), from the intent: worked out
        once per round, not once per check (20 checks share each port)."""
        got = self._scope_env.get((device, port))
        if got is None:
            speed = self.intended_speed_gbps(device, port)
            dev = self.fabric.devices.get(device)
            thr = self.buffer_thresholds(device, port)
            got = self._scope_env[(device, port)] = {
                "device": device, "port": port, "intended_speed_mbps": speed * 1000 if speed else None,
                "link_bps": speed * 1e9 if speed else None, "kind": self.kind(device),
                "platform": dev.platform if dev else None,
                "ecn_kmin_bytes": thr.kmin_bytes if thr else None,
                "ecn_kmax_bytes": thr.kmax_bytes if thr else None,
                "headroom_bytes": thr.headroom_bytes if thr else None}
        return got

    def __post_init__(self) -> None:
        if not self.points:
            self.points = build_points(self.snapshots, self.metrics)

    @property
    def latest(self) -> Snapshot:
        return self.snapshots[-1]

    def polls(self, device: str) -> bool:
        """Whether this round polls ``device``: ``watch --shard`` puts its shard in ``options``."""
        return in_shard(device, self.options.get("shard"))

    def kind(self, device: str) -> str | None:
        dev = self.fabric.devices.get(device)
        if dev is None:
            return None
        try:
            return catalog.info(dev.platform).kind
        except KeyError:
            return None

    def lossless_priority(self, device: str) -> int | None:
        if device in self._lossless:
            return self._lossless[device]
        got = self._lossless[device] = self._lossless_priority(device)
        return got

    def _lossless_priority(self, device: str) -> int | None:
        roce = self.fabric.roce
        if roce is None or roce.mode != "lossless":
            return None
        dev = self.fabric.devices.get(device)
        if isinstance(dev, Switch) and dev.qos is not None and dev.qos.roce_priority is not None:
            return dev.qos.roce_priority
        return roce.roce_priority

    def intended_speed_gbps(self, device: str, port: str | None) -> int | None:
        """Link speed, else NIC speed, else the switch's port speed, else the fabric default."""
        if port is None:
            return None
        link = self.fabric.link_by_end.get((device, port))
        if link is not None and link.speed:
            return link.speed
        dev = self.fabric.devices.get(device)
        if isinstance(dev, Host):
            for nic in dev.nics:
                if port in (nic.name, nic.netdev) and nic.speed:
                    return nic.speed
        if isinstance(dev, Switch):
            mode = dev.breakouts.get(port)
            parsed = catalog.parse_breakout(mode) if mode else None
            if parsed:
                return parsed[1]
            if dev.port_speed:
                return dev.port_speed
        return self.fabric.fabric.link_speed

    def buffer_thresholds(self, device: str, port: str | None) -> BufferThresholds | None:
        """ECN Kmin/Kmax and PFC headroom the render set on a switch port (None elsewhere): the
        watermark checks compare with the same numbers the configs carry."""
        dev = self.fabric.devices.get(device)
        if port is None or not isinstance(dev, Switch) or self.fabric.roce is None:
            return None
        return buffer_thresholds(self.fabric, dev).get(port)

    def rate(self, key: SampleKey, point: int = -1) -> Rate | None:
        return self.points[point].rates.get(key) if self.points else None

    def samples(self, metric: str, point: int = -1) -> list[Sample]:
        return self.points[point].snapshot.select(metric) if self.points else []


STORM_METRICS = frozenset({"pfc_rx_pause", "pfc_rx_pause_duration", "pfc_tx_pause"})


def needed_metrics(checks: Sequence[Check]) -> frozenset[str]:
    """Counters the checks read (plus what storm tracing reads): rates of the others are not computed."""
    out: set[str] = set(STORM_METRICS)
    for c in checks:
        for e in (c.value, c.when, c.warn.expr if c.warn else None, c.crit.expr if c.crit else None):
            if e is not None:
                out |= e.metrics
    return frozenset(out)


def _only(snap: Snapshot, metrics: frozenset[str]) -> Snapshot:
    """``snap`` without the counters nobody reads (states and info stay: analyzers read them)."""
    rows = {d: [s for s in v if s.metric in metrics or s.kind not in COUNTER_KINDS]
            for d, v in snap.samples.items()}
    return Snapshot(ts=snap.ts, samples=rows, uptime=snap.uptime, errors=snap.errors,
                    device_ts=snap.device_ts, metric_ts=snap.metric_ts)


def build_points(snapshots: Sequence[Snapshot], metrics: frozenset[str] | None = None, *,
                 strip: bool = True) -> list[Point]:
    """Evaluation points of consecutive snapshots. ``metrics``: the counters to compute rates of (None:
    all); ``strip``: also leave the other counters out of the points (``watch`` keeps them: it exports
    them)."""
    out: list[Point] = []
    if not snapshots:
        return out
    if metrics is not None and strip:
        snapshots = [_only(s, metrics) for s in snapshots]
    if len(snapshots) == 1:
        s = snapshots[0]
        return [Point(s, compute_rates(None, s, metrics), _index(s), None)]
    for prev, cur in itertools.pairwise(snapshots):
        out.append(Point(cur, compute_rates(prev, cur, metrics), _index(cur), cur.ts - prev.ts))
    return out


# --------------------------------------------------------------------------- analyzers
Analyzer = Callable[[Check, Context], "list[Finding] | CheckResult"]


ANALYZERS: dict[str, Analyzer] = {}


RATE_ANALYZERS: set[str] = set()
"""Analyzers that read counter rates: UNKNOWN ("no baseline yet") while no point has a previous sample."""


NO_BASELINE_HINT = ("Rates need a previous sample: the next watch round, verify --samples 2, or a "
                    "--state-dir that keeps the previous run's snapshot gives one.")


def analyzer(name: str, *, needs_rates: bool = False) -> Callable[[Analyzer], Analyzer]:
    """Register a code check under ``name`` (referenced from a check file's ``analyzer:``)."""

    def deco(fn: Analyzer) -> Analyzer:
        ANALYZERS[name] = fn
        if needs_rates:
            RATE_ANALYZERS.add(name)
        return fn

    return deco


def has_baseline(ctx: Context) -> bool:
    """Some evaluation point has a previous snapshot to compute rates against."""
    return any(p.interval_s is not None for p in ctx.points)


def no_baseline_finding(check: Check, devices: Sequence[str], scopes: int, total: int) -> Finding:
    """The UNKNOWN finding of a rate check that could not compute its rates (first sample)."""
    devs = sorted(set(devices))
    lack = (f"{scopes} of {total} scope(s) on {len(devs)} device(s) have no previous sample" if total
            else "no previous snapshot exists")
    return Finding(check.id, "unknown", devs[0] if len(devs) == 1 else None, hint=NO_BASELINE_HINT,
                   message=f"no baseline yet: {check.description or check.id} needs a rate and {lack}",
                   details={"no_baseline": True, "devices": devs[:20]})
