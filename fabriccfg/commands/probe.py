"""`fabriccfg probe`: measure tail latency, jitter and bandwidth between GPU-host pairs.

Exit codes like verify (Nagios): 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (a pair could not be
measured; usage errors exit 3 as well).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Annotated

import typer

from fabriccfg.commands.verify import NagiosCommand, fail

FORMATS = ("table", "json", "prometheus")


def probe_cmd(  # noqa: PLR0917 (typer maps parameters to options)
    inventory: Annotated[Path, typer.Argument(help="Inventory YAML file.", show_default=False)],
    endpoints: Annotated[
        Path | None,
        typer.Option(
            "--endpoints",
            help="Endpoints file (mock fabric) instead of the inventory's management addresses.",
        ),
    ] = None,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json or prometheus.")] = "table",
    plan_only: Annotated[bool, typer.Option("--plan", help="Print the pair plan and stop (no SSH).")] = False,
    hosts: Annotated[
        str | None, typer.Option("--hosts", help="Probe only these GPU hosts (comma-separated).")
    ] = None,
    max_pairs: Annotated[
        int, typer.Option("--max-pairs", min=0, help="Run at most N pairs of the plan (0 = all).")
    ] = 0,
    tools: Annotated[
        str,
        typer.Option(
            "--tools", help="Comma-separated: ib_write_lat, ib_send_lat, ib_write_bw, all_reduce_perf."
        ),
    ] = "ib_write_lat,ib_write_bw,all_reduce_perf",
    iterations: Annotated[
        int,
        typer.Option("--iterations", min=5, max=1_000_000, help="perftest latency iterations (fixed count)."),
    ] = 10_000,
    gid_index: Annotated[int, typer.Option("--gid-index", min=0, max=255, help="RoCE GID index (-x).")] = 3,
    tclass: Annotated[
        int | None,
        typer.Option(
            "--tclass",
            min=0,
            max=255,
            help="Override the traffic class (default: the rendered ToS of each NIC).",
        ),
    ] = None,
    state_dir: Annotated[
        Path | None,
        typer.Option(
            "--state-dir", help="Store the results in this sample store (same SQLite file as verify/watch)."
        ),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Also write the JSON document here (input of advise --from-telemetry)."
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="SSH connect timeout, seconds.")
    ] = 15.0,
    listen_timeout: Annotated[
        float, typer.Option("--listen-timeout", min=0.5, help="Deadline for a perftest server to listen.")
    ] = 10.0,
    run_timeout: Annotated[
        float, typer.Option("--run-timeout", min=1.0, help="Deadline for one tool run.")
    ] = 60.0,
    tail_ratio: Annotated[float, typer.Option("--tail-ratio", min=1.0, help="p99.9/p50 budget.")] = 3.0,
    tail_us: Annotated[float, typer.Option("--tail-us", min=0.1, help="p99.9 budget, microseconds.")] = 10.0,
    jitter_us: Annotated[float, typer.Option("--jitter-us", min=0.0, help="t_stdev budget, us.")] = 1.0,
    busbw_fraction: Annotated[
        float, typer.Option("--busbw-fraction", min=0.0, max=1.0, help="busbw budget, fraction of line rate.")
    ] = 0.8,
    insecure_host_keys: Annotated[
        bool, typer.Option("--insecure-host-keys", help="Skip host-key checks (lab only).")
    ] = False,
) -> None:
    """Measure tail latency, jitter and bandwidth between GPU-host pairs (perftest, nccl-tests)."""
    from fabriccfg import secrets, targets
    from fabriccfg.inventory.load import InventoryError, load_fabric
    from fabriccfg.probe import checks, commands, plan, report, runner, store

    if fmt not in FORMATS:
        raise fail(f"--format must be one of {', '.join(FORMATS)}")
    tool_list = tuple(t.strip() for t in tools.split(",") if t.strip())
    allowed = {"ib_write_lat", "ib_send_lat", "ib_write_bw", "all_reduce_perf"}
    if not tool_list or set(tool_list) - allowed:
        raise fail(f"--tools: choose from {', '.join(sorted(allowed))}")
    try:
        fabric = load_fabric(inventory)
    except InventoryError as exc:
        raise fail(f"{inventory}: {str(exc).splitlines()[0] if str(exc) else 'invalid inventory'}") from None
    except OSError as exc:
        raise fail(f"{inventory}: {exc.strerror or exc}") from None
    chosen = [h.strip() for h in hosts.split(",") if h.strip()] if hosts else None
    if chosen:
        from fabriccfg.names import unknown_names

        problem = unknown_names("GPU host", chosen, {n.host for n in plan.host_nics(fabric)}, "the inventory")
        if problem is not None:
            raise fail(problem)
    try:
        pairs = plan.plan(fabric, chosen)
    except plan.PlanError as exc:
        raise fail(str(exc)) from None
    leaves = {n.leaf for n in plan.host_nics(fabric) if chosen is None or n.host in chosen}
    covered = plan.covered_leaves(pairs)
    kinds = ", ".join(f"{sum(1 for p in pairs if p.kind == k)} {k}" for k in sorted({p.kind for p in pairs}))
    typer.echo(
        f"pair plan: {len(pairs)} pairs ({kinds}) cover {len(covered)} of {len(leaves)} leaves "
        f"with GPU hosts",
        err=fmt != "table" and not plan_only,
    )
    if plan_only:
        for p in pairs:
            typer.echo(f"{p.kind:<11} rail {p.rail:<2} {p.name}  [{' -> '.join(p.leaves)}]")
        raise typer.Exit(0)
    if max_pairs:
        pairs = pairs[:max_pairs]
    try:
        tgts = targets.resolve_targets(fabric, endpoints, inventory.parent)
    except targets.EndpointsError as exc:
        raise fail(str(exc)) from None
    except secrets.SecretError as exc:
        raise fail(str(exc)) from None
    opts = commands.ProbeOptions(
        lat_iterations=iterations, gid_index=gid_index, tclass=tclass, tools=tool_list
    )
    results = runner.run(
        fabric,
        pairs,
        tgts,
        opts,
        timeout=timeout,
        listen_timeout=listen_timeout,
        run_timeout=run_timeout,
        insecure_host_keys=insecure_host_keys,
    )
    budgets = checks.Budgets(
        tail_ratio=tail_ratio, tail_us=tail_us, jitter_stdev_us=jitter_us, busbw_fraction=busbw_fraction
    )
    findings = checks.evaluate(fabric, results, budgets)
    rate = min((checks.line_rate_gbytes(fabric, r) for r in results), default=None)
    doc = report.document(fabric, pairs, len(leaves), results, findings, rate)
    if state_dir is not None:
        try:
            store.save(state_dir, doc)
        except (OSError, sqlite3.Error) as exc:  # a store problem must not lose the measurement
            typer.echo(f"warning: results not stored: {exc}", err=True)
    if output is not None:
        output.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    if fmt == "json":
        typer.echo(json.dumps(doc, indent=2))
    elif fmt == "prometheus":
        typer.echo(report.prometheus(doc), nl=False)
    else:
        typer.echo(report.table(doc), nl=False)
    raise typer.Exit(int(doc["exit_code"]))


def register(app: typer.Typer) -> None:
    """Add ``probe`` to ``app``."""
    app.command("probe", cls=NagiosCommand)(probe_cmd)
