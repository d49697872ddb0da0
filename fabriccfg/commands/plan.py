"""`fabriccfg plan` (a change tried on a mock of today's fabric) and `fabriccfg snapshot` (today's running
configs, for `plan --baseline` and `mock up --baseline`). docs/ci.md.

plan exit codes (like ``terraform plan -detailed-exitcode``): 0 no change, 2 changes and every check
passed, 1 a rule error, a change the mock refused, or a new verify finding after the change; 3 usage.
snapshot: 0 every device read, 1 some device could not be read, 2 usage.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from typer import Option as Opt

from fabriccfg.commands._console import fail as _fail


class PlanFormat(StrEnum):
    markdown = "markdown"
    json = "json"
    junit = "junit"


def _write(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    output.parent.mkdir(parents=True, exist_ok=True)
    tmp = output.with_name(output.name + ".tmp")
    tmp.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    tmp.replace(output)


def register(app: typer.Typer) -> None:
    """Add ``plan`` and ``snapshot`` to ``app``."""

    @app.command()
    def plan(  # noqa: PLR0917 - typer maps parameters to options
        inventory: Annotated[Path, typer.Argument(metavar="INVENTORY", help="The changed inventory YAML",
                                                  show_default=False)],
        baseline: Annotated[Path | None, Opt("--baseline", metavar="DIR", help=(
            "Today's running configs, DIR/<device>/<file>: a push run's backups folder or a "
            "'fabriccfg snapshot'"))] = None,
        base_inventory: Annotated[Path | None, Opt("--base-inventory", metavar="OLD.yaml", help=(
            "Start from the configs rendered from this inventory (e.g. the main branch's)"))] = None,
        templates: Annotated[Path | None, Opt("--templates", metavar="DIR", help=(
            "Template folder tried first when rendering the change (overrides per platform)"))] = None,
        base_templates: Annotated[Path | None, Opt("--base-templates", metavar="DIR", help=(
            "Template folder for rendering --base-inventory (default: the shipped templates)"))] = None,
        checks: Annotated[list[Path] | None, Opt("--checks", metavar="DIR", help=(
            "Extra check folder for verify (repeatable)"))] = None,
        fmt: Annotated[PlanFormat, Opt("--format", "-f", help="Report format")] = PlanFormat.markdown,
        output: Annotated[Path | None, Opt("--output", "-o", metavar="FILE", help=(
            "Write the report here (default: stdout)"))] = None,
        markdown: Annotated[Path | None, Opt("--markdown", metavar="FILE", help=(
            "Also write the Markdown report here (for a PR comment next to --format junit)"))] = None,
        interval: Annotated[float, Opt("--interval", min=0.2, help=(
            "Seconds between the two verify samples, before and after"))] = 1.0,
    ) -> None:
        """Try a change on a mock of today's fabric: validate, render, push through the real transactions,
        verify before and after. Exit 0 no change, 2 changes that pass, 1 a failure, 3 usage error."""
        from fabriccfg.plan.report import render, to_markdown
        from fabriccfg.plan.run import PlanInputError, PlanOptions, run_plan

        opts = PlanOptions(inventory=inventory, baseline=baseline, base_inventory=base_inventory,
                           templates=templates, base_templates=base_templates, checks=checks or [],
                           interval=interval)
        try:
            result = run_plan(opts)
        except PlanInputError as exc:
            raise _fail(str(exc), 3) from None
        _write(render(result, fmt.value), output)
        if markdown is not None:
            _write(to_markdown(result), markdown)
        typer.echo(result.summary, err=True)
        raise typer.Exit(result.exit_code)

    @app.command()
    def snapshot(  # noqa: PLR0917 - typer maps parameters to options
        inventory: Annotated[Path, typer.Argument(metavar="INVENTORY", help="Inventory YAML",
                                                  show_default=False)],
        output: Annotated[Path, Opt("--output", "-o", metavar="DIR", help=(
            "Folder for DIR/<device>/<file> (what 'plan --baseline' and 'mock up --baseline' read)"))],
        endpoints: Annotated[Path | None, Opt("--endpoints", help=(
            "Endpoints file (from 'fabriccfg mock up') instead of the inventory's management addresses"))]
        = None,
        workers: Annotated[int, Opt("--workers", min=1, help="Devices read in parallel")] = 8,
        timeout: Annotated[float, Opt("--timeout", min=1.0, help="Per-device deadline, seconds")] = 120.0,
        insecure_host_keys: Annotated[bool, Opt("--insecure-host-keys", help=(
            "Do not check host keys (labs only)"))] = False,
    ) -> None:
        """Read every device's running config (the push transactions' own fetch) into DIR/<device>/<file>."""
        from fabriccfg.inventory.load import InventoryError, load_fabric
        from fabriccfg.push.api import live_diff, plan_jobs
        from fabriccfg.push.runner import RunnerOptions
        from fabriccfg.secrets import SecretError
        from fabriccfg.targets import Access, EndpointsError, resolve_targets

        try:
            fabric = load_fabric(inventory)
            ssh_only: tuple[Access, ...] = ("ssh",)
            targets = resolve_targets(fabric, endpoints, inventory_dir=inventory.parent, access=ssh_only)
        except InventoryError as exc:
            raise _fail(f"{inventory}: invalid inventory: {str(exc).splitlines()[0]}", 2) from None
        except (OSError, EndpointsError, SecretError) as exc:
            raise _fail(str(exc), 2) from None
        jobs = plan_jobs(fabric, targets, list(fabric.devices),
                         endpoints_source=str(endpoints) if endpoints else "the inventory")
        with tempfile.TemporaryDirectory(prefix="fabriccfg-snapshot-") as tmp:
            runner = RunnerOptions(workers=workers, timeout=timeout)
            (Path(tmp) / "run").mkdir()
            report = live_diff(fabric, jobs, run_base=tmp, runner=runner,
                               insecure_host_keys=insecure_host_keys, run_dir=Path(tmp) / "run")
            output.mkdir(parents=True, exist_ok=True)
            bad = 0
            for res in report.devices:
                if not res.target:
                    continue
                if not res.backup:
                    bad += 1
                    typer.echo(f"{res.name}: not read: {res.reason}", err=True)
                    continue
                dest = output / res.name
                dest.mkdir(exist_ok=True)
                for rel in res.backup:
                    shutil.copyfile(Path(tmp) / "run" / rel, dest / Path(rel).name)
        read = sum(1 for r in report.devices if r.target and r.backup)
        typer.echo(f"{read} device(s) -> {output}" + (f"; {bad} not read" if bad else ""), err=True)
        raise typer.Exit(1 if bad else 0)
