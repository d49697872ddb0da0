"""Report formats: a table for people, JSON for scripts, JUnit XML for CI, Prometheus text for scrapes.

JUnit: one ``<testsuite>`` per check, one ``<testcase>`` per check x scope (device, port, priority):
a failure for each finding, a passing case for each scope evaluated clean; a check that could not run
is one ``<skipped>`` case. CI systems then show "pfc-pause-storm / leaf-r0:swp3 prio 3" as a test.
"""

from __future__ import annotations

import functools
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from dataclasses import dataclass, field
from io import StringIO
from typing import TYPE_CHECKING, Any

from fabriccfg import secrets
from fabriccfg.verify.engine import EXIT_CODES, Finding, Report, fmt_number

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric
    from fabriccfg.telemetry.model import Sample

FORMATS = ("table", "json", "junit", "prometheus")
_STYLE = {"critical": "bold red", "warning": "yellow", "unknown": "magenta", "ok": "green"}


def _fmt_value(v: Any) -> str:
    return "-" if v is None else fmt_number(v)


def to_json(report: Report) -> str:
    return secrets.redact(json.dumps(report.to_dict(), indent=2, sort_keys=False))


def to_table(report: Report, *, color: bool = False, width: int = 160) -> str:
    from rich.console import Console
    from rich.table import Table

    buf = StringIO()
    console = Console(file=buf, width=width, color_system="standard" if color else None, highlight=False,
                      force_terminal=color)
    if report.findings:
        table = Table(show_lines=False, header_style="bold")
        for col in ("severity", "check", "where", "value", "threshold", "message"):
            table.add_column(col, overflow="fold")
        for f in report.findings:
            table.add_row(f"[{_STYLE[f.severity]}]{f.severity.upper()}[/]", f.check, f.where,
                          _fmt_value(f.value), f.threshold or "-", f.message)
        console.print(table)
        for f in report.findings:
            if f.origin is not None:
                console.print(f"[bold]storm origin[/]: {f.origin}  path: {' -> '.join(f.path)}")
        hints: dict[str, str] = {}
        for f in report.findings:
            if f.hint and f.check not in hints:
                hints[f.check] = f.hint
        for check, hint in hints.items():
            console.print(f"[dim]{check}:[/] {hint}")
    ran = sum(1 for r in report.results if r.state != "skipped")
    skipped = [r for r in report.results if r.state == "skipped"]
    unknown = [r for r in report.results if r.state == "unknown" and not r.findings]
    console.print(f"[{_STYLE[report.status]}]{report.status.upper()}[/]: {len(report.findings)} finding(s); "
                  f"{ran} check(s) ran, {len(skipped)} skipped; {report.devices} device(s), "
                  f"{report.points} sample point(s)"
                  + (f" {report.interval_s:.1f} s apart" if report.interval_s else ""))
    for r in unknown:
        console.print(f"[magenta]{r.check}[/]: UNKNOWN ({r.message})")
    for w in report.warnings:
        console.print(f"[bold red]WARNING[/]: {w}")
    return secrets.redact(buf.getvalue())


def to_junit(report: Report) -> str:
    """JUnit XML: ``skipped`` counts exactly the checks the table counts as skipped (did not apply or
    had no data); an UNKNOWN (could not evaluate) is an ``<error>``, a finding a ``<failure>``."""
    suites = ET.Element("testsuites", name="fabriccfg verify", tests="0", failures="0", errors="0",
                        skipped="0")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    by_check: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_check.setdefault(f.check, []).append(f)
    check_ids = [r.check for r in report.results] + [c for c in by_check if c not in
                                                     {r.check for r in report.results}]
    results = {r.check: r for r in report.results}
    for cid in check_ids:
        res = results.get(cid)
        suite = ET.SubElement(suites, "testsuite", name=cid)
        n = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}

        def case(name: str, *, _suite: ET.Element = suite, _cid: str = cid,
                 _n: dict[str, int] = n) -> ET.Element:
            _n["tests"] += 1
            return ET.SubElement(_suite, "testcase", classname=f"fabriccfg.{_cid}", name=name)

        for f in by_check.get(cid, []):
            tc = case(f.where)
            if f.severity == "unknown":
                ET.SubElement(tc, "error", type="UNKNOWN", message=f.message[:500])
                n["errors"] += 1
            else:
                el = ET.SubElement(tc, "failure", type=f.severity.upper(), message=f.message[:500])
                el.text = json.dumps(f.to_dict(), indent=1)
                n["failures"] += 1
        for name in res.passed if res is not None else []:
            case(name)
        if res is not None and res.state == "skipped":
            ET.SubElement(case("fabric"), "skipped", message=f"skipped: {res.message}"[:500])
            n["skipped"] += 1
        elif not n["tests"]:
            tc = case("fabric")
            if res is not None and res.state == "unknown":
                ET.SubElement(tc, "error", type="UNKNOWN", message=f"unknown: {res.message}"[:500])
                n["errors"] += 1
        for key, value in n.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return secrets.redact('<?xml version="1.0" encoding="UTF-8"?>\n' + body)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(d: dict[str, str | None]) -> str:
    inner = ",".join(f'{k}="{_esc(v)}"' for k, v in d.items() if v is not None and v != "")
    return "{" + inner + "}" if inner else ""


def report_families(report: Report) -> list[Family]:
    """The check results as metric families (shared by ``verify --format prometheus`` and ``watch``)."""
    codes = "0 ok, 1 warning, 2 critical, 3 unknown"
    fams = [
        Family("fabriccfg_verify_status", f"Worst state of all checks this run ({codes}); alert on >= 2.",
               "gauge", [], [([], float(EXIT_CODES[report.status]))]),
        Family("fabriccfg_check_state", f"State of each check ({codes}; -1 skipped: it does not apply or "
               "its data is missing).", "gauge", ["check"],
               [([r.check], -1.0 if r.state == "skipped" else float(EXIT_CODES[r.state]))
                for r in report.results]),
    ]
    names = list(FINDING_LABELS)
    rows: list[tuple[list[str], float]] = []
    vals: list[tuple[list[str], float]] = []
    for f in report.findings:
        lv = [str(v or "") for v in finding_labels(f).values()]
        rows.append((lv, float(EXIT_CODES[f.severity])))
        if isinstance(f.value, int | float) and not isinstance(f.value, bool):
            vals.append((lv, float(f.value)))
    fams.append(Family("fabriccfg_finding", "One series per finding (check x place); value is its severity "
                       f"({codes}); the series disappears when the finding clears.", "gauge", names, rows))
    fams.append(Family("fabriccfg_finding_value", "The measured value behind a numeric finding, in the "
                       "check's unit (see the check's threshold).", "gauge", names, vals))
    insecure = any("host-key checking was disabled" in w for w in report.warnings)
    fams.append(Family("fabriccfg_host_keys_unchecked", "1 when this run did not check SSH host keys "
                       "(--insecure-host-keys: labs only; anyone on the path could impersonate a device).",
                       "gauge", [], [([], 1.0 if insecure else 0.0)]))
    fams.append(Family("fabriccfg_verify_findings", "Number of findings this run, by severity.", "gauge",
                       ["severity"], [([sev], float(sum(1 for f in report.findings if f.severity == sev)))
                                      for sev in ("critical", "warning", "unknown")]))
    return fams


def _value(v: float) -> str:
    return str(int(v)) if v.is_integer() and abs(v) < 2**53 else repr(v)


def families_text(fams: Iterable[Family]) -> str:
    """Text exposition format 0.0.4 of ``fams`` (a family without rows keeps its HELP and TYPE)."""
    lines: list[str] = []
    for fam in fams:
        lines.append(f"# HELP {fam.name} {fam.doc.replace(chr(92), chr(92) * 2).replace(chr(10), ' ')}")
        lines.append(f"# TYPE {fam.name} {fam.kind}")
        for lv, v in fam.rows:
            lines.append(f"{fam.name}{_labels(dict(zip(fam.labelnames, lv, strict=True)))} {_value(v)}")
    return "\n".join(lines) + "\n"


def to_prometheus(report: Report) -> str:
    """Prometheus text exposition (node_exporter textfile collector, or a pushgateway)."""
    return secrets.redact(families_text(report_families(report)))


FINDING_LABELS = ("check", "severity", "device", "port", "priority", "origin")


def finding_labels(f: Finding) -> dict[str, str | None]:
    return {"check": f.check, "severity": f.severity, "device": f.device or "", "port": f.port or "",
            "priority": "" if f.priority is None else str(f.priority), "origin": f.origin or ""}


def render(report: Report, fmt: str, *, color: bool = False) -> str:
    if fmt == "json":
        return to_json(report)
    if fmt == "junit":
        return to_junit(report)
    if fmt == "prometheus":
        return to_prometheus(report)
    return to_table(report, color=color)


# --------------------------------------------------------------------------- per-port series (watch)
@dataclass
class Family:
    """One metric family of the exposition: prometheus_client builds it (watch) or we print it."""

    name: str
    doc: str
    kind: str  # "counter" (name ends in _total) or "gauge"
    labelnames: list[str]
    rows: list[tuple[list[str], float]] = field(default_factory=list)


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_BAD = re.compile(r"[^a-zA-Z0-9_]")
PRIORITY_LABELS = frozenset({"prio", "priority", "tc"})
"""Label names the collectors use for an 802.1p priority / traffic class: exported as ``priority``."""

# catalogue unit -> (exported unit suffix, scale to the base unit)
_UNITS: dict[str, tuple[str, float]] = {
    "bytes": ("bytes", 1.0), "octets/4": ("bytes", 4.0), "packets": ("packets", 1.0),
    "frames": ("frames", 1.0), "us": ("seconds", 1e-6), "Mb/s": ("bytes_per_second", 1e6 / 8),
    "ticks": ("ticks", 1.0), "events": ("", 1.0), "errors": ("", 1.0),
}
_UNIT_WORDS = ("pkts", "packets", "octets", "bytes", "frames", "us", "mbps", "counter")


@functools.lru_cache(maxsize=4096)
def snake(metric: str) -> str:
    """'PortXmitWait' -> 'port_xmit_wait'; 'pfc_rx_pause' unchanged."""
    return _BAD.sub("_", _CAMEL.sub("_", metric)).lower()


@dataclass(frozen=True)
class Exported:
    """How one canonical metric is exported: name, type, scale to base units, HELP."""

    name: str
    kind: str
    scale: float
    doc: str


@functools.lru_cache(maxsize=4096)
def exported(metric: str, kind: str) -> Exported:
    """The exported name of a collected metric (Prometheus conventions: raw counters as ``_total``
    counters for ``rate()``, base units, unit suffix, no type or abbreviated unit in the name)."""
    from fabriccfg.telemetry.model import COUNTER_KINDS, METRICS

    _usual, unit, source = METRICS.get(metric, (kind, "", ""))
    suffix, scale = _UNITS.get(unit, ("", 1.0))
    words = snake(metric).split("_")
    while len(words) > 1 and words[-1] in _UNIT_WORDS:
        words.pop()
    base = "_".join(["fabriccfg", *words, *([suffix] if suffix else [])])
    what = f"{source or metric}" + (f" ({unit})" if unit else "")
    if kind in COUNTER_KINDS:
        wrap = ("; the device's counter saturates" if kind.startswith("sat") else
                "; wraps are the device's (use rate() or increase())")
        return Exported(base + "_total", "counter", scale,
                        f"{what}, raw device counter in base units{wrap}. Collected as '{metric}'.")
    if kind == "state":
        return Exported(base, "gauge", 1.0,
                        f"{what}: 1 for the current state label. Collected as '{metric}'.")
    return Exported(base, "gauge", scale, f"{what}, in base units. Collected as '{metric}'.")


def kept_priorities(fabric: Fabric | None) -> dict[str, frozenset[str]]:
    """Per device, the priorities whose per-port series are exported by default: the lossless
    (RoCE/PFC) and CNP priorities of its effective QoS. Devices absent: every priority."""
    from fabriccfg.inventory.derive import effective_nic_qos, effective_switch_qos
    from fabriccfg.inventory.models import Host, Switch

    if fabric is None or fabric.roce is None:
        return {}
    out: dict[str, frozenset[str]] = {}
    for name, dev in fabric.devices.items():
        if isinstance(dev, Switch):
            q = effective_switch_qos(fabric, dev)
            out[name] = frozenset({str(q.roce_priority), str(q.cnp_priority)})
        elif isinstance(dev, Host):
            prios: set[str] = set()
            for nic in dev.nics:
                n = effective_nic_qos(fabric, nic)
                prios |= {str(p) for p in n.pfc_priorities} | {str(n.cnp_priority)}
            out[name] = frozenset(prios | {str(fabric.roce.roce_priority)})
    return out


@dataclass(eq=False, slots=True)
class SeriesHead:
    """What the exported series of one (metric, kind, label set) share: the family, the label names (device,
    port, the metric's other labels sorted, ``state`` for a state), the label values after device and port,
    and the priority. Label sets repeat on every port: a round builds a few hundred of these."""

    spec: Exported
    names: tuple[str, ...]
    rest: tuple[str, ...]
    prio: str | None

    def value(self, s: Sample, keep: dict[str, frozenset[str]] | None) -> float | None:
        """The exported value of ``s`` (1.0 for a state), or None: a priority ``keep`` drops, not a number."""
        prio = self.prio
        if keep is not None and prio is not None and s.device in keep and prio not in keep[s.device]:
            return None
        if s.kind == "state":
            return 1.0
        if not isinstance(s.value, int | float) or isinstance(s.value, bool):
            return None
        return float(s.value) * self.spec.scale

    def cells(self, s: Sample) -> list[str]:
        """The label values of ``s``'s series, in ``names`` order."""
        if s.kind == "state":
            return [s.device, s.port or "", *self.rest[:-1], str(s.value)]
        return [s.device, s.port or "", *self.rest]


class SeriesLayout:
    """The exported per-port series of one snapshot: which samples are exported (no ``info``, gauges that
    are numbers), each metric's label names (the union over its label sets, first-seen order) and the
    :class:`SeriesHead` of each (metric, kind, label set)."""

    def __init__(self, snapshot: Iterable[Sample]) -> None:
        self.samples = [s for s in snapshot
                        if s.kind != "info" and (s.kind != "gauge" or isinstance(s.value, int))]
        self._label_names: dict[str, list[str]] = {}
        for metric, lbls in dict.fromkeys([(s[2], s[3]) for s in self.samples]):  # first-seen order
            names = self._label_names.setdefault(metric, [])
            for k, _ in lbls:
                lk = "priority" if k in PRIORITY_LABELS else snake(k)
                if lk not in names:
                    names.append(lk)
        self._heads: dict[tuple[str, str, tuple[tuple[str, str], ...]], SeriesHead] = {}

    def head(self, metric: str, kind: str, lbls: tuple[tuple[str, str], ...]) -> SeriesHead:
        got = self._heads.get((metric, kind, lbls))
        if got is None:
            named = {("priority" if k in PRIORITY_LABELS else snake(k)): v for k, v in lbls}
            names = ("device", "port", *sorted(self._label_names[metric]),
                     *(("state",) if kind == "state" else ()))
            rest = tuple(named.get(n, "") for n in names[2:])
            got = self._heads[(metric, kind, lbls)] = SeriesHead(exported(metric, kind), names, rest,
                                                                 named.get("priority"))
        return got


def sample_families(snapshot: Iterable[Sample],
                    keep: dict[str, frozenset[str]] | None = None) -> list[Family]:
    """Per-port series of one snapshot: raw counters, gauges, one-hot states. ``keep``: per device the
    priorities exported (others dropped); ``None`` exports every priority (``--all-priorities``)."""
    by_name: dict[str, Family] = {}
    seen: set[tuple[str, tuple[str, ...]]] = set()
    layout = SeriesLayout(snapshot)
    for s in layout.samples:
        head = layout.head(s.metric, s.kind, s.labels)
        value = head.value(s, keep)
        if value is None:
            continue
        spec, row = head.spec, head.cells(s)
        fam = by_name.get(spec.name)
        if fam is None:
            fam = by_name[spec.name] = Family(spec.name, spec.doc, spec.kind, list(head.names))
        key = (spec.name, tuple(row))
        if key in seen:  # the same series from two sources (e.g. two SM hosts): one sample per series
            continue
        seen.add(key)
        fam.rows.append((row, value))
    return list(by_name.values())


def count_series(exposition: bytes | str) -> int:
    """Samples in a text exposition (lines that are not comments or blank)."""
    text = exposition.decode("utf-8", "replace") if isinstance(exposition, bytes) else exposition
    return sum(1 for line in text.splitlines() if line and not line.startswith("#"))
