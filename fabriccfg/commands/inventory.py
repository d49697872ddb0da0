"""`fabriccfg` commands of the inventory family: validate, schema, gen, rules.

Exit codes follow the compiler convention CI expects: 0 valid (warnings printed), 1 invalid,
2 usage error. Every user mistake is one line with a position, never a traceback.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from fabriccfg.commands._console import fail as _fail


class OutputFormat(StrEnum):
    text = "text"
    json = "json"


class TechnologyChoice(StrEnum):
    infiniband = "infiniband"
    roce = "roce"


def _size(value: str | None) -> int | None:
    from fabriccfg.inventory.load import parse_size

    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def validate(
    inventories: Annotated[
        list[Path], typer.Argument(metavar="INVENTORY", help="Inventory YAML file(s)", show_default=False)
    ],
    output: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="text (one line per problem) or json")
    ] = OutputFormat.text,
    quiet: Annotated[
        bool, typer.Option("--quiet", "-q", help="Print errors only, no warnings or summary")
    ] = False,
    max_errors: Annotated[
        int, typer.Option("--max-errors", min=0, help="Problems printed per file (0: all); the rest counted")
    ] = 100,
    max_bytes: Annotated[
        str | None,
        typer.Option("--max-inventory-bytes", envvar="FABRICCFG_MAX_INVENTORY_BYTES", show_default=False,
                     help="Refuse larger files (bytes, or 16M, 64MiB...) [default: 16M]"),
    ] = None,
) -> None:
    """Validate inventories: fields, then fabric-wide rules. Exit 0 valid, 1 invalid, 2 usage error."""
    from fabriccfg.inventory.findings import cap, capped_lines
    from fabriccfg.inventory.load import file_problem, load
    from fabriccfg.secrets import redact

    limit = _size(max_bytes)
    for p in inventories:
        problem = file_problem(p)
        if problem is None or problem[0] == "unreadable":
            continue
        if p.is_dir():
            raise _fail(f"{p} is a directory; give inventory files (e.g. {p}/*.yaml)")
        raise _fail(f"{p}: {problem[1]}")
    files = []
    all_ok = True
    for path in inventories:
        result = load(path, max_bytes=limit)
        ok = result.ok
        all_ok = all_ok and ok
        findings = [f for f in result.findings if not (quiet and f.severity != "error")]
        if output is OutputFormat.json:
            shown, more = cap(findings, max_errors)
            files.append({"file": str(path), "valid": ok, "findings": [f.as_dict() for f in shown],
                          "omitted": more})
            continue
        for line in capped_lines(findings, str(path), max_errors):
            typer.echo(redact(line))
        if not quiet:
            errors = sum(f.severity == "error" for f in result.findings)
            warnings = sum(f.severity == "warning" for f in result.findings)
            state = "valid" if ok else "INVALID"
            size = ""
            if result.fabric is not None:
                fab = result.fabric
                size = (
                    f" ({len(fab.switches)} switches, {len(fab.hosts)} hosts, {len(fab.management_hosts)} "
                    f"management hosts, {len(fab.links)} links)"
                )
            typer.echo(f"{path}: {state}{size}: {errors} error(s), {warnings} warning(s)", err=True)
    if output is OutputFormat.json:
        typer.echo(redact(json.dumps({"files": files}, indent=2)))
    raise typer.Exit(0 if all_ok else 1)


def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to FILE instead of stdout")
    ] = None,
) -> None:
    """Print the inventory's JSON Schema (point your YAML editor at it)."""
    from fabriccfg.inventory.schema import inventory_schema

    text = json.dumps(inventory_schema(), indent=2) + "\n"
    if output is None:
        typer.echo(text, nl=False)
        return
    _write(output, text)


def _write(path: Path, text: str) -> None:
    """Write atomically (temp file + rename) so a failed run never leaves half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        Path(tmp).replace(path)
    except OSError as exc:
        raise _fail(f"cannot write {path}: {exc.strerror or exc}", 1) from None


def gen(  # noqa: PLR0917 (typer maps parameters to options)
    gpus: Annotated[int, typer.Option("--gpus", help="Number of GPUs", show_default=False)],
    technology: Annotated[TechnologyChoice, typer.Option("--technology", "-t", help="infiniband or roce")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Inventory file to write ('-' for stdout)")],
    gpus_per_node: Annotated[int, typer.Option("--gpus-per-node", help="GPUs per node")] = 8,
    rails: Annotated[
        int | None,
        typer.Option("--rails", help="NIC rails per node [default: --gpus-per-node]", show_default=False),
    ] = None,
    oversubscription: Annotated[
        str, typer.Option("--oversubscription", help="Leaf host:uplink bandwidth")
    ] = "1:1",
    platform: Annotated[
        str | None,
        typer.Option("--platform", help="RoCE switch platform: cumulus-nvue (default), sonic, eos or nxos"),
    ] = None,
) -> None:
    """Generate the inventory of a rail-optimised 2- or 3-tier fat tree sized by switch radix."""
    from fabriccfg.inventory.gen import GenError, Technology, dump_yaml, generate

    try:
        tech: Technology = "infiniband" if technology is TechnologyChoice.infiniband else "roce"
        data = generate(gpus, tech, gpus_per_node, rails, oversubscription, platform=platform)
    except GenError as exc:
        raise _fail(str(exc)) from None
    text = dump_yaml(data)
    if str(output) == "-":
        sys.stdout.write(text)
        return
    _write(output, text)
    typer.echo(f"wrote {output}: {data['fabric']['description']}", err=True)


def rules(
    output: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="text (one line per rule) or json (a list of "
                                   "{id, severity, summary})")
    ] = OutputFormat.text,
) -> None:
    """List the fabric-wide rules: id, severity and what each checks."""
    from fabriccfg.inventory.rules import RULES, load_families

    load_families()
    ordered = sorted(RULES.values(), key=lambda r: r.id)
    if output is OutputFormat.json:
        typer.echo(json.dumps([{"id": r.id, "severity": r.severity, "summary": r.summary} for r in ordered],
                              indent=2))
        return
    width = max(len(r) for r in RULES)
    for r in ordered:
        typer.echo(f"{r.id:<{width}}  {r.severity:<7}  {r.summary}")


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command()(validate)
    app.command()(schema)
    app.command()(gen)
    app.command()(rules)
