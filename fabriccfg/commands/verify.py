"""`fabriccfg verify` and `fabriccfg watch`: health checks over live telemetry (Nagios exit codes).

Exit codes: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN; usage errors (a bad option, an unreadable
inventory or check file) exit 3 as well, so a monitoring system never reads them as CRITICAL.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click import exceptions as click_exc  # typer vendors click
from typer.core import TyperCommand

USAGE_EXIT = 3
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


class NagiosCommand(TyperCommand):
    """A command whose usage errors exit 3 (UNKNOWN) instead of click's 2 (which means CRITICAL)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click_exc.UsageError as exc:
            exc.exit_code = USAGE_EXIT
            raise


def fail(message: str, code: int = USAGE_EXIT) -> typer.Exit:
    from fabriccfg import secrets

    typer.echo(f"error: {secrets.redact(message)}", err=True)
    return typer.Exit(code)


def parse_duration(text: str) -> float:
    """'30s' -> 30.0, '2m' -> 120.0, '500ms' -> 0.5, '10' -> 10.0."""
    m = _DURATION.match(text)
    if not m:
        raise ValueError(f"{text!r} is not a duration (e.g. 30s, 2m, 500ms)")
    n = float(m.group(1))
    return n * {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[m.group(2) or "s"]


def load_running_configs(root: Path) -> dict[str, dict[str, str]]:
    """``DIR/<device>/<file>`` (a push run's backups, or `fabriccfg render` output of a fetch)."""
    out: dict[str, dict[str, str]] = {}
    if not root.is_dir():
        raise ValueError(f"{root}: not a directory")
    for dev_dir in sorted(p for p in root.iterdir() if p.is_dir()):
        files = {str(f.relative_to(dev_dir)): f.read_text(encoding="utf-8", errors="replace")
                 for f in sorted(dev_dir.rglob("*")) if f.is_file()}
        if files:
            out[dev_dir.name] = files
    return out


def _setup(inventory: Path, endpoints: Path | None, checks_dirs: list[Path] | None,
           only: list[str] | None, known_hosts: Path | None = None) -> tuple[Any, Any, Any]:
    """Fabric, targets and checks, or a one-line error and exit 3."""
    from fabriccfg import secrets, targets
    from fabriccfg.inventory.load import InventoryError, load_fabric
    from fabriccfg.verify.engine import CheckError, load_checks

    try:
        fabric = load_fabric(inventory)
    except InventoryError as exc:
        first = str(exc).splitlines()[0] if str(exc) else "invalid inventory"
        raise fail(f"{inventory}: {first}") from None
    except OSError as exc:
        raise fail(f"{inventory}: {exc.strerror or exc}") from None
    try:
        tgts = targets.resolve_targets(fabric, endpoints, inventory.parent, known_hosts=known_hosts)
    except targets.EndpointsError as exc:
        raise fail(str(exc)) from None
    except secrets.SecretError as exc:
        raise fail(str(exc)) from None
    try:
        checks = load_checks(checks_dirs or [])
    except CheckError as exc:
        raise fail(str(exc)) from None
    if only:
        from fabriccfg.names import unknown_names

        problem = unknown_names("check", only, {c.id for c in checks})
        if problem is not None:
            raise fail(problem)
        checks = [c for c in checks if c.id in only]
    return fabric, tgts, checks


InventoryArg = Annotated[Path, typer.Argument(help="Inventory YAML file.", show_default=False)]
EndpointsOpt = Annotated[Path | None, typer.Option("--endpoints", envvar="FABRICCFG_ENDPOINTS",
                                                   help="Endpoints file (mock fabric) instead of the "
                                                   "inventory's management addresses.")]
ChecksOpt = Annotated[list[Path] | None, typer.Option("--checks", help="Extra check directory (repeatable); "
                                                      "a check with a shipped id replaces it.")]
OnlyOpt = Annotated[list[str] | None, typer.Option("--only", help="Run only this check id (repeatable).")]
StateOpt = Annotated[Path | None, typer.Option("--state-dir", help="Sample store: rates against the previous "
                                               "run (or round), so one poll per run works from cron.")]
FormatOpt = Annotated[str, typer.Option("--format", "-f", help="table, json, junit or prometheus.")]
KnownHostsOpt = Annotated[Path | None, typer.Option(
    "--known-hosts", help="SSH known_hosts file (default: the inventory's, else <inventory dir>/known_hosts "
    "if present, else ~/.ssh/known_hosts).")]
InsecureOpt = Annotated[bool, typer.Option("--insecure-host-keys", help="Do not check SSH host keys (labs "
                                           "only; printed and recorded in the report).")]
AllPrioritiesOpt = Annotated[bool, typer.Option("--all-priorities", help="Prometheus: export per-port series "
                                                "for every priority (default: the lossless and CNP "
                                                "priorities only).")]
INSECURE_NOTE = "host-key checking was disabled (--insecure-host-keys)"


def insecure(flag: bool) -> list[str]:
    """Print the loud warning once and return the note the report records."""
    if not flag:
        return []
    from fabriccfg.commands.render import insecure_warning

    insecure_warning()
    return [INSECURE_NOTE]


def running_note(fabric: Any, running_configs: dict[str, dict[str, str]], check_list: list[Any]) -> None:
    """``--running DIR`` lacking a device's config: say so per device, as ``diff --against`` does."""
    if not any(c.id == "config-drift" for c in check_list):
        return
    from fabriccfg.render.engine import render_spec

    for name, dev in fabric.devices.items():
        if name not in running_configs and render_spec(dev.platform) is not None:
            typer.echo(f"no saved config for {name}, skipped", err=True)


class Progress:
    """Live progress on a terminal while verify samples (stderr, rich); silent in pipes and logs."""

    def __init__(self, samples: int, devices: int) -> None:
        from fabriccfg.commands._console import console, is_tty

        self.samples, self.devices, self.taken = samples, devices, 0
        self.status: Any = None
        if is_tty(sys.stderr):
            self.status = console(stderr=True).status(self._text("starting"))

    def _text(self, what: str) -> str:
        return f"verify: {what} ({self.devices} device(s), {self.samples} sample(s))"

    def __enter__(self) -> Progress:
        if self.status is not None:
            self.status.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.status is not None:
            self.status.__exit__(*exc)

    def update(self, what: str) -> None:
        if self.status is not None:
            self.status.update(self._text(what))

    def collector(self, inner: Any) -> Any:
        def run(fabric: Any, targets: Any) -> Any:
            self.taken += 1
            self.update(f"polling sample {self.taken}/{self.samples}")
            return inner(fabric, targets)

        return run

    def sleep(self, seconds: float) -> None:
        import time

        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            self.update(f"next sample in {left:.0f} s ({self.taken}/{self.samples} taken)")
            time.sleep(min(left, 0.25))


def verify_cmd(  # noqa: PLR0917 (typer maps parameters to options)
    inventory: InventoryArg,
    endpoints: EndpointsOpt = None,
    checks: ChecksOpt = None,
    samples: Annotated[int, typer.Option("--samples", min=1, max=100, help="Snapshots to take.")] = 2,
    interval: Annotated[str, typer.Option("--interval", help="Time between snapshots (5s, 500ms).")] = "5s",
    state_dir: StateOpt = None,
    fmt: FormatOpt = "table",
    only: OnlyOpt = None,
    running: Annotated[Path | None, typer.Option("--running", help="Running configs DIR/<device>/<file> "
                                                 "for config-drift (e.g. a push run's backups).")] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report here "
                                                "instead of stdout.")] = None,
    known_hosts: KnownHostsOpt = None,
    insecure_host_keys: InsecureOpt = False,
) -> None:
    """Check the fabric's health from live telemetry: pause storms and their origin, congestion, drops,
    link, IB, cabling, SM and SHARP. Exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN."""
    from fabriccfg.verify import output as out_mod
    from fabriccfg.verify import runner

    if fmt not in out_mod.FORMATS:
        raise fail(f"--format {fmt!r}: choose one of {', '.join(out_mod.FORMATS)}")
    try:
        every = parse_duration(interval)
    except ValueError as exc:
        raise fail(f"--interval: {exc}") from None
    fabric, tgts, check_list = _setup(inventory, endpoints, checks, only, known_hosts)
    try:
        running_configs = load_running_configs(running) if running is not None else None
    except (OSError, ValueError) as exc:
        raise fail(f"--running: {exc}") from None
    if running_configs is not None:
        running_note(fabric, running_configs, check_list)
    notes = insecure(insecure_host_keys)
    store = runner.PreviousRun(state_dir, scope=f"{fabric.fabric.name}:verify") if state_dir else None
    try:
        with Progress(samples, len(tgts)) as progress:
            collector = runner.default_collector(insecure_host_keys=insecure_host_keys)
            report = runner.verify(fabric, tgts, check_list, progress.collector(collector), samples=samples,
                                   interval=every, store=store, running_configs=running_configs,
                                   sleep=progress.sleep)
    except KeyboardInterrupt:
        raise fail("interrupted") from None
    except Exception as exc:  # a collector or store failure is UNKNOWN, never a traceback
        raise fail(f"verify could not run: {type(exc).__name__}: {exc}") from None
    finally:
        if store is not None:
            store.close()
    report.warnings.extend(notes)
    text = out_mod.render(report, fmt, color=fmt == "table" and output is None and sys.stdout.isatty())
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        typer.echo(text, nl=not text.endswith("\n"))
    raise typer.Exit(report.exit_code)


def watch_cmd(  # noqa: PLR0917
    inventory: InventoryArg,
    endpoints: EndpointsOpt = None,
    checks: ChecksOpt = None,
    every: Annotated[str, typer.Option("--every", help="Round period (30s, 1m).")] = "30s",
    serve: Annotated[str | None, typer.Option("--serve", help="Serve Prometheus metrics on HOST:PORT "
                                              "(e.g. 127.0.0.1:9108).")] = None,
    shard: Annotated[str | None, typer.Option("--shard", help="Poll only shard I of N (I/N, 0-based), "
                                              "by a stable hash of the device name.")] = None,
    once: Annotated[bool, typer.Option("--once", help="One round, print it, exit with its status "
                                       "(cron, systemd timer, Kubernetes CronJob).")] = False,
    rounds: Annotated[int, typer.Option("--rounds", min=0, help="Stop after N rounds (0 = run until "
                                        "stopped).")] = 0,
    state_dir: StateOpt = None,
    fmt: FormatOpt = "table",
    only: OnlyOpt = None,
    textfile: Annotated[Path | None, typer.Option("--textfile", help="Also write each round's Prometheus "
                                                  "text here (node_exporter textfile collector).")] = None,
    damping: Annotated[str, typer.Option("--hysteresis", help="UP/DOWN: a finding's severity rises after "
                                         "UP consistent rounds and falls (or clears) after DOWN; 1/1 "
                                         "turns damping off.")] = "2/3",
    known_hosts: KnownHostsOpt = None,
    insecure_host_keys: InsecureOpt = False,
    all_priorities: AllPrioritiesOpt = False,
    processes: Annotated[int, typer.Option("--processes", min=1, max=64, help="Collector processes "
                                           "(one per core: a round uses every core).")] = 1,
) -> None:
    """Poll the fabric every --every, evaluate the checks each round, and export metrics and check
    states for Prometheus. --once runs a single round (rates against the --state-dir store)."""
    from fabriccfg.verify import hysteresis, runner, watch
    from fabriccfg.verify import output as out_mod

    if fmt not in out_mod.FORMATS:
        raise fail(f"--format {fmt!r}: choose one of {', '.join(out_mod.FORMATS)}")
    try:
        period = parse_duration(every)
        shard_t = runner.parse_shard(shard) if shard else None
        address = watch.parse_address(serve) if serve else None
        damp = hysteresis.parse(damping)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if period <= 0:
        raise fail("--every must be > 0")
    fabric, tgts, check_list = _setup(inventory, endpoints, checks, only, known_hosts)
    notes = insecure(insecure_host_keys)
    # kept sessions live across rounds
    collector = runner.default_collector(insecure_host_keys=insecure_host_keys, shard=shard_t,
                                         keep_sessions=True, processes=processes)
    loop = watch.Watcher(fabric, tgts, check_list, collector, shard=shard_t, state_dir=state_dir,
                         textfile=textfile, damping=damp, all_priorities=all_priorities, warnings=notes)
    if once:
        try:
            report = loop.round()
        except Exception as exc:  # UNKNOWN, never a traceback
            raise fail(f"watch round failed: {type(exc).__name__}: {exc}") from None
        finally:
            loop.close()
        typer.echo(f"{watch.summary(report)}; {loop.series} series", err=True)
        typer.echo(out_mod.render(report, fmt).rstrip("\n"))
        raise typer.Exit(report.exit_code)
    server = None
    if address is not None:
        try:
            server = watch.serve(loop, address)
        except OSError as exc:
            raise fail(f"--serve {serve}: {exc.strerror or exc}") from None
        typer.echo(f"serving metrics on http://{server.address}/metrics", err=True)
    import signal
    import threading

    if threading.current_thread() is threading.main_thread():  # systemd/Kubernetes stop: finish cleanly
        signal.signal(signal.SIGTERM, lambda *_: loop.stop.set())
    try:
        loop.run(period, rounds=rounds or None,
                 on_round=lambda r: typer.echo(f"{watch.summary(r)}; {loop.series} series", err=True))
    except KeyboardInterrupt:
        pass
    finally:
        loop.close()
        if server is not None:
            server.close()
    raise typer.Exit(loop.last.exit_code if loop.last is not None else 3)


def storm_cmd(  # noqa: PLR0917 (typer maps parameters to options)
    inventory: InventoryArg,
    prometheus: Annotated[str, typer.Option("--from-prometheus", help="Prometheus base URL that scrapes "
                                            "every watch shard (e.g. http://127.0.0.1:9090).")],
    window: Annotated[str, typer.Option("--window", help="How far back to look (onset needs a few "
                                        "rounds).")] = "5m",
    step: Annotated[str, typer.Option("--step", help="Resolution: the watch round period.")] = "30s",
    checks: ChecksOpt = None,
    fmt: FormatOpt = "table",
) -> None:
    """Trace PFC pause-storm origins over all watch shards' data in Prometheus (a shard alone stops at
    its border). Exit 0 no storm, 2 a storm origin, 3 Prometheus unreachable or a bad option."""
    from fabriccfg.verify import output as out_mod
    from fabriccfg.verify import storm_prom
    from fabriccfg.verify.engine import CheckResult, Report, worst

    if fmt not in out_mod.FORMATS:
        raise fail(f"--format {fmt!r}: choose one of {', '.join(out_mod.FORMATS)}")
    if not prometheus.startswith(("http://", "https://")):
        raise fail(f"--from-prometheus {prometheus!r}: write an http(s):// URL")
    try:
        win, stp = parse_duration(window), parse_duration(step)
    except ValueError as exc:
        raise fail(str(exc)) from None
    if stp <= 0 or win < stp:
        raise fail("--step must be > 0 and --window >= --step")
    from fabriccfg.inventory.load import InventoryError, load_fabric
    from fabriccfg.verify.engine import CheckError, load_checks

    try:
        fabric = load_fabric(inventory)
        check = next(c for c in load_checks(checks or []) if c.id == "pfc-storm-origin")
    except InventoryError as exc:
        raise fail(f"{inventory}: {str(exc).splitlines()[0] if str(exc) else 'invalid inventory'}") from None
    except OSError as exc:
        raise fail(f"{inventory}: {exc.strerror or exc}") from None
    except (CheckError, StopIteration) as exc:
        raise fail(str(exc) or "no pfc-storm-origin check") from None
    check_list = [check]
    try:
        findings = storm_prom.trace(fabric, check, prometheus, window=win, step=stp)
    except storm_prom.PrometheusError as exc:
        raise fail(str(exc)) from None
    state = worst(f.severity for f in findings) if findings else "ok"
    report = Report(state, findings, [CheckResult(check_list[0].id, state, scopes=1, findings=findings)],
                    devices=len(fabric.devices))
    typer.echo(out_mod.render(report, fmt).rstrip("\n"))
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command("verify", cls=NagiosCommand)(verify_cmd)
    app.command("watch", cls=NagiosCommand)(watch_cmd)
    app.command("storm", cls=NagiosCommand)(storm_cmd)
    from fabriccfg.verify import demo

    demo.install()  # the demo ends with a pause-storm hunt
