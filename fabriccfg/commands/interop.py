"""`fabriccfg import netbox` and `fabriccfg export nornir|ansible`: the inventory from and to other tools.

Exit codes: 0 written; 1 the data cannot make a valid inventory (every problem listed, nothing
written); 2 usage error (bad option, unreadable mapping, secret reference not resolvable).
Files are written only after everything is known to be good, each atomically.
"""

from __future__ import annotations

import os
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from fabriccfg.commands._console import fail as _fail

import_app = typer.Typer(
    help="Build an inventory from another source of truth (NetBox).", no_args_is_help=True
)
export_app = typer.Typer(help="Write the inventory for Nornir or Ansible.", no_args_is_help=True)


class ExportFormat(StrEnum):
    nornir = "nornir"
    ansible = "ansible"


def _write_all(files: dict[Path, str]) -> None:
    """Write every file through a temp file + rename, after all of them were produced."""
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            Path(tmp).replace(path)
        except OSError as exc:
            raise _fail(f"cannot write {path}: {exc.strerror or exc}", 1) from None


@import_app.command("netbox")
def import_netbox(  # noqa: PLR0917 (typer maps parameters to options)
    url: Annotated[
        str,
        typer.Option("--url", help="NetBox base URL, e.g. https://netbox.example.net", show_default=False),
    ],
    token: Annotated[
        str,
        typer.Option(
            "--token", help="API token as a secret reference: env:NAME or file:PATH", show_default=False
        ),
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Inventory file to write", show_default=False)
    ],
    site: Annotated[str | None, typer.Option("--site", help="NetBox site slug")] = None,
    tag: Annotated[str | None, typer.Option("--tag", help="NetBox tag slug")] = None,
    mapping_file: Annotated[
        Path | None,
        typer.Option("--mapping", help="YAML: platforms/roles slug maps, custom_fields, fabric, credentials"),
    ] = None,
    platform_map: Annotated[
        list[str] | None,
        typer.Option("--platform-map", help="NETBOX_PLATFORM_SLUG=fabriccfg-platform (repeatable)"),
    ] = None,
    role_map: Annotated[
        list[str] | None,
        typer.Option("--role-map", help="NETBOX_ROLE_SLUG=leaf|spine|core|gpu|sm|skip (repeatable)"),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option("--name", help="Fabric name [default: mapping, else 'netbox']", show_default=False),
    ] = None,
    technology: Annotated[
        str | None,
        typer.Option(
            "--technology", help="infiniband or roce [default: from the switch platforms]", show_default=False
        ),
    ] = None,
    link_speed: Annotated[
        str | None,
        typer.Option(
            "--link-speed",
            help="Fabric link speed, e.g. 400G or HDR [default: most common cabled speed]",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Build an inventory from NetBox devices, interfaces and cables; exit 1 listing anything unmapped."""
    from fabriccfg.interop.build import ImportProblems, build_inventory, dump_inventory
    from fabriccfg.interop.mapping import MappingError, load_mapping
    from fabriccfg.interop.netbox import NetboxError, fetch
    from fabriccfg.inventory.load import loads
    from fabriccfg.secrets import SecretError, redact, resolve

    if not token.startswith(("env:", "file:")):
        raise _fail("--token must be a secret reference (env:NAME or file:PATH), never the token itself")
    if technology not in (None, "infiniband", "roce"):
        raise _fail(f"--technology {technology!r}: use infiniband or roce")
    try:
        mapping = load_mapping(mapping_file, platform_map or [], role_map or [])
        secret = resolve(token)
    except (MappingError, SecretError) as exc:
        raise _fail(str(exc)) from None
    try:
        data = fetch(url, secret, site=site, tag=tag)
        doc, summary = build_inventory(
            data, mapping, fabric_name=name, technology=technology, link_speed=link_speed
        )
    except NetboxError as exc:
        raise _fail(str(exc), 1) from None
    except ImportProblems as exc:
        for problem in exc.problems:
            typer.echo(f"fabriccfg: import: {redact(problem)}", err=True)
        raise _fail(f"{len(exc.problems)} problem(s); nothing written to {output}", 1) from None
    where = ", ".join(f"{k} {v}" for k, v in (("site", site), ("tag", tag)) if v) or "all devices"
    text = dump_inventory(doc, f"NetBox {data.version} at {url}, {where}")
    result = loads(text, str(output))
    if not result.ok:
        for f in result.findings:
            if f.severity == "error":
                typer.echo(redact(f.format()), err=True)
        raise _fail(f"the imported inventory does not validate; nothing written to {output}", 1)
    _write_all({output: text})
    for note in summary.notes:
        typer.echo(f"fabriccfg: import: {note}", err=True)
    typer.echo(
        f"wrote {output}: {summary.switches} switches, {summary.hosts} hosts, {summary.management_hosts} "
        f"management hosts, {summary.links} links from NetBox {data.version} "
        f"({summary.skipped_devices} devices skipped by role, {summary.cables_outside} cables to devices "
        "outside the import)",
        err=True,
    )


@export_app.command("nornir")
def export_nornir(
    inventory: Annotated[
        Path, typer.Argument(metavar="INVENTORY", help="Inventory YAML", show_default=False)
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Directory for hosts/groups/defaults.yaml", show_default=False),
    ],
) -> None:
    """Nornir SimpleInventory: hosts (hostname, netmiko platform), groups by role and rail, defaults."""
    _export(ExportFormat.nornir, inventory, output)


@export_app.command("ansible")
def export_ansible(
    inventory: Annotated[
        Path, typer.Argument(metavar="INVENTORY", help="Inventory YAML", show_default=False)
    ],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Directory for inventory.yaml", show_default=False)
    ],
) -> None:
    """Ansible YAML inventory: ansible_host, ansible_network_os per platform, groups by role and rail."""
    _export(ExportFormat.ansible, inventory, output)


def _export(fmt: ExportFormat, inventory: Path, output: Path) -> None:
    from fabriccfg.interop import export
    from fabriccfg.inventory.load import load
    from fabriccfg.secrets import redact

    if output.exists() and not output.is_dir():
        raise _fail(f"{output} exists and is not a directory")
    result = load(inventory)
    if not result.ok or result.fabric is None:
        for f in result.findings:
            if f.severity == "error":
                typer.echo(redact(f.format()), err=True)
        raise _fail(f"{inventory} is not a valid inventory; nothing exported", 1)
    files = export.nornir(result.fabric) if fmt is ExportFormat.nornir else export.ansible(result.fabric)
    _write_all({output / name: text for name, text in files.items()})
    hosts, left = export.managed(result.fabric)
    typer.echo(
        f"wrote {', '.join(str(output / n) for n in files)}: {len(hosts)} hosts"
        + (f" ({len(left)} without CLI or address left out)" if left else ""),
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add the import and export command groups to ``app``."""
    app.add_typer(import_app, name="import")
    app.add_typer(export_app, name="export")
