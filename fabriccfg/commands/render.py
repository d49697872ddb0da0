"""`fabriccfg` commands of the render family: ``render`` (write configs) and ``diff`` (intent vs running).

``diff`` is built around :func:`run_diff`, which takes a *running-config source*: ``--against DIR``
reads saved configs from ``DIR/<device>/<file>``; the push family adds a live source (``--endpoints``)
by passing its own fetcher, so both paths print and exit the same way.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from fabriccfg.inventory.models import Fabric
    from fabriccfg.render.diff import DeviceDiff
    from fabriccfg.render.engine import RenderedDevice

RunningFetcher = Callable[[list["RenderedDevice"]], dict[str, "dict[str, str] | Exception"]]
"""Rendered devices -> per device its running files, or the exception that kept us from reading them."""

EXIT_OK, EXIT_DIFF, EXIT_UNREACHABLE = 0, 1, 3

InventoryArg = Annotated[Path, typer.Argument(help="Inventory YAML file")]
DeviceOpt = Annotated[
    Optional[list[str]], typer.Option("--device", "-d", help="Only this device (repeatable)")  # noqa: UP045
]
RoleOpt = Annotated[
    Optional[str], typer.Option("--role", help="Only devices with this role (leaf, spine, gpu, sm ...)")  # noqa: UP045
]
TemplatesOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--templates", help="Folder of templates that override the shipped ones"),
]


# --------------------------------------------------------------------------- shared helpers
def load_or_exit(inventory: Path) -> Fabric:
    """Load and validate; on errors print every finding as ``validate`` does and exit 1."""
    from fabriccfg.inventory.findings import capped_lines, has_errors
    from fabriccfg.inventory.load import load

    result = load(inventory)
    if result.fabric is None or has_errors(result.findings):
        for line in capped_lines(result.findings, str(inventory), 100):
            typer.echo(line)
        raise typer.Exit(1)
    return result.fabric


def render_or_exit(fabric: Fabric, devices: Iterable[str] | None, role: str | None,
                   templates: Path | None) -> list[RenderedDevice]:
    from fabriccfg.render.engine import RenderError, render_fabric

    if templates is not None and not templates.is_dir():
        typer.echo(f"error: --templates {templates}: not a folder", err=True)
        raise typer.Exit(2)
    try:
        return render_fabric(fabric, devices=list(devices) if devices else None, role=role,
                             templates_dir=templates)
    except RenderError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Write ``text`` to ``path`` through a temp file in the same folder and a rename (never half-written)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        Path(tmp).chmod(mode)
        Path(tmp).replace(path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_rendered(rendered: list[RenderedDevice], out_dir: Path) -> None:
    """``DIR/<device>/<file>`` for every rendered file; shell scripts are made executable."""
    for dev in rendered:
        for name, text in sorted(dev.files.items()):
            write_atomic(out_dir / dev.name / name, text, 0o755 if name.endswith(".sh") else 0o644)


def summary_table(rendered: list[RenderedDevice]) -> object:
    """A rich table: device, platform, files, lines."""
    from rich.table import Table

    table = Table(title="rendered", title_justify="left")
    table.add_column("device")
    table.add_column("platform")
    table.add_column("files")
    table.add_column("lines", justify="right")
    for dev in rendered:
        table.add_row(dev.name, dev.platform, ", ".join(sorted(dev.files)), str(dev.lines))
    return table


def saved_running(directory: Path) -> RunningFetcher:
    """Running configs saved as ``directory/<device>/<file>`` (a missing file reads as empty/absent)."""

    def fetch(rendered: list[RenderedDevice]) -> dict[str, dict[str, str] | Exception]:
        out: dict[str, dict[str, str] | Exception] = {}
        for dev in rendered:
            files: dict[str, str] = {}
            for name in dev.files:
                path = directory / dev.name / name
                try:
                    files[name] = path.read_text(encoding="utf-8")
                except FileNotFoundError:
                    continue
                except (OSError, UnicodeDecodeError) as exc:
                    out[dev.name] = exc
                    break
            else:
                out[dev.name] = files
        return out

    return fetch


def run_diff(rendered: list[RenderedDevice], fetch: RunningFetcher, console: Console) -> int:
    """Diff every rendered device against what ``fetch`` returns; print; return the exit code.

    0 no difference, 1 differences, 3 a device's running config could not be read.
    """
    from fabriccfg.render.diff import diff_device

    running = fetch(rendered)
    code = EXIT_OK
    diffs: dict[str, DeviceDiff] = {}
    for dev in rendered:
        got = running.get(dev.name)
        if isinstance(got, Exception) or got is None:
            console.print(f"[red]{dev.name}: cannot read the running config: {got or 'no answer'}[/red]")
            code = EXIT_UNREACHABLE
            continue
        try:
            diff = diff_device(dev.platform, dev.files, got)
        except ValueError as exc:
            console.print(f"[red]{dev.name}: running config is unreadable: {exc}[/red]")
            code = EXIT_UNREACHABLE
            continue
        diffs[dev.name] = diff
        if diff.changed:
            console.rule(f"{dev.name} ({dev.platform})")
            text = diff.text if diff.text.endswith("\n") else diff.text + "\n"
            console.print(text, markup=False, highlight=False, end="")
            if code == EXIT_OK:
                code = EXIT_DIFF
    changed = sorted(n for n, d in diffs.items() if d.changed)
    console.print(f"{len(changed)} of {len(rendered)} devices differ from intent"
                  + (f": {', '.join(changed)}" if changed else ""))
    return code


# --------------------------------------------------------------------------- commands
def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""

    @app.command("render")
    def render_cmd(
        inventory: InventoryArg,
        output: Annotated[Path, typer.Option("--output", "-o", help="Output folder: DIR/<device>/<file>")],
        device: DeviceOpt = None,
        role: RoleOpt = None,
        templates: TemplatesOpt = None,
    ) -> None:
        """Render every device's configuration from the inventory (deterministic, atomic writes)."""
        from fabriccfg.commands._console import console as make_console

        fabric = load_or_exit(inventory)
        rendered = render_or_exit(fabric, device, role, templates)
        try:
            write_rendered(rendered, output)
        except OSError as exc:
            typer.echo(f"error: cannot write {output}: {exc}", err=True)
            raise typer.Exit(1) from None
        console = make_console()
        console.print(summary_table(rendered))
        console.print(f"{len(rendered)} devices, {sum(len(d.files) for d in rendered)} files -> {output}")

    @app.command("diff")
    def diff_cmd(  # noqa: PLR0917 - typer maps parameters to options
        inventory: InventoryArg,
        against: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--against", help="Saved running configs: DIR/<device>/<file> (default: read the "
                         "devices live over SSH)"),
        ] = None,
        device: DeviceOpt = None,
        role: RoleOpt = None,
        templates: TemplatesOpt = None,
        endpoints: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--endpoints", help="Live: endpoints file (from 'fabriccfg mock up') instead of the "
                         "inventory's management addresses"),
        ] = None,
        workers: Annotated[int, typer.Option("--workers", "-w", help="Live: devices read at once")] = 8,
        timeout: Annotated[float, typer.Option("--timeout", help="Live: per-device seconds (0: none)")] = (
            120.0),
        insecure_host_keys: Annotated[
            bool, typer.Option("--insecure-host-keys", help="Live: do not check SSH host keys (labs only)")
        ] = False,
        run_dir: Annotated[
            Optional[Path],  # noqa: UP045
            typer.Option("--run-dir", help="Live: keep the fetched configs and session logs in "
                         "DIR/<UTC timestamp>/"),
        ] = None,
    ) -> None:
        """Show how running configs differ from rendered intent: saved ones (--against) or live over SSH.

        Exit 0: no difference, 1: differences, 3: a device could not be read.
        """
        from fabriccfg.commands._console import console

        if against is not None and not against.is_dir():
            typer.echo(f"error: --against {against}: not a folder", err=True)
            raise typer.Exit(2)
        fabric = load_or_exit(inventory)
        rendered = render_or_exit(fabric, device, role, templates)
        if against is not None:
            raise typer.Exit(run_diff(rendered, saved_running(against), console()))
        # live mode (owned by fabriccfg.push): fetch running configs over SSH, in parallel, with deadlines
        from fabriccfg.push.api import live_fetcher
        from fabriccfg.push.runner import RunnerOptions
        from fabriccfg.secrets import SecretError
        from fabriccfg.targets import Access, EndpointsError, resolve_targets

        try:
            ssh_only: tuple[Access, ...] = ("ssh",)  # diff never polls SNMP: its secrets may be unset
            targets = resolve_targets(fabric, endpoints, inventory_dir=inventory.parent, access=ssh_only)
        except (EndpointsError, SecretError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if insecure_host_keys:
            typer.echo("WARNING: --insecure-host-keys: SSH host keys are NOT checked (labs only)", err=True)
        runner = RunnerOptions(workers=max(1, workers), timeout=timeout if timeout > 0 else None)
        fetch = live_fetcher(fabric, targets, run_base=run_dir, insecure_host_keys=insecure_host_keys,
                             runner=runner, endpoints_source=str(endpoints) if endpoints else "the inventory")
        raise typer.Exit(run_diff(rendered, fetch, console()))
