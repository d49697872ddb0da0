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

EXIT_OK, EXIT_DIFF, EXIT_USAGE, EXIT_UNREACHABLE = 0, 1, 2, 3
DETAILED = {"ok": 0, "error": 1, "changes": 2}
"""``--detailed-exitcode`` (terraform plan's convention): 0 no changes, 1 error, 2 changes pending."""

InventoryArg = Annotated[Path, typer.Argument(help="Inventory YAML file")]
DeviceOpt = Annotated[
    Optional[list[str]], typer.Option("--device", "-d", help="Only this device (repeatable)")  # noqa: UP045
]
RoleOpt = Annotated[
    Optional[list[str]],  # noqa: UP045
    typer.Option("--role", help="Only devices with this role (leaf, spine, gpu, sm ...; repeatable; with "
                 "--device, either matches)"),
]
KnownHostsOpt = Annotated[
    Optional[Path],  # noqa: UP045
    typer.Option("--known-hosts", help="Live: SSH known_hosts file (default: the inventory's "
                 "credentials.known_hosts, else <inventory dir>/known_hosts if present, else "
                 "~/.ssh/known_hosts)"),
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


def render_or_exit(fabric: Fabric, devices: Iterable[str] | None, roles: Iterable[str] | None,
                   templates: Path | None) -> list[RenderedDevice]:
    """Render the selected devices; an unknown device or role name is a usage error (exit 2)."""
    from fabriccfg.names import select, selection_problem
    from fabriccfg.render.engine import RenderError, render_fabric

    if templates is not None and not templates.is_dir():
        typer.echo(f"error: --templates {templates}: not a folder", err=True)
        raise typer.Exit(2)
    devs, rols = list(devices or []), list(roles or [])
    problem = selection_problem(fabric, devs, rols)
    if problem is not None:
        typer.echo(f"error: {problem}", err=True)
        raise typer.Exit(EXIT_USAGE)
    try:
        return render_fabric(fabric, devices=select(fabric, devs, rols), templates_dir=templates)
    except RenderError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


def insecure_warning() -> None:
    """The one loud line every command prints for ``--insecure-host-keys`` (also recorded in reports)."""
    typer.echo("WARNING: --insecure-host-keys: SSH host keys are NOT checked; anyone on the path can "
               "impersonate a switch and read its credentials. Use only in a lab.", err=True)


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


class NoSavedConfig(Exception):
    """A device has no file in the saved-config folder: skipped, not compared with nothing."""


def saved_running(directory: Path) -> RunningFetcher:
    """Running configs saved as ``directory/<device>/<file>``; a device with none of its files there is
    skipped (:class:`NoSavedConfig`), a device missing only some of them differs by those files."""

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
                out[dev.name] = files if files else NoSavedConfig(f"no saved config for {dev.name}, skipped")
        return out

    return fetch


def run_diff(rendered: list[RenderedDevice], fetch: RunningFetcher, console: Console, *,
             detailed: bool = False) -> int:
    """Diff every rendered device against what ``fetch`` returns; print; return the exit code.

    Default: 0 no difference, 1 differences, 3 a device's running config could not be read.
    ``detailed`` (``--detailed-exitcode``): 0 no difference, 1 error (a device could not be read),
    2 differences. A device without a saved config is skipped and named, in both modes.
    """
    from fabriccfg.render.diff import diff_device

    running = fetch(rendered)
    diffs: dict[str, DeviceDiff] = {}
    unreachable: list[str] = []
    skipped: list[str] = []
    for dev in rendered:
        got = running.get(dev.name)
        if isinstance(got, NoSavedConfig):
            console.print(str(got), markup=False, highlight=False)
            skipped.append(dev.name)
            continue
        if isinstance(got, Exception) or got is None:
            console.print(f"[red]{dev.name}: cannot read the running config: {got or 'no answer'}[/red]")
            unreachable.append(dev.name)
            continue
        try:
            diff = diff_device(dev.platform, dev.files, got)
        except ValueError as exc:
            console.print(f"[red]{dev.name}: running config is unreadable: {exc}[/red]")
            unreachable.append(dev.name)
            continue
        diffs[dev.name] = diff
        if diff.changed:
            console.rule(f"{dev.name} ({dev.platform})")
            text = diff.text if diff.text.endswith("\n") else diff.text + "\n"
            console.print(text, markup=False, highlight=False, end="")
    changed = sorted(n for n, d in diffs.items() if d.changed)
    line = f"{len(changed)} of {len(rendered)} devices differ from intent" + (
        f": {', '.join(changed)}" if changed else "")
    if unreachable:
        line += f"; {len(unreachable)} unreachable: {', '.join(unreachable)}"
    if skipped:
        line += f"; {len(skipped)} skipped (no saved config)"
    console.print(line, markup=False, highlight=False)
    if detailed:
        return DETAILED["error"] if unreachable else DETAILED["changes"] if changed else DETAILED["ok"]
    return EXIT_UNREACHABLE if unreachable else EXIT_DIFF if changed else EXIT_OK


def print_one(rendered: list[RenderedDevice]) -> int:
    """``render -o -``: one device's files on stdout (several files each under a ``# ==> name <==`` line,
    as ``head`` does); more than one device is a usage error."""
    import sys

    if len(rendered) != 1:
        names = ", ".join(d.name for d in rendered[:5]) + (" ..." if len(rendered) > 5 else "")
        typer.echo(f"error: -o - prints one device; {len(rendered)} selected ({names}); pick one with "
                   "--device", err=True)
        return EXIT_USAGE
    files = rendered[0].files
    for name, text in sorted(files.items()):
        if len(files) > 1:
            sys.stdout.write(f"# ==> {rendered[0].name}/{name} <==\n")
        sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
    sys.stdout.flush()
    return EXIT_OK


# --------------------------------------------------------------------------- commands
def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""

    @app.command("render")
    def render_cmd(
        inventory: InventoryArg,
        output: Annotated[Path, typer.Option("--output", "-o", help="Output folder: DIR/<device>/<file>; "
                                             "'-' prints one device's config on stdout")],
        device: DeviceOpt = None,
        role: RoleOpt = None,
        templates: TemplatesOpt = None,
    ) -> None:
        """Render every device's configuration from the inventory (deterministic, atomic writes).

        Exit 0 rendered, 1 invalid inventory or template error, 2 usage error (unknown device or role).
        """
        from fabriccfg.commands._console import console as make_console

        fabric = load_or_exit(inventory)
        rendered = render_or_exit(fabric, device, role, templates)
        if str(output) == "-":
            raise typer.Exit(print_one(rendered))
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
        detailed_exitcode: Annotated[
            bool, typer.Option("--detailed-exitcode", help="Exit 0 no differences, 1 error (a device could "
                               "not be read), 2 differences pending (terraform plan's convention)")
        ] = False,
        known_hosts: KnownHostsOpt = None,
    ) -> None:
        """Show how running configs differ from rendered intent: saved ones (--against) or live over SSH.

        Exit 0: no difference, 1: differences, 2: usage error, 3: a device could not be read.
        With --detailed-exitcode: 0 no difference, 1 error, 2 differences.
        """
        from fabriccfg.commands._console import console

        if against is not None and not against.is_dir():
            typer.echo(f"error: --against {against}: not a folder", err=True)
            raise typer.Exit(EXIT_USAGE)
        fabric = load_or_exit(inventory)
        rendered = render_or_exit(fabric, device, role, templates)
        if against is not None:
            raise typer.Exit(run_diff(rendered, saved_running(against), console(),
                                      detailed=detailed_exitcode))
        # live mode (owned by fabriccfg.push): fetch running configs over SSH, in parallel, with deadlines
        from fabriccfg.push.api import live_fetcher
        from fabriccfg.push.runner import RunnerOptions
        from fabriccfg.secrets import SecretError
        from fabriccfg.targets import Access, EndpointsError, resolve_targets

        try:
            ssh_only: tuple[Access, ...] = ("ssh",)  # diff never polls SNMP: its secrets may be unset
            targets = resolve_targets(fabric, endpoints, inventory_dir=inventory.parent, access=ssh_only,
                                      known_hosts=known_hosts)
        except (EndpointsError, SecretError) as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(2) from None
        if insecure_host_keys:
            insecure_warning()
        runner = RunnerOptions(workers=max(1, workers), timeout=timeout if timeout > 0 else None)
        fetch = live_fetcher(fabric, targets, run_base=run_dir, insecure_host_keys=insecure_host_keys,
                             runner=runner, endpoints_source=str(endpoints) if endpoints else "the inventory")
        raise typer.Exit(run_diff(rendered, fetch, console(), detailed=detailed_exitcode))
