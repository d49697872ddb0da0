"""`fabriccfg push`: guarded, transactional config push over SSH (netmiko), with a report per run."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric
    from fabriccfg.push.device import DeviceJob, PostPushCheck
    from fabriccfg.push.report import RunReport
    from fabriccfg.push.runner import Display


class OutputFormat(StrEnum):
    table = "table"
    json = "json"


def _err(text: str) -> None:
    typer.echo(text, err=True)


def load_inventory(inventory: Path) -> Fabric:
    """Load and validate, or print the errors (``file:line:col: ...``, at most 100) and exit 1."""
    from fabriccfg.inventory.findings import capped_lines
    from fabriccfg.inventory.load import load

    result = load(inventory)
    if not result.ok or result.fabric is None:
        for line in capped_lines([f for f in result.findings if f.severity == "error"], str(inventory), 100):
            _err(line)
        _err(f"{inventory}: invalid inventory; fix the errors above first")
        raise typer.Exit(1)
    return result.fabric


def plan(fabric: Fabric, inventory: Path, endpoints: Path | None, *, devices: list[str], roles: list[str],
         templates: Path | None, snmp: bool = False, known_hosts: Path | None = None) -> list[DeviceJob]:
    """Targets and jobs, or a one-line error and exit 2."""
    from fabriccfg.names import selection_problem
    from fabriccfg.push.api import PlanError, plan_jobs, select
    from fabriccfg.render.engine import RenderError
    from fabriccfg.secrets import SecretError
    from fabriccfg.targets import Access, EndpointsError, resolve_targets

    problem = selection_problem(fabric, devices, roles)
    if problem is not None:
        _err(f"error: {problem}")
        raise typer.Exit(2)
    try:
        names = select(fabric, devices, roles)
        # SSH only, unless a post-push check (--verify) polls SNMP: an unset SNMP secret must not stop a push
        access: tuple[Access, ...] = ("ssh", "snmp") if snmp else ("ssh",)
        targets = resolve_targets(fabric, endpoints, inventory_dir=inventory.parent, access=access,
                                  known_hosts=known_hosts)
        source = str(endpoints) if endpoints else "the inventory (no management address)"
        return plan_jobs(fabric, targets, names, templates, endpoints_source=source)
    except (PlanError, EndpointsError, SecretError, RenderError) as exc:
        _err(f"error: {exc}")
        raise typer.Exit(2) from None


def make_display(fmt: OutputFormat, verb: str) -> Display:
    from fabriccfg.commands._console import console, is_tty
    from fabriccfg.push.display import PlainDisplay, RichDisplay

    if fmt is OutputFormat.json:
        return PlainDisplay(sys.stderr, verb)
    if is_tty(sys.stdout):
        return RichDisplay(console(), verb)
    return PlainDisplay(sys.stdout, verb)


def show_diffs(report: RunReport, console: Any) -> None:
    from rich.syntax import Syntax

    for d in report.devices:
        if d.changed and d.diff:
            console.rule(f"{d.name} ({d.platform})")
            console.print(Syntax(d.diff.rstrip("\n"), "diff", theme="ansi_dark", background_color="default"))


def _insecure_warning() -> None:
    from fabriccfg.commands.render import insecure_warning

    insecure_warning()


def detailed_exit_code(report: RunReport) -> int:
    """``--detailed-exitcode`` for a dry run (terraform plan's convention): 0 nothing to change,
    1 a device failed or could not be planned, 2 changes pending."""
    targets = [d for d in report.devices if d.target]
    if any(d.state not in ("unchanged", "skipped") or (d.state == "skipped" and not d.changed)
           for d in targets):
        return 1
    return 2 if any(d.changed for d in targets) else 0


def run_push(inventory: Path, *, endpoints: Path | None = None, devices: list[str] | None = None,
             roles: list[str] | None = None, dry_run: bool = False, batch: int | None = None,
             canary: int | None = None, max_failures: int | None = None, workers: int = 8,
             processes: int | None = None, timeout: float | None = 300.0, confirm_timeout: float = 300.0,
             yes: bool = False,
             insecure_host_keys: bool = False, fmt: OutputFormat = OutputFormat.table,
             run_dir: Path = Path("runs"), templates: Path | None = None, detailed_exitcode: bool = False,
             known_hosts: Path | None = None, post_push_checks: Sequence[PostPushCheck] = ()) -> int:
    """The whole ``fabriccfg push`` command; returns the exit code."""
    from fabriccfg.commands._console import console as make_console
    from fabriccfg.push import api
    from fabriccfg.push.display import final_table
    from fabriccfg.push.runner import RunnerOptions

    for flag, value in (("--workers", workers), ("--batch", batch), ("--canary", canary),
                        ("--processes", processes)):
        if value is not None and value < 1:
            _err(f"error: {flag} must be at least 1")
            return 2
    if max_failures is not None and max_failures < 0:
        _err("error: --max-failures must be 0 or more")
        return 2
    fabric = load_inventory(inventory)
    if detailed_exitcode and not dry_run:
        _err("error: --detailed-exitcode goes with --dry-run (a push's exit code is already 0 applied, "
             "1 failed)")
        return 2
    jobs = plan(fabric, inventory, endpoints, devices=devices or [], roles=roles or [], templates=templates,
                snmp=bool(post_push_checks), known_hosts=known_hosts)
    if insecure_host_keys:
        _insecure_warning()
    runner = RunnerOptions(workers=workers, batch=batch, canary=canary, max_failures=max_failures,
                           timeout=timeout if timeout and timeout > 0 else None, processes=processes)
    console = make_console(stderr=fmt is OutputFormat.json)
    if not yes and not dry_run:
        if sys.stdin.isatty() and sys.stdout.isatty():
            preview = api.live_diff(fabric, jobs, inventory=str(inventory), run_base=run_dir, runner=runner,
                                    insecure_host_keys=insecure_host_keys, display=make_display(fmt, "diff"))
            show_diffs(preview, console)
            pending = [d.name for d in preview.devices if d.target and d.changed]
            broken = [d.name for d in preview.devices if d.target and d.state == "failed"]
            if broken:
                console.print(f"[yellow]{len(broken)} device(s) could not be read: {', '.join(broken)}[/]")
            if not pending:
                console.print("nothing to change on the devices that could be read")
                return preview.exit_code
            if not typer.confirm(f"Apply these changes to {len(pending)} device(s)?", default=False):
                console.print("nothing applied")
                return 1
        else:
            _err("no terminal and no --yes: running as --dry-run (nothing will be changed); "
                 "pass --yes to apply")
            dry_run = True
    report = api.push(fabric, jobs, inventory=str(inventory), run_base=run_dir, dry_run=dry_run,
                      runner=runner, confirm_timeout=confirm_timeout, insecure_host_keys=insecure_host_keys,
                      display=make_display(fmt, "dry-run" if dry_run else "push"),
                      post_push_checks=post_push_checks,
                      warnings=["host-key checking was disabled (--insecure-host-keys)"] if insecure_host_keys
                      else [])
    if fmt is OutputFormat.json:
        sys.stdout.write(report.to_json())
    else:
        if dry_run:
            show_diffs(report, console)
        final_table(report, console)
    return detailed_exit_code(report) if detailed_exitcode else report.exit_code


def run_recover(run_dir: Path, inventory: Path | None, *, endpoints: Path | None = None,
                insecure_host_keys: bool = False, fmt: OutputFormat = OutputFormat.table,
                timeout: float = 120.0, workers: int = 8, known_hosts: Path | None = None) -> int:
    """``fabriccfg push --recover RUN_DIR``; returns the exit code (0 recovered or nothing to do,
    1 a device could not be brought to its backup or intent, 2 usage)."""
    from fabriccfg.commands._console import console as make_console
    from fabriccfg.push.display import final_table
    from fabriccfg.push.journal import JournalError, read_run
    from fabriccfg.push.recover import RecoverError, recover
    from fabriccfg.secrets import SecretError
    from fabriccfg.targets import EndpointsError, resolve_targets

    try:
        trail = read_run(run_dir)
    except (JournalError, OSError) as exc:
        _err(f"error: {exc}")
        return 2
    if not trail.in_flight():
        _err(f"nothing to recover: every device of {run_dir} is in a final state (report.json is up to date)")
        if fmt is OutputFormat.json:
            from fabriccfg.push.report import report_from_journal

            sys.stdout.write(report_from_journal(run_dir).to_json())
        return 0
    if inventory is None:
        recorded = str(trail.start.get("inventory") or "")
        if not recorded:
            _err("error: the journal names no inventory; pass it: fabriccfg push INVENTORY --recover RUN_DIR")
            return 2
        inventory = Path(recorded)
    fabric = load_inventory(inventory)
    try:
        targets = resolve_targets(fabric, endpoints, inventory_dir=inventory.parent, known_hosts=known_hosts)
    except (EndpointsError, SecretError) as exc:
        _err(f"error: {exc}")
        return 2
    if insecure_host_keys:
        _insecure_warning()
    out = sys.stderr if fmt is OutputFormat.json else sys.stdout
    print(f"recovering {len(trail.in_flight())} device(s) left mid-change by {run_dir}", file=out, flush=True)
    try:
        outcome = recover(run_dir, targets, insecure_host_keys=insecure_host_keys, timeout=timeout,
                          workers=workers, progress=lambda t: print(t, file=out, flush=True))
    except RecoverError as exc:
        _err(f"error: {exc}")
        return 2
    if fmt is OutputFormat.json:
        sys.stdout.write(outcome.report.to_json())
    else:
        final_table(outcome.report, make_console())
    return outcome.exit_code


Opt = typer.Option


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""

    @app.command()
    def push(  # noqa: PLR0917 - typer maps parameters to options
        inventory: Annotated[Path | None, typer.Argument(help="Inventory YAML file (with --recover: "
                                                         "default, the one the run used).")] = None,
        endpoints: Annotated[Path | None, Opt("--endpoints", help="Endpoints file (from 'fabriccfg mock up') "
                                              "instead of the inventory's management addresses.")] = None,
        device: Annotated[list[str] | None, Opt("--device", "-d", help="Only this device (repeatable).")] = (
            None),
        role: Annotated[list[str] | None, Opt("--role", help="Only devices with this role (repeatable).")] = (
            None),
        dry_run: Annotated[bool, Opt("--dry-run", help="Connect, back up, show the diff; change nothing.")]
        = False,
        batch: Annotated[int | None, Opt("--batch", help="Push in batches of N; a batch must succeed before "
                                         "the next starts.")] = None,
        canary: Annotated[int | None, Opt("--canary", help="Push N devices first; the rest only if all of "
                                          "them succeed.")] = None,
        max_failures: Annotated[int | None, Opt("--max-failures", help="Stop starting devices once more than "
                                                "K failed or rolled back (default: no limit).")] = None,
        workers: Annotated[int, Opt("--workers", "-w", help="Devices pushed at the same time (in all "
                                    "processes together).")] = 8,
        processes: Annotated[int | None, Opt("--processes", help="Worker processes sharing the "
                                             "devices (default: the cores, at most one per 25 devices; 1: "
                                             "all in this process).")] = None,
        timeout: Annotated[float, Opt("--timeout", help="Per-device wall-clock limit in seconds "
                                      "(0: none).")] = 300.0,
        confirm_timeout: Annotated[float, Opt("--confirm-timeout", help="Commit-confirm timer in seconds "
                                              "(EOS and NVUE revert unless confirmed).")] = 300.0,
        yes: Annotated[bool, Opt("--yes", "-y", help="Apply without asking.")] = False,
        insecure_host_keys: Annotated[bool, Opt("--insecure-host-keys", help="Do not check SSH host keys "
                                                "(labs only).")] = False,
        fmt: Annotated[OutputFormat, Opt("--format", help="table, or json (the report on stdout).")] = (
            OutputFormat.table),
        run_dir: Annotated[Path, Opt("--run-dir", help="Folder for run records (DIR/<UTC timestamp>/).")] = (
            Path("runs")),
        templates: Annotated[Path | None, Opt("--templates", help="Template folder that overrides the "
                                              "shipped templates.")] = None,
        verify: Annotated[bool, Opt("--verify", help="After each device's change and before confirm, run the "
                                    "health checks on it (fabriccfg verify); a CRITICAL finding rolls it "
                                    "back.")] = False,
        detailed_exitcode: Annotated[bool, Opt("--detailed-exitcode", help="With --dry-run: exit 0 nothing "
                                               "to change, 1 error, 2 changes pending (terraform plan's "
                                               "convention).")] = False,
        known_hosts: Annotated[Path | None, Opt("--known-hosts", help="SSH known_hosts file (default: the "
                                                "inventory's, else <inventory dir>/known_hosts if present, "
                                                "else ~/.ssh/known_hosts).")] = None,
        recover: Annotated[Path | None, Opt(
            "--recover", metavar="RUN_DIR", help="Do not push: read RUN_DIR's journal and bring every device "
            "a dead push left mid-change back to its backup (or confirm a verified change).")] = None,
    ) -> None:
        """Push rendered intent to the devices, transactionally (backup, apply, verify, confirm or roll back).

        Exit 0 when every targeted device is unchanged or applied, 1 otherwise, 2 on a usage error.
        --dry-run --detailed-exitcode: 0 nothing to change, 1 error, 2 changes pending.
        With --recover: 0 when every in-flight device ended at its backup or intent (or nothing was in
        flight), 1 when one could not be, 2 on a usage error.
        """
        if recover is not None:
            raise typer.Exit(run_recover(recover, inventory, endpoints=endpoints, fmt=fmt,
                                         insecure_host_keys=insecure_host_keys,
                                         timeout=timeout if timeout > 0 else 120.0, workers=workers,
                                         known_hosts=known_hosts))
        if inventory is None:
            _err("error: missing argument INVENTORY")
            raise typer.Exit(2)
        checks: list[PostPushCheck] = []
        if verify:  # the verify package's post-push check, for this push only
            from fabriccfg.verify.post_push import enable_for_inventory

            check = enable_for_inventory(inventory)
            checks += [check] if check is not None else []
        try:
            code = run_push(inventory, endpoints=endpoints, devices=device or [], roles=role or [],
                            dry_run=dry_run, batch=batch, canary=canary, max_failures=max_failures,
                            workers=workers, processes=processes, timeout=timeout,
                            confirm_timeout=confirm_timeout, yes=yes,
                            insecure_host_keys=insecure_host_keys, fmt=fmt, run_dir=run_dir,
                            templates=templates, detailed_exitcode=detailed_exitcode,
                            known_hosts=known_hosts, post_push_checks=checks)
        except KeyboardInterrupt:  # before or after the runner (which handles Ctrl-C itself)
            _err("interrupted")
            code = 130
        raise typer.Exit(code)
