"""Run a plan: validate -> render -> mock seeded with today's running configs -> verify before -> push
through the real transactions -> verify after -> stop the mock.

The result (:class:`Plan`) carries everything the report needs; :attr:`Plan.exit_code` follows
``terraform plan -detailed-exitcode``: 0 no change, 2 changes and every check passed, 1 a rule error,
a push to the mock that failed, or a verify finding after the change that was not there before.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg import registry
from fabriccfg.inventory.findings import has_errors
from fabriccfg.inventory.load import InventoryError, load, load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock.baseline import BaselineError, read_folder
from fabriccfg.mock.fabric import MockError, MockFabric, managed_devices
from fabriccfg.push.api import plan_jobs, push
from fabriccfg.push.report import DeviceResult
from fabriccfg.push.runner import RunnerOptions
from fabriccfg.render.engine import RenderError, render_fabric
from fabriccfg.verify.engine import CheckError, Finding, Report, load_checks
from fabriccfg.verify.runner import default_collector, verify

FAILING_SEVERITIES = frozenset({"warning", "critical"})
"""A finding of these severities after the change that was not there before fails the plan."""


class PlanInputError(Exception):
    """Bad plan input (missing file, unreadable baseline); the message is one safe line."""


@dataclass
class PlanOptions:
    inventory: Path
    baseline: Path | None = None
    base_inventory: Path | None = None
    templates: Path | None = None
    base_templates: Path | None = None
    checks: Sequence[Path] = ()
    samples: int = 2
    interval: float = 1.0
    workers: int = 8
    seed: int = 0


@dataclass
class DevicePlan:
    """What the change does to one device on the mock."""

    name: str
    platform: str
    state: str
    """``unchanged``, ``change`` (pushed to the mock and verified), ``failed`` (the mock refused it or
    it rolled back), ``skipped`` (not a push target)."""
    transaction: str = ""
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    diff: str = ""
    error: str = ""
    rule_findings: list[str] = field(default_factory=list)
    verify_before: list[dict[str, Any]] = field(default_factory=list)
    verify_after: list[dict[str, Any]] = field(default_factory=list)
    new_findings: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class Plan:
    inventory: str
    fabric: str = ""
    baseline: str = ""
    """Where the mock's running configs came from (one line)."""
    rule_findings: list[dict[str, Any]] = field(default_factory=list)
    devices: list[DevicePlan] = field(default_factory=list)
    verify_before: dict[str, Any] = field(default_factory=dict)
    verify_after: dict[str, Any] = field(default_factory=dict)
    new_findings: list[dict[str, Any]] = field(default_factory=list)
    stopped: str = ""
    """Why the plan stopped before the mock stage (rule errors, render failure), else empty."""
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return bool(self.stopped or self.new_findings or any(d.state == "failed" for d in self.devices)
                    or any(f["severity"] == "error" for f in self.rule_findings))

    @property
    def exit_code(self) -> int:
        if self.failed:
            return 1
        return 2 if any(d.state == "change" for d in self.devices) else 0

    @property
    def summary(self) -> str:
        changed = sum(d.state == "change" for d in self.devices)
        failed = sum(d.state == "failed" for d in self.devices)
        if self.stopped:
            return f"plan stopped: {self.stopped}"
        if failed or self.new_findings or self.failed:
            return (f"plan FAILED: {failed} device(s) refused the change on the mock, "
                    f"{len(self.new_findings)} new verify finding(s) after the change")
        if not changed:
            return "no change: the running configs already match the intent"
        return f"{changed} device(s) change; the mock accepted every change and verify found nothing new"

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["exit_code"] = self.exit_code
        out["summary"] = self.summary
        return out


def _identity(f: Finding | dict[str, Any]) -> tuple[Any, ...]:
    d = f if isinstance(f, dict) else f.to_dict()
    return d["check"], d.get("device"), d.get("port"), d.get("priority")


def new_findings(before: Report, after: Report) -> list[Finding]:
    """Findings after the change (warning or worse) that were not there, at that severity, before."""
    rank = {"ok": 0, "unknown": 1, "warning": 2, "critical": 3}
    seen = {_identity(f): rank.get(f.severity, 0) for f in before.findings}
    return [f for f in after.findings if f.severity in FAILING_SEVERITIES
            and rank[f.severity] > seen.get(_identity(f), 0)]


def changed_lines(diff_text: str) -> tuple[list[str], list[str], str]:
    """(added, removed, unified text) from a push diff.

    CLI diffs (hier-config) mark a line inside its section (``    + line``): each added/removed entry
    is then the section path and the line, ``interface Ethernet1/1 > uc-tx-queue 3 > random-detect ...``,
    and the unified text moves the marker to the first column (so a ```diff block colours it).
    """
    added: list[str] = []
    removed: list[str] = []
    text: list[str] = []
    parents: list[tuple[int, str]] = []
    for line in diff_text.splitlines():
        if line.startswith(("+++", "---", "@@")):
            text.append(line)
            continue
        body = line.lstrip()
        indent = len(line) - len(body)
        if line[:1] in "+-" and line[:1]:
            marker, content, path = line[0], line[1:].rstrip(), ""
        elif body[:2] in ("+ ", "- "):
            marker, content = body[0], body[2:].rstrip()
            path = " > ".join(p for i, p in parents if i < indent)
        else:
            while parents and parents[-1][0] >= indent:
                parents.pop()
            parents.append((indent, body))
            text.append(" " + line)
            continue
        entry = f"{path} > {content.strip()}" if path else content.strip()
        (added if marker == "+" else removed).append(entry)
        text.append(marker + " " * indent + (content if body[:2] in ("+ ", "- ") else line[1:]))
    return added, removed, "\n".join(text)


def _transaction_kind(platform: str) -> str:
    tx = registry.transaction(platform)
    return str(getattr(tx, "kind", "")) if tx is not None else ""


def _baselines(opts: PlanOptions, fabric: Fabric) -> tuple[dict[str, dict[str, str]], str]:
    names = managed_devices(fabric)
    if opts.baseline is not None and opts.base_inventory is not None:
        raise PlanInputError("give either --baseline or --base-inventory, not both")
    if opts.baseline is not None:
        try:
            return read_folder(opts.baseline, names), f"running configs in {opts.baseline}"
        except BaselineError as exc:
            raise PlanInputError(str(exc)) from None
    if opts.base_inventory is not None:
        try:
            old = load_fabric(opts.base_inventory)
        except InventoryError as exc:
            first = str(exc).splitlines()[0]
            raise PlanInputError(f"{opts.base_inventory}: invalid inventory: {first}") from None
        except OSError as exc:
            raise PlanInputError(f"{opts.base_inventory}: {exc.strerror or exc}") from None
        wanted = [n for n in names if n in old.devices]
        try:
            rendered = render_fabric(old, wanted, templates_dir=opts.base_templates)
        except RenderError as exc:
            raise PlanInputError(f"{opts.base_inventory}: render failed: {exc}") from None
        return ({r.name: dict(r.files) for r in rendered if r.files},
                f"configs rendered from {opts.base_inventory}")
    return {}, "factory state (no --baseline / --base-inventory: every line is a change)"


COLLECT_WORKERS = 32
"""CLI telemetry sessions in parallel (every device of a lab in one wave; the mock is on loopback)."""


def _verify(fabric: Fabric, mock: MockFabric, opts: PlanOptions, checks: Any) -> Report:
    targets = dict(mock.endpoints)
    workers = min(COLLECT_WORKERS, max(8, len(targets)))
    return verify(fabric, targets, checks, default_collector(workers=workers), samples=max(2, opts.samples),
                  interval=opts.interval)


def run_plan(opts: PlanOptions, workdir: Path | None = None) -> Plan:
    """Run every stage; raises :class:`PlanInputError` for bad input (usage), never for a failing change."""
    t_all = time.perf_counter()
    plan = Plan(inventory=str(opts.inventory))
    if not opts.inventory.is_file():
        raise PlanInputError(f"no such file: {opts.inventory}")
    t = time.perf_counter()
    loaded = load(opts.inventory)
    plan.rule_findings = [f.as_dict() for f in loaded.findings]
    plan.timings["validate"] = time.perf_counter() - t
    fabric = loaded.fabric
    if fabric is None or has_errors(loaded.findings):
        plan.stopped = "the inventory has validation errors (see the rule findings)"
        return plan
    plan.fabric = fabric.fabric.name
    try:
        checks = load_checks(list(opts.checks))
    except CheckError as exc:
        raise PlanInputError(str(exc)) from None
    baselines, plan.baseline = _baselines(opts, fabric)
    by_device: dict[str, list[str]] = {}
    for f in loaded.findings:
        dev = _finding_device(f.path, fabric)
        if dev:
            by_device.setdefault(dev, []).append(f"{f.severity}[{f.rule}]: {f.message}")
    with tempfile.TemporaryDirectory(prefix="fabriccfg-plan-", dir=workdir) as tmp:
        t = time.perf_counter()
        try:
            mock = MockFabric(fabric, workdir=Path(tmp), seed=opts.seed, baselines=baselines)
            mock.start()
        except (MockError, OSError) as exc:
            raise PlanInputError(f"mock fabric did not start: {exc}") from None
        plan.timings["mock_start"] = time.perf_counter() - t
        try:
            t = time.perf_counter()
            before = _verify(fabric, mock, opts, checks)
            plan.timings["verify_before"] = time.perf_counter() - t
            t = time.perf_counter()
            jobs = plan_jobs(fabric, mock.endpoints, list(fabric.devices), opts.templates,
                             endpoints_source="the mock fabric")
            runner = RunnerOptions(workers=opts.workers, timeout=120.0)
            report = push(fabric, jobs, run_base=Path(tmp) / "runs", runner=runner, confirm_timeout=120.0,
                          post_push_checks=[])
            plan.timings["push"] = time.perf_counter() - t
            mock.sync()
            t = time.perf_counter()
            after = _verify(fabric, mock, opts, checks)
            plan.timings["verify_after"] = time.perf_counter() - t
        finally:
            mock.stop()
    fresh = new_findings(before, after)
    plan.verify_before = {"status": before.status.upper(), "findings": len(before.findings)}
    plan.verify_after = {"status": after.status.upper(), "findings": len(after.findings)}
    plan.new_findings = [f.to_dict() for f in fresh]
    for res in report.devices:
        plan.devices.append(_device_plan(res, before, after, fresh, by_device.get(res.name, [])))
    plan.timings["total"] = time.perf_counter() - t_all
    return plan


def _finding_device(path: Sequence[str | int], fabric: Fabric) -> str | None:
    """The device a rule finding points at (``switches.3...`` / ``hosts.1...``), if any."""
    if len(path) >= 2 and path[0] in ("switches", "hosts") and isinstance(path[1], int):
        group = fabric.switches if path[0] == "switches" else fabric.hosts
        if 0 <= path[1] < len(group):
            return str(group[path[1]].name)
    return None


def _device_plan(res: DeviceResult, before: Report, after: Report, fresh: list[Finding],
                 rules: list[str]) -> DevicePlan:
    if not res.target:
        state = "skipped"
    elif res.state in ("failed", "rolled-back"):
        state = "failed"
    elif res.state == "applied":
        state = "change"
    else:
        state = "unchanged"
    added, removed, text = changed_lines(res.diff)
    return DevicePlan(
        name=res.name, platform=res.platform, state=state, transaction=_transaction_kind(res.platform),
        added=added, removed=removed, diff=text,
        error=res.reason if state == "failed" else "", rule_findings=rules,
        verify_before=[f.to_dict() for f in before.findings if f.device == res.name],
        verify_after=[f.to_dict() for f in after.findings if f.device == res.name],
        new_findings=[f.to_dict() for f in fresh if f.device == res.name])
