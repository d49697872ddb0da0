"""fabriccfg's public Python API: the command line's stages as typed functions (docs/api.md).

``load`` -> ``render`` -> ``diff`` -> ``push`` -> ``verify``, plus ``validate`` (findings instead of an
exception) and ``advise`` (the training-fabric estimate). Every function takes and returns the types
re-exported here; everything else in the package may change between releases. Safe by default, as the
CLI: ``push`` is a dry run unless ``dry_run=False``, SSH host keys are checked unless
``insecure_host_keys=True``, and an unknown device, role or check name raises :class:`UsageError`
with the closest names, where the CLI exits 2 (3 for verify).

``import fabriccfg`` stays light: this module (and the stages it imports) loads on first use of a
name from it (``fabriccfg/__init__.py``); netmiko, pysnmp and asyncssh load only when a function
talks to devices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from fabriccfg.advise.model import Estimate, Workload, estimate, fabric_profile
from fabriccfg.inventory.findings import Finding
from fabriccfg.inventory.load import InventoryError, LoadResult
from fabriccfg.inventory.load import load as _load
from fabriccfg.inventory.models import Fabric
from fabriccfg.names import select, selection_problem, unknown_names
from fabriccfg.push.report import DeviceResult, RunReport
from fabriccfg.render.diff import DeviceDiff, diff_device
from fabriccfg.render.engine import RenderedDevice, render_fabric
from fabriccfg.targets import Access, Endpoint, resolve_targets
from fabriccfg.verify.engine import CheckResult, Report, load_checks
from fabriccfg.verify.engine import Finding as CheckFinding

__all__ = [
    "CheckFinding", "CheckResult", "DeviceDiff", "DeviceResult", "DiffResult", "Estimate", "Fabric",
    "Finding", "InventoryError", "Lab", "LoadResult", "RenderedDevice", "Report", "RunReport",
    "UsageError", "Workload", "advise", "diff", "load", "mock", "push", "render", "validate", "verify",
]

PathLike = str | Path
Running = Mapping[str, Mapping[str, str]]
"""Saved running configs: device -> file name -> text (what ``DIR/<device>/<file>`` holds)."""


_SSH_ONLY: tuple[Access, ...] = ("ssh",)  # diff and push never poll SNMP: its secrets may be unset


class UsageError(ValueError):
    """A name the caller passed that the inventory or the check set does not have (CLI: exit 2/3)."""


@dataclass
class DiffResult:
    """``diff``'s answer: per device its diff, and the devices that were skipped or unreadable."""

    diffs: dict[str, DeviceDiff] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    """Devices with no saved config (the CLI prints "no saved config for X, skipped")."""
    unreachable: dict[str, str] = field(default_factory=dict)
    """Device -> why its running config could not be read."""

    @property
    def changed(self) -> list[str]:
        return sorted(n for n, d in self.diffs.items() if d.changed)

    @property
    def exit_code(self) -> int:
        """The CLI's ``diff --detailed-exitcode``: 0 no changes, 1 error, 2 changes pending."""
        return 1 if self.unreachable else 2 if self.changed else 0


@dataclass(frozen=True)
class Lab:
    """A running mock fabric (``mock``): point ``diff``/``push``/``verify`` at ``endpoints``;
    ``inject("pause-storm:gpu05")`` starts a scenario (docs/mock.md)."""

    endpoints: Path
    known_hosts: Path
    inject: Callable[[str], None] = field(repr=False)


def _check_names(fabric: Fabric, devices: Sequence[str], roles: Sequence[str]) -> list[str] | None:
    problem = selection_problem(fabric, devices, roles)
    if problem is not None:
        raise UsageError(problem)
    return select(fabric, devices, roles)


# --------------------------------------------------------------------------- the stages
def validate(path: PathLike) -> LoadResult:
    """Load and check an inventory; never raises for the file's mistakes: ``result.ok``,
    ``result.findings`` (each with ``file:line:col``), ``result.fabric`` when it parsed."""
    return _load(Path(path))


def load(path: PathLike) -> Fabric:
    """The validated fabric, or :class:`InventoryError` carrying the findings."""
    result = _load(Path(path))
    if not result.ok or result.fabric is None:
        raise InventoryError(result.findings)
    return result.fabric


def render(fabric: Fabric, *, devices: Sequence[str] = (), roles: Sequence[str] = (),
           templates: PathLike | None = None) -> list[RenderedDevice]:
    """Rendered configs of the selected devices (all by default; a device or role either matches)."""
    names = _check_names(fabric, devices, roles)
    return render_fabric(fabric, devices=names, templates_dir=templates)


def _read_saved(directory: Path, rendered: Sequence[RenderedDevice]) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for dev in rendered:
        files = {name: (directory / dev.name / name).read_text(encoding="utf-8")
                 for name in dev.files if (directory / dev.name / name).is_file()}
        if files:
            out[dev.name] = files
    return out


def diff(fabric: Fabric, against: PathLike | Running | None = None, *, endpoints: PathLike | None = None,
         devices: Sequence[str] = (), roles: Sequence[str] = (), known_hosts: PathLike | None = None,
         insecure_host_keys: bool = False, run_dir: PathLike | None = None) -> DiffResult:
    """Intent vs running: ``against`` saved configs (a ``DIR/<device>/<file>`` folder or a mapping),
    or, without it, live over SSH from ``endpoints`` (a mock's endpoints file; default the
    inventory's management addresses)."""
    rendered = render(fabric, devices=devices, roles=roles)
    result = DiffResult()
    running: dict[str, dict[str, str] | Exception]
    if against is not None:
        saved = _read_saved(Path(against), rendered) if isinstance(against, str | Path) else {
            k: dict(v) for k, v in against.items()}
        running = dict(saved.items())
    else:
        from fabriccfg.push.api import live_fetcher
        from fabriccfg.push.runner import RunnerOptions

        targets = resolve_targets(fabric, endpoints, access=_SSH_ONLY, known_hosts=known_hosts)
        fetch = live_fetcher(fabric, targets, run_base=run_dir, insecure_host_keys=insecure_host_keys,
                             runner=RunnerOptions(), endpoints_source=str(endpoints or "the inventory"))
        running = fetch(rendered)
    for dev in rendered:
        got = running.get(dev.name)
        if got is None and against is not None:
            result.skipped.append(dev.name)
        elif isinstance(got, Exception) or got is None:
            result.unreachable[dev.name] = str(got or "no answer")
        else:
            try:
                result.diffs[dev.name] = diff_device(dev.platform, dev.files, got)
            except ValueError as exc:
                result.unreachable[dev.name] = f"running config is unreadable: {exc}"
    return result


def push(fabric: Fabric, *, endpoints: PathLike | None = None, devices: Sequence[str] = (),
         roles: Sequence[str] = (), dry_run: bool = True, run_dir: PathLike = "runs",
         known_hosts: PathLike | None = None, insecure_host_keys: bool = False, workers: int = 8,
         timeout: float | None = 300.0, confirm_timeout: float = 300.0, processes: int = 1) -> RunReport:
    """The transactional push (backup, apply, verify, confirm or roll back), with its run journal and
    report under ``run_dir``. A dry run (the default) connects, backs up and diffs, changes nothing.
    ``processes`` > 1 spreads the devices over worker processes (``fabriccfg push --processes``)."""
    from fabriccfg.push import api as push_api
    from fabriccfg.push.runner import RunnerOptions

    names = _check_names(fabric, devices, roles)
    targets = resolve_targets(fabric, endpoints, access=_SSH_ONLY, known_hosts=known_hosts)
    jobs = push_api.plan_jobs(fabric, targets, names if names is not None else list(fabric.devices),
                              endpoints_source=str(endpoints or "the inventory"))
    warnings = ["host-key checking was disabled (insecure_host_keys=True)"] if insecure_host_keys else []
    return push_api.push(fabric, jobs, run_base=run_dir, dry_run=dry_run,
                         runner=RunnerOptions(workers=max(1, workers), timeout=timeout,
                                              processes=max(1, processes)),
                         confirm_timeout=confirm_timeout, insecure_host_keys=insecure_host_keys,
                         warnings=warnings)


def verify(fabric: Fabric, *, endpoints: PathLike | None = None, only: Sequence[str] = (),
           samples: int = 2, interval: float = 5.0, running: Running | None = None,
           known_hosts: PathLike | None = None, insecure_host_keys: bool = False) -> Report:
    """Health checks over live telemetry: ``report.status`` (ok, warning, critical, unknown),
    ``report.findings``, ``report.exit_code`` (Nagios)."""
    from fabriccfg.verify import runner

    checks = load_checks()
    if only:
        problem = unknown_names("check", only, {c.id for c in checks})
        if problem is not None:
            raise UsageError(problem)
        checks = [c for c in checks if c.id in only]
    targets: dict[str, Endpoint] = resolve_targets(fabric, endpoints, known_hosts=known_hosts)
    report = runner.verify(fabric, targets, checks,
                           runner.default_collector(insecure_host_keys=insecure_host_keys),
                           samples=samples, interval=interval,
                           running_configs={k: dict(v) for k, v in running.items()} if running else None)
    if insecure_host_keys:
        report.warnings.append("host-key checking was disabled (insecure_host_keys=True)")
    return report


def advise(workload: Workload, fabrics: Sequence[str] = ("ib-hdr-sharp", "ib-hdr", "roce-400g")
           ) -> list[Estimate]:
    """Step time, MFU and cost of ``workload`` on each fabric profile (docs/advise.md)."""
    return [estimate(workload, fabric_profile(name)) for name in fabrics]


@contextmanager
def mock(fabric: Fabric, workdir: PathLike, *, snmp: bool = True) -> Iterator[Lab]:
    """Run the embedded mock fabric on loopback (real SSH servers, SNMP agents) for a notebook or a
    test: ``with api.mock(fabric, tmp) as lab: api.verify(fabric, endpoints=lab.endpoints)``."""
    from fabriccfg.mock.fabric import MockFabric

    with MockFabric(fabric, workdir=Path(workdir), snmp=snmp) as running:
        yield Lab(Path(running.endpoints_file), Path(running.known_hosts), running.inject)
