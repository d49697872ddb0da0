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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from fabriccfg import catalog
from fabriccfg.telemetry.model import Sample
from fabriccfg.verify import analyzers, storm
from fabriccfg.verify import expr as ex
from fabriccfg.verify.model import (
    ANALYZERS,
    EXIT_CODES,
    OPS,
    RANK,
    RATE_ANALYZERS,
    SEVERITIES,
    Check,
    CheckError,
    CheckResult,
    CheckState,
    Condition,
    Context,
    Finding,
    Point,
    Report,
    Scope,
    Severity,
    build_points,
    fmt_number,
    has_baseline,
    metric_index,
    needed_metrics,
    no_baseline_finding,
    where,
    worst,
)

BUILTIN_ANALYZERS = (analyzers, storm)
"""The modules whose ``@analyzer`` functions fill :data:`~fabriccfg.verify.model.ANALYZERS` (imported here,
explicitly, so that a check file naming them finds them)."""

__all__ = [
    "ANALYZERS", "BUILTIN_ANALYZERS", "EXIT_CODES", "RANK", "SEVERITIES", "Check", "CheckError",
    "CheckResult",
    "CheckState", "Condition", "Context", "Finding", "Point", "Report", "Scope", "Severity", "build_points",
    "evaluate", "fmt_number", "load_checks", "needed_metrics", "parse_check", "run_check", "where", "worst",
]


SHIPPED_CHECKS = Path(__file__).resolve().parent.parent / "data" / "checks"
ENV_NAMES = frozenset({
    "value", "interval_s", "link_bps", "intended_speed_mbps", "priority", "device", "port", "kind",
    "platform", "samples", "ecn_kmin_bytes", "ecn_kmax_bytes", "headroom_bytes",
})
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")


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
        if text.startswith(OPS):
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
    if op not in OPS:
        raise CheckError(f"{src}: op must be one of {' '.join(OPS)}")
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


class _ScopeSource(ex.MetricSource):
    """Metric functions bound to one (device, port, priority) at one point."""

    __slots__ = ("_prio", "device", "point", "port", "priority", "saturated", "unbased")

    def __init__(self, point: Point, device: str, port: str | None, priority: int | None) -> None:
        self.point = point
        self.device = device
        self.port = port
        self.priority = priority
        self._prio = str(priority) if priority is not None else None
        self.saturated: set[str] | None = None
        """Counters read here that are saturated (no rate); None until one is (most scopes have none)."""
        self.unbased: set[str] | None = None
        """Counters read here that have no previous sample (no baseline for a rate yet)."""

    def _matching(self, name: str, overrides: Mapping[str, str]) -> list[Sample]:
        rows = self.point.by_port.get((self.device, self.port, name))
        if not rows:
            return []
        prio = self._prio
        if not overrides and prio is None:
            return rows
        out = []
        for s in rows:
            ok = True
            for k, v in s.labels:
                if k in overrides:
                    ok = overrides[k] == v
                elif prio is not None and k in _PRIO_LABELS:
                    ok = v == prio
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
        rates = self.point.rates
        total: float = 0
        for s in rows:
            r = rates.get(s[:4])  # s[:4] == s.key, sliced in C
            if r is None or r.value_per_s is None:
                if r is not None and r.status == "saturated":
                    if self.saturated is None:
                        self.saturated = set()
                    self.saturated.add(name)
                if r is not None and r.status == "first":
                    if self.unbased is None:
                        self.unbased = set()
                    self.unbased.add(name)
                return None
            if func == "delta":
                total += r.delta if r.delta is not None else 0
            else:
                total += r.value_per_s
        return total


_PRIO_LABELS = frozenset({"prio", "tc"})
"""Labels a check's ``priority`` scope selects on (a per-priority counter carries one of them)."""


def _device_ok(check: Check, ctx: Context, device: str) -> bool:
    sc = check.scope
    dev = ctx.fabric.devices.get(device)
    if dev is None:
        return False
    try:
        info = catalog.info(dev.platform)
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
    by_metric = metric_index(latest)
    pairs = itertools.chain.from_iterable(by_metric.get(m, ()) for m in sorted(metrics)) if metrics else \
        ((device, port) for device, port, _ in latest.by_port)
    device_ok: dict[str, bool] = {}  # per device, not per port: the scope's device rules
    for device, port in pairs:
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
        if key not in seen:
            ok = device_ok.get(device)
            if ok is None:
                ok = device_ok[device] = _device_ok(check, ctx, device)
            if ok:
                seen[key] = None
    return sorted(seen, key=lambda k: (k[0], k[1] or ""))


_LEVEL_RANK = {"ok": 0, "warning": 1, "critical": 2}


def _scope_priority(check: Check, ctx: Context, device: str) -> int | None:
    if check.scope.priority == "lossless":
        return ctx.lossless_priority(device)
    return check.scope.priority if isinstance(check.scope.priority, int) else None


_NONE: frozenset[str] = frozenset()


def _evaluate_scope(check: Check, ctx: Context, device: str, port: str | None) -> Finding | str | None:
    """A finding, None (fine), "nodata", or "nobaseline" (a rate is needed and no previous sample exists).

    A scope whose outcome depends on a rate that has no baseline yet is never OK: a first sample
    cannot show a pause storm, so calling it OK would be a lie (it becomes UNKNOWN in :func:`run_check`).
    """
    priority = _scope_priority(check, ctx, device)
    if check.scope.priority == "lossless" and priority is None:
        return "nodata"
    env: dict[str, Any] = {**check.params, **ctx.scope_env(device, port), "priority": priority,
                           "samples": len(ctx.points)}
    levels: list[tuple[str, Any, str | None]] = []
    saturated: set[str] = set()
    unbased = False
    assert check.value is not None
    # newest point first, stopping once the window has its verdicts: the same window as evaluating every
    # point the watcher keeps (older verdicts fall out of it), without evaluating the ones it drops
    # a point's verdict depends on the point, the scope, the intent and the number of points only, so a
    # window of 2+ points reads the older ones' verdicts from the rounds that computed them
    newest = ctx.points[-1] if ctx.points else None
    # (the check object, not its id: two loaded checks may share an id; the watcher holds its checks)
    key = (id(check), device, port, len(ctx.points)) if check.for_points > 1 else None
    for pt in reversed(ctx.points):
        if len(levels) >= check.for_points:
            break
        got = pt.verdicts.get(key) if key is not None and pt is not newest else None
        if got is None:
            src = _ScopeSource(pt, device, port, priority)
            env["interval_s"] = pt.interval_s
            env["value"] = None
            value = check.value.evaluate(env, src)
            env["value"] = value
            guard = check.when.evaluate(env, src) if check.when is not None else True
            crit = check.crit.expr.evaluate(env, src) if check.crit is not None and guard else None
            warn = check.warn.expr.evaluate(env, src) if check.warn is not None and guard else None
            got = (value, guard, crit, warn, frozenset(src.saturated) if src.saturated else _NONE,
                   bool(src.unbased))
            if key is not None and pt is newest:
                pt.verdicts[key] = got
        value, guard, crit, warn, sat, unbased_here = got
        saturated |= sat
        if unbased_here and not (guard and (crit or warn)):
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
    levels.reverse()
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
        numeric = threshold.startswith(OPS)  # "> 0.5" takes the unit; a `show:` text does not
        msg += f" ({level}: {threshold}{unit if numeric else ''}"
        msg += f" for {len(window)} point(s))" if check.for_points > 1 else ")"
    return Finding(check.id, level, device, port, priority, value, threshold, check.hint, msg)  # type: ignore[arg-type]


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


