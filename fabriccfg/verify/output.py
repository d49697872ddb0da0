"""Report formats: a table for people, JSON for scripts, JUnit XML for CI, Prometheus text for scrapes.

JUnit: one ``<testsuite>`` per check, one ``<testcase>`` per check x scope (device, port, priority):
a failure for each finding, a passing case for each scope evaluated clean; a check that could not run
is one ``<skipped>`` case. CI systems then show "pfc-pause-storm / leaf-r0:swp3 prio 3" as a test.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from io import StringIO
from typing import Any

from fabriccfg import secrets
from fabriccfg.verify.engine import EXIT_CODES, Finding, Report, fmt_number

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
    return secrets.redact(buf.getvalue())


def to_junit(report: Report) -> str:
    suites = ET.Element("testsuites", name="fabriccfg verify", tests="0", failures="0", skipped="0")
    total = fails = skips = 0
    by_check: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_check.setdefault(f.check, []).append(f)
    check_ids = [r.check for r in report.results] + [c for c in by_check if c not in
                                                     {r.check for r in report.results}]
    results = {r.check: r for r in report.results}
    for cid in check_ids:
        res = results.get(cid)
        found = by_check.get(cid, [])
        suite = ET.SubElement(suites, "testsuite", name=cid)
        n = f_n = s_n = 0
        for f in found:
            case = ET.SubElement(suite, "testcase", classname=f"fabriccfg.{cid}", name=f.where)
            n += 1
            if f.severity == "unknown":
                ET.SubElement(case, "skipped", message=f.message[:500])
                s_n += 1
            else:
                el = ET.SubElement(case, "failure", type=f.severity.upper(), message=f.message[:500])
                el.text = json.dumps(f.to_dict(), indent=1)
                f_n += 1
        for name in res.passed if res is not None else []:
            ET.SubElement(suite, "testcase", classname=f"fabriccfg.{cid}", name=name)
            n += 1
        if not n:
            case = ET.SubElement(suite, "testcase", classname=f"fabriccfg.{cid}", name="fabric")
            n += 1
            if res is not None and res.state in ("skipped", "unknown"):
                ET.SubElement(case, "skipped", message=f"{res.state}: {res.message}"[:500])
                s_n += 1
        suite.set("tests", str(n))
        suite.set("failures", str(f_n))
        suite.set("skipped", str(s_n))
        suite.set("errors", "0")
        total, fails, skips = total + n, fails + f_n, skips + s_n
    suites.set("tests", str(total))
    suites.set("failures", str(fails))
    suites.set("skipped", str(skips))
    ET.indent(suites)
    body = ET.tostring(suites, encoding="unicode")
    return secrets.redact('<?xml version="1.0" encoding="UTF-8"?>\n' + body)


def _esc(v: str) -> str:
    return v.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(d: dict[str, str | None]) -> str:
    inner = ",".join(f'{k}="{_esc(v)}"' for k, v in d.items() if v is not None)
    return "{" + inner + "}" if inner else ""


def to_prometheus(report: Report) -> str:
    """Prometheus text exposition (node_exporter textfile collector, or a pushgateway)."""
    lines = [
        "# HELP fabriccfg_verify_status Overall verify status (0 ok, 1 warning, 2 critical, 3 unknown).",
        "# TYPE fabriccfg_verify_status gauge",
        f"fabriccfg_verify_status {EXIT_CODES[report.status]}",
        "# HELP fabriccfg_check_state State of each check (0 ok, 1 warning, 2 critical, 3 unknown; "
        "-1 skipped).",
        "# TYPE fabriccfg_check_state gauge",
    ]
    for r in report.results:
        state = -1 if r.state == "skipped" else EXIT_CODES[r.state]
        lines.append(f"fabriccfg_check_state{_labels({'check': r.check})} {state}")
    lines += [
        "# HELP fabriccfg_finding Findings per check and place (value = severity code).",
        "# TYPE fabriccfg_finding gauge",
    ]
    for f in report.findings:
        lines.append(f"fabriccfg_finding{_labels(finding_labels(f))} {EXIT_CODES[f.severity]}")
    lines += [
        "# HELP fabriccfg_finding_value Measured value of numeric findings.",
        "# TYPE fabriccfg_finding_value gauge",
    ]
    for f in report.findings:
        if isinstance(f.value, int | float) and not isinstance(f.value, bool):
            lines.append(f"fabriccfg_finding_value{_labels(finding_labels(f))} {float(f.value)!r}")
    lines += [
        "# HELP fabriccfg_verify_findings Number of findings by severity.",
        "# TYPE fabriccfg_verify_findings gauge",
    ]
    for sev in ("critical", "warning", "unknown"):
        n = sum(1 for f in report.findings if f.severity == sev)
        lines.append(f'fabriccfg_verify_findings{{severity="{sev}"}} {n}')
    return secrets.redact("\n".join(lines) + "\n")


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
