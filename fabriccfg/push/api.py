"""The push and live-diff entry points used by the CLI, the demo, the benchmark and the tests.

``plan_jobs`` decides per device what will happen (push target, never a target, cannot be tried);
``push`` and ``live_diff`` run the jobs and return the :class:`RunReport` (already written to its
run folder).
"""

from __future__ import annotations

import os
import secrets as _random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fabriccfg import catalog, registry
from fabriccfg.inventory.models import Fabric
from fabriccfg.push.device import (
    DeviceJob,
    PostPushCheck,
    Progress,
    PushOptions,
    Watch,
    fetch_device,
    push_device,
)
from fabriccfg.push.journal import Journal
from fabriccfg.push.processes import default_processes, run_in_processes, unpicklable
from fabriccfg.push.report import DeviceResult, RunReport, new_run_dir, report_from_journal
from fabriccfg.push.runner import Display, Runner, RunnerOptions
from fabriccfg.push.transaction import Differ
from fabriccfg.targets import Endpoint


class PlanError(Exception):
    """The selection cannot be planned (unknown device or role); the message is safe to print."""


def _not_a_target(platform: str) -> tuple[str, str]:
    """(reason, label): the reason the platform's facts give (``not_a_target``), the label its gist."""
    why = catalog.info(platform).not_a_target
    if not why:
        return f"not a push target: platform {platform} has no push transaction", "no push transaction"
    return f"not a push target: {why}", why.split(": ", 1)[-1]  # "NVIDIA ...: externally managed ..."


def select(fabric: Fabric, devices: Sequence[str] = (), roles: Sequence[str] = ()) -> list[str]:
    """Device names in inventory order, filtered by ``--device`` and ``--role`` (both: either matches)."""
    unknown = [d for d in devices if d not in fabric.devices]
    if unknown:
        raise PlanError(f"no device named {', '.join(map(repr, unknown))} in the inventory")
    known_roles = {str(getattr(d, "role", "")) for d in fabric.devices.values()}
    bad = [r for r in roles if r not in known_roles]
    if bad:
        raise PlanError(f"no device has role {', '.join(map(repr, bad))} "
                        f"(roles: {', '.join(sorted(known_roles))})")
    names = list(fabric.devices)
    if not devices and not roles:
        return names
    return [n for n in names if n in devices or str(getattr(fabric.devices[n], "role", "")) in roles]


def plan_jobs(fabric: Fabric, endpoints: dict[str, Endpoint], names: Sequence[str],
              templates_dir: str | Path | None = None, *,
              endpoints_source: str = "the inventory") -> list[DeviceJob]:
    """One job per selected device: rendered intent and endpoint, or why it is skipped or cannot be tried."""
    from fabriccfg.render.engine import RenderError, render_device

    jobs: list[DeviceJob] = []
    for name in names:
        dev = fabric.devices[name]
        job = DeviceJob(name=name, platform=dev.platform)
        jobs.append(job)
        if registry.transaction(dev.platform) is None:
            job.skip_reason, job.skip_label = _not_a_target(dev.platform)
            continue
        try:
            job.intended = dict(render_device(fabric, name, templates_dir).files)
        except RenderError as exc:
            job.fail_reason = f"render failed: {exc}"
            continue
        if not job.intended:
            job.skip_reason = "renders no configuration (nothing to push)"
            job.skip_label = "render nothing"
            continue
        job.endpoint = endpoints.get(name)
        if job.endpoint is None:
            job.fail_reason = f"no endpoint for this device in {endpoints_source}"
    return jobs


def _differ(differ: Differ | None) -> Differ:
    if differ is not None:
        return differ
    from fabriccfg.render.diff import diff_device

    fn: Differ = diff_device
    return fn


class _JournalDisplay(Display):
    """Forwards to the user's display and journals each device's final result."""

    def __init__(self, inner: Display, journal: Journal) -> None:
        self.inner = inner
        self.journal = journal

    def start(self, jobs: Sequence[DeviceJob]) -> None:
        self.inner.start(jobs)

    def step(self, name: str, step: str) -> None:
        self.inner.step(name, step)

    def done(self, result: DeviceResult) -> None:
        self.journal.write("result", device=result.name, state=result.state, result=result.journal_dict())
        self.inner.done(result)

    def message(self, text: str) -> None:
        self.inner.message(text)

    def stop(self) -> None:
        self.inner.stop()


def _run(command: str, fabric: Fabric, jobs: Sequence[DeviceJob], work: Any, *, inventory: str,
         run_base: str | Path, dry_run: bool, runner: RunnerOptions, display: Display | None,
         options: dict[str, Any], run_dir: Path | None = None, run_tag: str = "",
         warnings: Sequence[str] = (), processes: int = 1) -> RunReport:
    """Run the jobs with a journal; the report is built from the journal, also when the run dies of an
    exception or a signal the runner turns into an interruption (SIGINT, SIGTERM).

    ``processes`` > 1: ``work(run_path, None)`` returns the :class:`PushOptions` the worker processes
    push with (``fabriccfg.push.processes``) instead of a function."""
    run_path = run_dir or new_run_dir(run_base)
    journal = Journal(run_path)
    journal.write("run-start", command=command, fabric=fabric.fabric.name,
                  inventory=str(Path(inventory).resolve()) if inventory else "", run_dir=str(run_path),
                  run_tag=run_tag, dry_run=dry_run, options=options, pid=os.getpid(),
                  devices=[{"name": j.name, "platform": j.platform, "target": j.target} for j in jobs])
    ended = "exception"
    outcome = None
    try:
        if processes > 1:
            outcome = run_in_processes(jobs, work(run_path, None), runner, display=display or Display(),
                                       journal=journal, processes=processes)
        else:
            shown = _JournalDisplay(display or Display(), journal)
            outcome = Runner(jobs, work(run_path, journal), runner, shown).run()
        ended = outcome.ended
    except BaseException as exc:
        ended = f"exception: {exc.__class__.__name__}"
        raise
    finally:
        journal.write("run-end", ended=ended, interrupted=bool(outcome and outcome.interrupted),
                      stopped=outcome.stopped if outcome else "", warnings=list(warnings))
        journal.close()
        report = report_from_journal(run_path)
        report.write()
    return report


def push(fabric: Fabric, jobs: Sequence[DeviceJob], *, inventory: str = "", run_base: str | Path = "runs",
         dry_run: bool = False, runner: RunnerOptions | None = None, confirm_timeout: float = 300.0,
         insecure_host_keys: bool = False, display: Display | None = None,
         post_push_checks: Sequence[PostPushCheck] | None = None, differ: Differ | None = None,
         run_dir: Path | None = None, warnings: Sequence[str] = ()) -> RunReport:
    """Push every job; returns the report (written to ``run_base/<UTC timestamp>/report.json``).

    ``warnings``: lines for the report (journaled, so ``--recover`` keeps them).
    """
    runner = runner or RunnerOptions()
    diff_fn = _differ(differ)
    checks = list(post_push_checks or ())
    tag = _random.token_hex(3)
    targets = sum(1 for j in jobs if j.target)
    processes = runner.processes if runner.processes is not None else default_processes(targets,
                                                                                       runner.workers)
    processes = max(1, min(processes, targets, runner.workers))
    warnings = list(warnings)

    def options_for(run_path: Path, journal: Journal | None) -> PushOptions:
        return PushOptions(run_dir=run_path, run_tag=tag, differ=diff_fn, dry_run=dry_run,
                           confirm_timeout=confirm_timeout, insecure_host_keys=insecure_host_keys,
                           rollback_grace=runner.rollback_grace, post_push_checks=checks,
                           read_timeout=min(60.0, runner.timeout or 60.0) if runner.timeout else 60.0,
                           journal=journal)

    if processes > 1:
        why = unpicklable(options_for(Path(), None))
        if why:
            warnings.append(f"pushed in one process, not {processes}: a post-push check or the differ "
                            f"cannot go to a worker process ({why})")
            processes = 1

    def work(run_path: Path, journal: Journal | None) -> Any:
        opts = options_for(run_path, journal)
        if journal is None:  # worker processes: they push with these options
            return opts

        def run_one(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
            return push_device(job, opts, watch, progress, index)

        return run_one

    options = {"dry_run": dry_run, "workers": runner.workers, "processes": processes,
               "batch": runner.batch, "canary": runner.canary,
               "max_failures": runner.max_failures, "timeout": runner.timeout,
               "confirm_timeout": confirm_timeout,
               "insecure_host_keys": insecure_host_keys, "post_push_checks": len(checks)}
    return _run("push", fabric, jobs, work, inventory=inventory, run_base=run_base, dry_run=dry_run,
                runner=runner, display=display, options=options, run_dir=run_dir, run_tag=tag,
                warnings=warnings, processes=processes)


def live_diff(fabric: Fabric, jobs: Sequence[DeviceJob], *, inventory: str = "",
              run_base: str | Path = "runs",
              runner: RunnerOptions | None = None, insecure_host_keys: bool = False,
              display: Display | None = None, differ: Differ | None = None,
              run_dir: Path | None = None) -> RunReport:
    """Fetch every job's running config and diff it against intent (state ``unchanged`` = fetched)."""
    runner = runner or RunnerOptions()
    diff_fn = _differ(differ)

    def work(run_path: Path, journal: Journal) -> Any:
        opts = PushOptions(run_dir=run_path, run_tag="diff", differ=diff_fn, dry_run=True,
                           insecure_host_keys=insecure_host_keys)

        def run_one(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
            return fetch_device(job, opts, watch, progress, index)

        return run_one

    options = {"workers": runner.workers, "timeout": runner.timeout, "insecure_host_keys": insecure_host_keys}
    return _run("diff", fabric, jobs, work, inventory=inventory, run_base=run_base, dry_run=True,
                runner=runner, display=display, options=options, run_dir=run_dir)


def live_fetcher(fabric: Fabric, endpoints: dict[str, Endpoint], *, run_base: str | Path | None = None,
                 runner: RunnerOptions | None = None, insecure_host_keys: bool = False,
                 display: Display | None = None,
                 endpoints_source: str = "the inventory") -> Any:
    """A ``fabriccfg.commands.render.RunningFetcher`` reading running configs live over SSH.

    Devices are read in parallel with the push runner's deadlines; a device that cannot be read maps
    to an exception whose message says why. With ``run_base`` the fetched configs, session logs and a
    ``report.json`` are kept in ``run_base/<UTC timestamp>/``; otherwise nothing is left on disk.
    """
    import shutil
    import tempfile

    from fabriccfg.render.engine import RenderedDevice

    def fetch(rendered: list[RenderedDevice]) -> dict[str, dict[str, str] | Exception]:
        jobs = []
        for dev in rendered:
            job = DeviceJob(name=dev.name, platform=dev.platform, intended=dict(dev.files),
                            endpoint=endpoints.get(dev.name))
            if job.endpoint is None:
                job.fail_reason = f"no endpoint for this device in {endpoints_source}"
            jobs.append(job)
        keep: dict[str, dict[str, str]] = {}
        tmp = None if run_base is not None else Path(tempfile.mkdtemp(prefix="fabriccfg-diff-"))
        try:
            opts_runner = runner or RunnerOptions()

            def work(run_path: Path, journal: Journal) -> Any:
                opts = PushOptions(run_dir=run_path, run_tag="diff", differ=_differ(None), dry_run=True,
                                   insecure_host_keys=insecure_host_keys, session_logs=run_base is not None)

                def run_one(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
                    return fetch_device(job, opts, watch, progress, index, keep=keep)

                return run_one

            report = _run("diff", fabric, jobs, work, inventory="", run_base=run_base or tmp or "runs",
                          dry_run=True, runner=opts_runner, display=display,
                          options={"workers": opts_runner.workers, "timeout": opts_runner.timeout},
                          run_dir=tmp)
        finally:
            if tmp is not None:
                shutil.rmtree(tmp, ignore_errors=True)
        out: dict[str, dict[str, str] | Exception] = {}
        for d in report.devices:
            out[d.name] = keep[d.name] if d.name in keep else ConnectionError(d.reason or "not read")
        return out

    return fetch
