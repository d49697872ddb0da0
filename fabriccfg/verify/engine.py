"""The check engine: declarative checks (YAML) evaluated over telemetry snapshots of the fabric.

A check file names what to compute, where, and when it is bad::

    id: ecn-congestion
    description: ECN-marked share of the lossless class's transmitted packets
    scope: {technology: [roce], kinds: [switch], cabled: true, priority: lossless}
    value: ratio(rate(ecn_marked), rate(tc_tx_pkts))
    warn: "> 0.01"
    crit: "> 0.2"
    for: 2
    hint: Sustained marking means incast or an undersized buffer ...

``value``/``when``/``warn``/``crit`` are expressions of :mod:`fabriccfg.verify.expr`. ``warn``/``crit``
may be a number (compared with ``op``, default ``>``), a string starting with a comparison
(``"> 0.05"``, applied to ``value``), a full boolean expression, or ``{expr: ..., show: ...}`` (an
expression with the text to show as the threshold). ``when`` is a guard: where it is
false the scope is OK. ``for: N`` asks for the condition on the last N sample points (all points when
fewer were taken). Checks that need code name an analyzer (``analyzer: pfc_storm_origin``); the YAML
still carries the id, severity and hint.

Severities follow Nagios: ok 0, warning 1, critical 2, unknown 3. The overall status is the worst
finding, ranked ok < unknown < warning < critical (an actionable problem outranks missing data).
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from fabriccfg import platforms
from fabriccfg.inventory.models import Fabric, Host, Switch
from fabriccfg.telemetry.model import COUNTER_KINDS, Rate, Sample, SampleKey, Snapshot, compute_rates
from fabriccfg.telemetry.shard import in_shard
from fabriccfg.verify import expr as ex

Severity = Literal["ok", "warning", "critical", "unknown"]
SEVERITIES: tuple[Severity, ...] = ("ok", "warning", "critical", "unknown")
EXIT_CODES: dict[str, int] = {"ok": 0, "warning": 1, "critical": 2, "unknown": 3}
RANK: dict[str, int] = {"ok": 0, "unknown": 1, "warning": 2, "critical": 3}
CheckState = Literal["ok", "warning", "critical", "unknown", "skipped"]

SHIPPED_CHECKS = Path(__file__).resolve().parent.parent / "data" / "checks"
ENV_NAMES = frozenset({
    "value", "interval_s", "link_bps", "intended_speed_mbps", "priority", "device", "port", "kind",
    "platform", "samples",
})
_OPS = (">=", "<=", "==", "!=", ">", "<")
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


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


def _set(raw: Any, what: str, src: str) -> frozenset[str] | None:
    if raw is None:
        return None
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise CheckError(f"{src}: scope.{what} must be a list of names")
    return frozenset(raw)


def _regex(raw: Any, what: str, src: str) -> re.Pattern[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise CheckError(f"{src}: scope.{what} must be a regular expression string")
    try:
        return re.compile(raw)
    except re.error as exc:
        raise CheckError(f"{src}: scope.{what}: {exc}") from None


def _condition(raw: Any, op: str, names: frozenset[str], src: str, what: str) -> Condition | None:
    if raw is None:
        return None
    if isinstance(raw, dict):  # {expr: ..., show: "== up"}: an expression with a readable threshold
        if set(raw) - {"expr", "show"} or "expr" not in raw:
            raise CheckError(f"{src}: {what} as a mapping takes 'expr' and optional 'show'")
        cond = _condition(raw["expr"], op, names, src, what)
        assert cond is not None
        return Condition(cond.expr, str(raw.get("show", cond.threshold)))
    try:
        if isinstance(raw, bool):
            raise CheckError(f"{src}: {what} must be a number or an expression")
        if isinstance(raw, int | float):
            return Condition(ex.parse(f"value {op} {raw!r}", names), f"{op} {raw}")
        if not isinstance(raw, str):
            raise CheckError(f"{src}: {what} must be a number or an expression")
        text = raw.strip()
        if text.startswith(_OPS):
            return Condition(ex.parse(f"value {text}", names), text)
        return Condition(ex.parse(text, names), text)
    except ex.ExprError as exc:
        raise CheckError(f"{src}: {what}: {exc}") from None


def parse_check(data: Any, src: str) -> Check:
    """Validate one check document (the YAML mapping)."""
    if not isinstance(data, dict):
        raise CheckError(f"{src}: a check file holds one mapping")
    known = {"id", "description", "severity", "hint", "scope", "value", "when", "warn", "crit", "op", "for",
             "unit", "analyzer", "params", "enabled"}
    extra = set(data) - known
    if extra:
        raise CheckError(f"{src}: unknown key(s) {', '.join(sorted(map(str, extra)))}")
    cid = data.get("id")
    if not isinstance(cid, str) or not _ID.match(cid):
        raise CheckError(f"{src}: 'id' must be lower-case letters, digits and dashes")
    severity = data.get("severity", "critical")
    if severity not in ("warning", "critical", "unknown"):
        raise CheckError(f"{src}: severity must be warning, critical or unknown")
    params = data.get("params") or {}
    if not isinstance(params, dict) or not all(isinstance(k, str) and k.isidentifier() for k in params):
        raise CheckError(f"{src}: params must map identifiers to constants")
    for k, v in params.items():
        if not isinstance(v, int | float | str | bool | list):
            raise CheckError(f"{src}: params.{k} must be a constant")
    names = ENV_NAMES | frozenset(params)
    sc = data.get("scope") or {}
    if not isinstance(sc, dict):
        raise CheckError(f"{src}: scope must be a mapping")
    sc_keys = {"technology", "kinds", "platforms", "devices", "ports", "cabled", "priority", "level"}
    sc_extra = set(sc) - sc_keys
    if sc_extra:
        raise CheckError(f"{src}: unknown scope key(s) {', '.join(sorted(map(str, sc_extra)))}")
    prio = sc.get("priority")
    if prio is not None and prio != "lossless" and not (isinstance(prio, int) and 0 <= prio <= 7):
        raise CheckError(f"{src}: scope.priority must be 'lossless' or 0-7")
    level = sc.get("level", "port")
    if level not in ("port", "device"):
        raise CheckError(f"{src}: scope.level must be port or device")
    scope = Scope(
        technology=_set(sc.get("technology"), "technology", src),
        kinds=_set(sc.get("kinds"), "kinds", src),
        platforms=_set(sc.get("platforms"), "platforms", src),
        devices=_regex(sc.get("devices"), "devices", src),
        ports=_regex(sc.get("ports"), "ports", src), cabled=bool(sc.get("cabled", False)), priority=prio,
        level=level,
    )
    analyzer = data.get("analyzer")
    for_points = data.get("for", 1)
    if not isinstance(for_points, int) or isinstance(for_points, bool) or not 1 <= for_points <= 1000:
        raise CheckError(f"{src}: 'for' is a count of consecutive sample points, 1-1000")
    op = data.get("op", ">")
    if op not in _OPS:
        raise CheckError(f"{src}: op must be one of {' '.join(_OPS)}")
    common: dict[str, Any] = {
        "id": cid, "description": str(data.get("description", "")), "severity": severity,
        "hint": str(data.get("hint", "")).strip(), "scope": scope, "source": src, "for_points": for_points,
        "unit": str(data.get("unit", "")), "params": params, "enabled": bool(data.get("enabled", True)),
    }
    if analyzer is not None:
        if not isinstance(analyzer, str) or analyzer not in ANALYZERS:
            raise CheckError(f"{src}: unknown analyzer {analyzer!r} (known: {', '.join(sorted(ANALYZERS))})")
        return Check(analyzer=analyzer, **common)
    if "value" not in data or ("warn" not in data and "crit" not in data):
        raise CheckError(f"{src}: a check needs 'value' and 'warn' and/or 'crit' (or an 'analyzer')")
    try:
        value = ex.parse(data["value"], names - {"value"})
        when = ex.parse(data["when"], names - {"value"}) if data.get("when") is not None else None
    except ex.ExprError as exc:
        raise CheckError(f"{src}: {exc}") from None
    return Check(value=value, when=when, warn=_condition(data.get("warn"), op, names, src, "warn"),
                 crit=_condition(data.get("crit"), op, names, src, "crit"), **common)


def load_checks(dirs: Sequence[Path] = (), *, shipped: bool = True) -> list[Check]:
    """The shipped checks plus those in ``dirs``; a user check with a shipped id replaces it."""
    by_id: dict[str, Check] = {}
    roots = ([SHIPPED_CHECKS] if shipped else []) + [Path(d) for d in dirs]
    for root in roots:
        if not root.is_dir():
            raise CheckError(f"{root}: not a directory of check files")
        for path in sorted([*root.glob("*.yaml"), *root.glob("*.yml")]):
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (OSError, yaml.YAMLError) as exc:
                raise CheckError(f"{path}: not readable YAML: {exc}") from None
            check = parse_check(data, str(path))
            by_id[check.id] = check
    return [c for c in by_id.values() if c.enabled]


# --------------------------------------------------------------------------- evaluation context
@dataclass
class Point:
    """One evaluation point: a snapshot and the rates against the one before it."""

    snapshot: Snapshot
    rates: dict[SampleKey, Rate]
    by_port: dict[tuple[str, str | None, str], list[Sample]]
    interval_s: float | None


def _index(snapshot: Snapshot) -> dict[tuple[str, str | None, str], list[Sample]]:
    out: dict[tuple[str, str | None, str], list[Sample]] = {}
    for s in snapshot:
        out.setdefault((s.device, s.port, s.metric), []).append(s)
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
            return platforms.info(dev.platform).kind
        except KeyError:
            return None

    def lossless_priority(self, device: str) -> int | None:
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
            parsed = platforms.base.parse_breakout(mode) if mode else None
            if parsed:
                return parsed[1]
            if dev.port_speed:
                return dev.port_speed
        return self.fabric.fabric.link_speed

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
                    device_ts=snap.device_ts)


def build_points(snapshots: Sequence[Snapshot], metrics: frozenset[str] | None = None) -> list[Point]:
    out: list[Point] = []
    if not snapshots:
        return out
    if metrics is not None:
        snapshots = [_only(s, metrics) for s in snapshots]
    if len(snapshots) == 1:
        s = snapshots[0]
        return [Point(s, compute_rates(None, s), _index(s), None)]
    for prev, cur in itertools.pairwise(snapshots):
        out.append(Point(cur, compute_rates(prev, cur), _index(cur), cur.ts - prev.ts))
    return out


class _ScopeSource(ex.MetricSource):
    """Metric functions bound to one (device, port, priority) at one point."""

    def __init__(self, point: Point, device: str, port: str | None, priority: int | None) -> None:
        self.point = point
        self.device = device
        self.port = port
        self.priority = priority
        self.saturated: set[str] = set()
        self.unbased: set[str] = set()
        """Counters read here that have no previous sample (no baseline for a rate yet)."""

    def _matching(self, name: str, overrides: Mapping[str, str]) -> list[Sample]:
        rows = self.point.by_port.get((self.device, self.port, name), [])
        out = []
        for s in rows:
            ok = True
            for k, v in s.labels:
                if k in overrides:
                    ok = overrides[k] == v
                elif k in ("prio", "tc") and self.priority is not None:
                    ok = v == str(self.priority)
                if not ok:
                    break
            if ok:
                out.append(s)
        return out

    def metric(self, func: str, name: str, overrides: Mapping[str, str]) -> Any:
        rows = self._matching(name, overrides)
        if not rows:
            return None
        if func == "value":
            if len(rows) == 1:
                return rows[0].value
            vals = [r.value for r in rows]
            return sum(v for v in vals if isinstance(v, int)) if all(isinstance(v, int) for v in vals) \
                else vals[0]
        total: float = 0
        for s in rows:
            r = self.point.rates.get(s.key)
            if r is None or r.value_per_s is None:
                if r is not None and r.status == "saturated":
                    self.saturated.add(name)
                if r is not None and r.status == "first":
                    self.unbased.add(name)
                return None
            if func == "delta":
                total += r.delta if r.delta is not None else 0
            else:
                total += r.value_per_s
        return total


def _device_ok(check: Check, ctx: Context, device: str) -> bool:
    sc = check.scope
    dev = ctx.fabric.devices.get(device)
    if dev is None:
        return False
    try:
        info = platforms.info(dev.platform)
    except KeyError:
        return False
    if sc.technology is not None and ctx.fabric.fabric.technology not in sc.technology:
        return False
    if sc.kinds is not None and info.kind not in sc.kinds:
        return False
    if sc.platforms is not None and dev.platform not in sc.platforms:
        return False
    return not (sc.devices is not None and not sc.devices.fullmatch(device))


def scopes_of(check: Check, ctx: Context) -> list[tuple[str, str | None]]:
    """(device, port) pairs the check applies to, from what the latest snapshot holds."""
    sc = check.scope
    if sc.technology is not None and ctx.fabric.fabric.technology not in sc.technology:
        return []
    metrics: set[str] = set()
    exprs = [check.value, check.when, check.warn.expr if check.warn else None,
             check.crit.expr if check.crit else None]
    for e in exprs:
        if e is not None:
            metrics |= e.metrics
    seen: dict[tuple[str, str | None], None] = {}
    latest = ctx.points[-1] if ctx.points else None
    if latest is None:
        return []
    for (device, port, metric) in latest.by_port:
        if metrics and metric not in metrics:
            continue
        if sc.level == "port":
            if port is None:
                continue
            if sc.ports is not None and not sc.ports.fullmatch(port):
                continue
            if sc.cabled and (device, port) not in ctx.fabric.neighbours:
                continue
            key: tuple[str, str | None] = (device, port)
        else:
            key = (device, None)
        if key not in seen and _device_ok(check, ctx, device):
            seen[key] = None
    return sorted(seen, key=lambda k: (k[0], k[1] or ""))


_LEVEL_RANK = {"ok": 0, "warning": 1, "critical": 2}


def _scope_priority(check: Check, ctx: Context, device: str) -> int | None:
    if check.scope.priority == "lossless":
        return ctx.lossless_priority(device)
    return check.scope.priority if isinstance(check.scope.priority, int) else None


def _evaluate_scope(check: Check, ctx: Context, device: str, port: str | None) -> Finding | str | None:
    """A finding, None (fine), "nodata", or "nobaseline" (a rate is needed and no previous sample exists).

    A scope whose outcome depends on a rate that has no baseline yet is never OK: a first sample
    cannot show a pause storm, so calling it OK would be a lie (it becomes UNKNOWN in :func:`run_check`).
    """
    priority = _scope_priority(check, ctx, device)
    if check.scope.priority == "lossless" and priority is None:
        return "nodata"
    speed = ctx.intended_speed_gbps(device, port)
    env: dict[str, Any] = dict(check.params)
    dev = ctx.fabric.devices.get(device)
    env.update(device=device, port=port, priority=priority, samples=len(ctx.points),
               intended_speed_mbps=speed * 1000 if speed else None, link_bps=speed * 1e9 if speed else None,
               kind=ctx.kind(device), platform=dev.platform if dev else None)
    levels: list[tuple[str, Any, str | None]] = []
    saturated: set[str] = set()
    unbased = False
    assert check.value is not None
    for pt in ctx.points:
        src = _ScopeSource(pt, device, port, priority)
        env["interval_s"] = pt.interval_s
        value = check.value.evaluate(env, src)
        env["value"] = value
        guard = check.when.evaluate(env, src) if check.when is not None else True
        crit = check.crit.expr.evaluate(env, src) if check.crit is not None and guard else None
        warn = check.warn.expr.evaluate(env, src) if check.warn is not None and guard else None
        saturated |= src.saturated
        if src.unbased and not (guard and (crit or warn)):
            # A counter read here has no previous sample: whatever did not fire was decided without
            # its rate (or from a coalesce() fallback), so this point has no verdict, never "ok".
            unbased = True
            continue
        if guard is None:
            continue
        if not guard:
            levels.append(("ok", value, None))
        elif crit:
            levels.append(("critical", value, check.crit.threshold if check.crit else None))
        elif warn:
            levels.append(("warning", value, check.warn.threshold if check.warn else None))
        elif crit is None and warn is None:
            continue
        else:
            levels.append(("ok", value, None))
    if not levels:
        if saturated:
            return Finding(check.id, "unknown", device, port, priority, None, None,
                           "Clear the saturated counter (perfquery -R) so rates can be computed again.",
                           f"counter(s) {', '.join(sorted(saturated))} saturated at their maximum: no rate")
        return "nobaseline" if unbased else "nodata"
    window = levels[-min(check.for_points, len(levels)):]
    level = min(window, key=lambda lv: _LEVEL_RANK[lv[0]])[0]
    if level == "ok":
        return None
    threshold = next((lv[2] for lv in reversed(window) if lv[0] == level), None)
    value = window[-1][1]
    unit = f" {check.unit}" if check.unit else ""
    shown = fmt_number(value)
    msg = f"{check.description or check.id}: {shown}{unit}"
    if threshold:
        numeric = threshold.startswith(_OPS)  # "> 0.5" takes the unit; a `show:` text does not
        msg += f" ({level}: {threshold}{unit if numeric else ''}"
        msg += f" for {len(window)} point(s))" if check.for_points > 1 else ")"
    return Finding(check.id, level, device, port, priority, value, threshold, check.hint, msg)  # type: ignore[arg-type]


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


def run_check(check: Check, ctx: Context) -> CheckResult:
    if check.analyzer is not None:
        try:
            out = ANALYZERS[check.analyzer](check, ctx)
        except Exception as exc:  # an analyzer bug must not hide every other check's result
            return CheckResult(check.id, "unknown", message=f"analyzer {check.analyzer} failed: "
                               f"{type(exc).__name__}: {exc}")
        if isinstance(out, CheckResult):
            return out
        if check.analyzer in RATE_ANALYZERS and not has_baseline(ctx) \
                and not any(f.severity in ("warning", "critical") for f in out):
            nb = no_baseline_finding(check, [], 0, 0)
            return CheckResult(check.id, "unknown", scopes=1, message=nb.message, findings=[*out, nb])
        state: CheckState = worst(f.severity for f in out) if out else "ok"
        return CheckResult(check.id, state, scopes=1, findings=out)
    findings: list[Finding] = []
    passed: list[str] = []
    scopes = scopes_of(check, ctx)
    nodata = 0
    unbased: list[tuple[str, str | None]] = []
    for device, port in scopes:
        r = _evaluate_scope(check, ctx, device, port)
        if r == "nodata":
            nodata += 1
        elif r == "nobaseline":
            unbased.append((device, port))
        elif isinstance(r, Finding):
            findings.append(r)
        else:
            passed.append(where(device, port, _scope_priority(check, ctx, device)))
    if not scopes:
        return CheckResult(check.id, "skipped", message="no matching telemetry in scope")
    if unbased:
        findings.append(no_baseline_finding(check, [d for d, _ in unbased], len(unbased), len(scopes)))
    if nodata == len(scopes) and not findings:
        return CheckResult(check.id, "skipped", scopes=len(scopes), nodata=nodata,
                           message="no data (rates need two samples: --samples 2 or a --state-dir)")
    state = worst(f.severity for f in findings) if findings else "ok"
    message = findings[-1].message if unbased and state == "unknown" else ""
    return CheckResult(check.id, state, scopes=len(scopes), nodata=nodata, message=message, findings=findings,
                       passed=passed)


def evaluate(checks: Sequence[Check], ctx: Context) -> Report:
    """Run every check; collection errors become UNKNOWN findings of the ``collect`` pseudo-check."""
    t0 = time.perf_counter()
    results = [run_check(c, ctx) for c in checks]
    findings = [f for r in results for f in r.findings]
    errors: dict[str, list[str]] = {}
    if ctx.snapshots:
        errors = {d: list(m) for d, m in ctx.latest.errors.items() if m}
        for device, msgs in sorted(errors.items()):
            findings.append(Finding("collect", "unknown", device, message="; ".join(msgs)[:300],
                                    hint="The device did not answer all telemetry requests; "
                                         "check reachability and credentials."))
    findings.sort(key=lambda f: (-RANK[f.severity], f.check, f.device or "", f.port or ""))
    return Report(
        status=worst(f.severity for f in findings), findings=findings, results=results,
        points=len(ctx.points), interval_s=ctx.points[-1].interval_s if ctx.points else None,
        devices=sum(1 for d in ctx.latest.samples if d in ctx.fabric.devices) if ctx.snapshots else 0,
        errors=errors,
        elapsed_s=time.perf_counter() - t0,
    )


def _register_builtin_analyzers() -> None:
    from fabriccfg.verify import analyzers, storm  # noqa: F401  (registers on import)


_register_builtin_analyzers()
