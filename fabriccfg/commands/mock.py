"""`fabriccfg mock up|down|inject`: run the mock fabric (docs/mock.md).

Exit codes: 0 ok, 1 the mock failed (start, stop, inject), 2 usage error (bad inventory, fault or
scenario spec, missing endpoints).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from fabriccfg.commands._console import console as make_console
from fabriccfg.commands._console import fail as _fail

mock_app = typer.Typer(help="Run a mock fabric on loopback: real SSH CLIs and SNMP agents per device.",
                       no_args_is_help=True)

EndpointsOpt = Annotated[Path, typer.Option("--endpoints", "-e", help="Endpoints file (JSON) of the mock",
                                            show_default=True)]
DEFAULT_ENDPOINTS = Path(".fabriccfg/mock-endpoints.json")


def _table(endpoints_file: Path, start_seconds: float | None, faults: dict[str, list[str]]) -> None:
    from rich.table import Table

    from fabriccfg.targets import load_endpoints

    eps = load_endpoints(endpoints_file)
    table = Table(title=f"mock fabric: {len(eps)} devices" +
                  (f", started in {start_seconds:.2f} s" if start_seconds is not None else ""))
    for col in ("device", "platform", "device_type", "ssh", "snmp", "faults"):
        table.add_column(col)
    for ep in eps.values():
        table.add_row(ep.name, ep.platform, ep.device_type or "-", f"{ep.host}:{ep.ssh_port}",
                      str(ep.snmp_port) if ep.snmp_port else "-", ", ".join(faults.get(ep.name, [])) or "-")
    console = make_console()
    console.print(table)
    console.print(f"endpoints: {endpoints_file}  known_hosts: "
                  f"{endpoints_file.with_name(endpoints_file.stem + '.known_hosts')}")


def up(  # noqa: PLR0917 (typer maps parameters to options)
    inventory: Annotated[Path, typer.Argument(metavar="INVENTORY", help="Inventory YAML",
                                              show_default=False)],
    scenario: Annotated[list[str] | None, typer.Option("--scenario", "-s", metavar="NAME[:ARGS]",
                                                       help="Traffic scenario (repeatable)")] = None,
    fault: Annotated[list[str] | None, typer.Option("--fault", metavar="DEVICE:KIND[=ARG]",
                                                    help="Inject a fault (repeatable)")] = None,
    endpoints: EndpointsOpt = DEFAULT_ENDPOINTS,
    detach: Annotated[bool, typer.Option("--detach", "-d",
                                         help="Run in the background; stop with 'mock down'")]
    = False,
    seed: Annotated[int, typer.Option("--seed", help="Traffic model seed")] = 0,
    workers: Annotated[int | None, typer.Option("--workers",
                                                help="Worker processes (default: by size)")] = None,
    backend: Annotated[str, typer.Option(
        "--backend", metavar="modelled|ibsim",
        help="modelled: outputs drawn from the traffic model; ibsim (InfiniBand): the real OpenSM and "
             "infiniband-diags on a fabric simulated by ibsim (falls back to modelled when not installed)")]
    = "modelled",
    serve: Annotated[bool, typer.Option("--serve-detached", hidden=True)] = False,
    baseline: Annotated[Path | None, typer.Option(
        "--baseline", metavar="DIR",
        help="Start each device from its running config in DIR/<device>/<file> (a push run's backups, a "
             "'fabriccfg snapshot', or rendered output)")] = None,
) -> None:
    """Start one mock device per managed device of INVENTORY and write the endpoints file."""
    from fabriccfg.inventory.load import InventoryError, load_fabric
    from fabriccfg.mock.baseline import BaselineError, read_folder
    from fabriccfg.mock.fabric import MockError, MockFabric, managed_devices, remove_files

    if not inventory.is_file():
        raise _fail(f"no such file: {inventory}")
    try:
        fabric = load_fabric(inventory)
    except InventoryError as exc:
        raise _fail(f"{inventory}: invalid inventory: {str(exc).splitlines()[0]}") from None
    try:
        baselines = read_folder(baseline, managed_devices(fabric)) if baseline is not None else {}
        mock = MockFabric(fabric, scenarios=scenario or [], faults=fault or [], seed=seed,
                          endpoints_file=endpoints, processes=workers, inventory_path=inventory,
                          backend=backend, baselines=baselines)
    except (MockError, BaselineError) as exc:
        raise _fail(str(exc)) from None
    if mock.fallback and not serve:
        typer.echo(f"fabriccfg: warning: {mock.fallback}", err=True)
    pid_file = endpoints.with_name(endpoints.stem + ".pid")
    if detach and not serve:
        _detach(inventory, scenario or [], fault or [], endpoints, seed, workers, pid_file, mock.backend,
                baseline)
        return
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    if serve:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        mock.start()
    except (MockError, OSError) as exc:
        raise _fail(f"mock fabric did not start: {exc}", 1) from None
    try:
        faults = {s.name: s.faults for s in mock.started.values()}
        if serve:
            pid_file.write_text(f"{os.getpid()}\n", encoding="utf-8")
            sys.stdout.write(f"READY {mock.start_seconds:.3f}\n")
            sys.stdout.flush()
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
        else:
            _table(endpoints, mock.start_seconds, faults)
            typer.echo(f"mock fabric running ({mock.backend} backend); Ctrl-C stops it")
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    finally:
        mock.stop()
        remove_files(endpoints, mock.processes)


def _detach(  # noqa: PLR0917
        inventory: Path, scenarios: list[str], faults: list[str], endpoints: Path, seed: int,
            workers: int | None, pid_file: Path, backend: str = "modelled",
            baseline: Path | None = None) -> None:
    from fabriccfg.mock.fabric import remove_files

    if pid_file.is_file():
        pid = _read_pid(pid_file)
        if pid and _is_ours(pid):
            raise _fail(f"a mock fabric is already running (pid {pid}); run 'fabriccfg mock down' first", 1)
    endpoints.parent.mkdir(parents=True, exist_ok=True)
    log_file = endpoints.with_name(endpoints.stem + ".log")
    cmd = [sys.executable, "-m", "fabriccfg.cli", "mock", "up", str(inventory), "--endpoints", str(endpoints),
           "--seed", str(seed), "--backend", backend, "--serve-detached"]
    for s in scenarios:
        cmd += ["--scenario", s]
    for f in faults:
        cmd += ["--fault", f]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    if baseline is not None:
        cmd += ["--baseline", str(baseline)]
    with log_file.open("wb") as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=log,
                                start_new_session=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode(errors="replace").strip()
    proc.stdout.close()
    if not line.startswith("READY"):
        proc.wait(timeout=10)
        remove_files(endpoints)
        detail = log_file.read_text(errors="replace").strip().splitlines()
        raise _fail(f"mock fabric did not start: {detail[-1] if detail else 'no output'}", 1)
    start_seconds = float(line.split()[1])
    state = json.loads(endpoints.with_name(endpoints.stem + ".state.json").read_text(encoding="utf-8"))
    _table(endpoints, start_seconds, _faults_by_device(state.get("faults", [])))
    typer.echo(f"mock fabric running in the background (pid {proc.pid}); stop it with "
               f"'fabriccfg mock down --endpoints {endpoints}'")


def _faults_by_device(specs: list[str]) -> dict[str, list[str]]:
    from fabriccfg.mock.ssh import faults_by_device

    return {name: f.kinds() for name, f in faults_by_device(specs).items()}


def _read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text(encoding="utf-8").strip())
    except (OSError, ValueError):
        return None


def _is_ours(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"fabriccfg" in cmdline and b"--serve-detached" in cmdline


def down(endpoints: EndpointsOpt = DEFAULT_ENDPOINTS) -> None:
    """Stop the background mock fabric started with 'mock up --detach'."""
    from fabriccfg.mock.fabric import remove_files

    pid_file = endpoints.with_name(endpoints.stem + ".pid")
    pid = _read_pid(pid_file)
    if pid is None:
        raise _fail(f"no detached mock fabric for {endpoints} (no {pid_file.name})", 1)
    if _is_ours(pid):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        while _is_ours(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if _is_ours(pid):
            os.kill(pid, signal.SIGKILL)
    remove_files(endpoints)
    typer.echo(f"mock fabric stopped (pid {pid})")


def inject(
    scenario: Annotated[str | None, typer.Argument(metavar="SCENARIO", help="NAME[:ARGS]")] = None,
    clear: Annotated[bool, typer.Option("--clear", help="End every active scenario")] = False,
    endpoints: EndpointsOpt = DEFAULT_ENDPOINTS,
) -> None:
    """Inject a traffic scenario into a running mock fabric (or --clear them)."""
    from fabriccfg.mock.fabric import MockError, send_control

    if (scenario is None) == (not clear):
        raise _fail("give a SCENARIO or --clear")
    state_file = endpoints.with_name(endpoints.stem + ".state.json")
    try:
        state: dict[str, Any] = json.loads(state_file.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        raise _fail(f"no running mock fabric for {endpoints}") from None
    fabric = None
    if scenario is not None and state.get("inventory"):
        from fabriccfg.inventory.load import InventoryError, load_fabric

        try:
            fabric = load_fabric(Path(state["inventory"]))
        except InventoryError:
            fabric = None
    op: dict[str, Any] = {"op": "clear"} if clear else {"op": "inject", "spec": scenario}
    try:
        send_control(endpoints, op, int(state.get("workers", 1)), fabric=fabric,
                     timeout=90.0 if state.get("backend") == "ibsim" else 5.0)
    except MockError as exc:
        raise _fail(str(exc), 1) from None
    typer.echo("scenarios cleared" if clear else f"injected {scenario}")


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    mock_app.command("up")(up)
    mock_app.command("down")(down)
    mock_app.command("inject")(inject)
    app.add_typer(mock_app, name="mock")
