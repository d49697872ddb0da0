"""A plan as Markdown (a pull-request comment or CI job summary), JSON or JUnit XML."""

from __future__ import annotations

import json
from typing import Any
from xml.etree import ElementTree as ET

from fabriccfg.plan.run import DevicePlan, Plan
from fabriccfg.secrets import redact

MAX_LINES_PER_DEVICE = 200
"""Changed lines shown per device in Markdown (GitHub comments stop at 65536 characters)."""

MAX_MARKDOWN_CHARS = 60_000
"""Device sections stop before the Markdown passes this (a GitHub comment holds 65536 characters)."""

FORMATS = ("markdown", "json", "junit")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _finding_line(f: dict[str, Any]) -> str:
    where = ":".join(str(x) for x in (f.get("device"), f.get("port")) if x)
    prio = f" prio {f['priority']}" if f.get("priority") is not None else ""
    return f"{f['severity'].upper()} {f['check']} at {where}{prio}: {f.get('message', '')}"


def _grouped(findings: list[dict[str, Any]]) -> list[str]:
    """One line per (severity, check, device, priority): a check that fires on 16 ports is one line."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for f in findings:
        groups.setdefault((f["severity"], f["check"], f.get("device"), f.get("priority")), []).append(f)
    out = []
    for (sev, check, device, prio), fs in groups.items():
        ports = [str(f["port"]) for f in fs if f.get("port")]
        where = str(device or "fabric") + (f" prio {prio}" if prio is not None else "")
        if ports:
            shown = ", ".join(ports[:8]) + (f" and {len(ports) - 8} more" if len(ports) > 8 else "")
            where += f", {len(ports)} port(s): {shown}"
        out.append(f"{sev.upper()} {check} on {where}: {fs[0].get('message', '')}")
    return out


def _device_md(d: DevicePlan) -> list[str]:
    mark = {"change": "changes", "failed": "**FAILED**", "unchanged": "no change",
            "skipped": "skipped"}[d.state]
    out = [f"### {d.name} ({d.platform}): {mark}", ""]
    if d.transaction:
        out.append(f"- transaction: {d.transaction}")
    out.append(f"- lines: +{len(d.added)} -{len(d.removed)}")
    if d.error:
        out.append(f"- the mock device refused the change: {_code(d.error)}")
    for r in d.rule_findings:
        out.append(f"- rule: {r}")
    out.append(f"- verify before: {len(d.verify_before)} finding(s); after: {len(d.verify_after)} finding(s)")
    out += [f"- **new after the change**: {line}" for line in _grouped(d.new_findings)]
    lines = [ln for ln in d.diff.splitlines() if not ln.startswith(("+++", "---"))]
    if lines:
        shown = lines[:MAX_LINES_PER_DEVICE]
        out += ["", "```diff", *shown, "```"]
        if len(lines) > len(shown):
            out.append(f"({len(lines) - len(shown)} more lines not shown)")
    out.append("")
    return out


def to_markdown(plan: Plan) -> str:
    """The PR comment: summary, rule findings, verify before/after, then one section per changed device."""
    out = [f"## fabriccfg plan: {plan.fabric or plan.inventory}", "", f"**{plan.summary}** "
           f"(exit {plan.exit_code})", ""]
    if plan.baseline:
        out += [f"Baseline: {plan.baseline}.", ""]
    out += ["### Rule findings", ""]
    if plan.rule_findings:
        out += [f"- {f['severity']}[{f['rule']}] {f['file']}:{f['line']}:{f['col']}: {f['message']}"
                for f in plan.rule_findings]
    else:
        out.append("none")
    out.append("")
    if plan.stopped:
        return redact("\n".join(out))
    out += ["### Verify on the mock", "", "| | status | findings |", "|---|---|---|"]
    for label, v in (("before the change", plan.verify_before), ("after the change", plan.verify_after)):
        out.append(f"| {label} | {v.get('status', '-')} | {v.get('findings', 0)} |")
    out.append("")
    if plan.new_findings:
        out += ["New findings after the change:", ""]
        out += [f"- {line}" for line in _grouped(plan.new_findings)]
        out.append("")
    out += ["### Devices", "", "| device | platform | plan | + | - | transaction |",
            "|---|---|---|---|---|---|"]
    for d in plan.devices:
        if d.state == "skipped":
            continue
        out.append(f"| {d.name} | {d.platform} | {d.state} | {len(d.added)} | {len(d.removed)} "
                   f"| {d.transaction} |")
    skipped = [d.name for d in plan.devices if d.state == "skipped"]
    if skipped:
        out.append(f"\nNot push targets: {', '.join(skipped)}.")
    out.append("")
    size = sum(len(x) + 1 for x in out)
    detailed = [d for d in plan.devices if d.state in ("change", "failed")]
    # failed devices first: when the comment must be cut, what broke is what a reviewer needs
    detailed.sort(key=lambda d: d.state != "failed")
    for i, d in enumerate(detailed):
        section = _device_md(d)
        cost = sum(len(x) + 1 for x in section)
        if size + cost > MAX_MARKDOWN_CHARS:
            rest = ", ".join(x.name for x in detailed[i:])
            out.append(f"(report cut at {MAX_MARKDOWN_CHARS} characters: no details for {rest}; "
                       "see the JSON report)")
            break
        out += section
        size += cost
    return redact("\n".join(out))


def to_json(plan: Plan) -> str:
    return redact(json.dumps(plan.to_dict(), indent=2, sort_keys=True)) + "\n"


def to_junit(plan: Plan) -> str:
    """One suite ``fabriccfg-plan``: a case per rule error, per device push, and per verify finding that
    is new after the change (each a failure), so a CI test report lists what broke."""
    suite = ET.Element("testsuite", name="fabriccfg-plan")
    cases = 0
    failures = 0

    def case(classname: str, name: str, failure: str | None) -> None:
        nonlocal cases, failures
        tc = ET.SubElement(suite, "testcase", classname=classname, name=name)
        cases += 1
        if failure is not None:
            failures += 1
            ET.SubElement(tc, "failure", message=failure[:500]).text = failure
    for f in plan.rule_findings:
        if f["severity"] == "error":
            case("validate", f"{f['rule']} {f['file']}:{f['line']}", f["message"])
    if not plan.rule_findings or all(f["severity"] != "error" for f in plan.rule_findings):
        case("validate", "inventory", None)
    for d in plan.devices:
        if d.state == "skipped":
            continue
        case(f"push.{d.platform}", d.name, d.error if d.state == "failed" else None)
        case(f"verify.{d.platform}", d.name,
             "; ".join(_finding_line(f) for f in d.new_findings) if d.new_findings else None)
    fabric_wide = [f for f in plan.new_findings if not f.get("device")]
    for f in fabric_wide:
        case("verify", f["check"], _finding_line(f))
    suite.set("tests", str(cases))
    suite.set("failures", str(failures))
    return redact(ET.tostring(suite, encoding="unicode")) + "\n"


def render(plan: Plan, fmt: str) -> str:
    return {"markdown": to_markdown, "json": to_json, "junit": to_junit}[fmt](plan)
