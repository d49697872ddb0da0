"""`fabriccfg demo`: the whole loop on the embedded mock fabric, narrated, in one command.

validate the example inventories -> generate one -> for each lab: mock up -> render -> diff -> push ->
diff shows nothing -> (more steps may be appended to :data:`demo_steps`) -> mock down.
Needs no environment variables: the mock's endpoints file carries its own credentials.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from fabriccfg.inventory.models import Fabric
    from fabriccfg.push.report import RunReport

import fabriccfg

INVENTORIES = Path(fabriccfg.__file__).parent / "data" / "inventories"
LABS = ("roce-lab.yaml", "ib-lab-mqm8790.yaml", "ib-lab-mqm8700.yaml")


@dataclass
class Demo:
    """State shared by the demo steps (steps may read and add to it)."""

    console: Console
    workdir: Path
    t0: float = field(default_factory=time.monotonic)
    fabrics: dict[str, Fabric] = field(default_factory=dict)
    """Lab name (inventory file stem) -> loaded fabric."""
    mocks: dict[str, Any] = field(default_factory=dict)
    """Lab name -> its running ``MockFabric`` (stopped at the end, after every step)."""
    endpoints: dict[str, Path] = field(default_factory=dict)
    reports: dict[str, RunReport] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    workers: int = 8

    def header(self, title: str) -> None:
        self.console.rule(f"[bold]{title}[/]  [dim]{time.monotonic() - self.t0:5.1f}s[/]", align="left")

    def say(self, text: str) -> None:
        self.console.print(text, highlight=False)

    def problem(self, text: str) -> None:
        self.problems.append(text)
        self.console.print(f"[bold red]problem:[/] {text}", highlight=False)

    def mock_up(self, lab: str, fabric: Fabric, **kwargs: Any) -> Path:
        """Start the lab's mock fabric in this process; returns its endpoints file."""
        from fabriccfg.mock.fabric import MockFabric

        mock = MockFabric(fabric, workdir=self.workdir / "mock" / lab, **kwargs)
        mock.__enter__()
        self.mocks[lab] = mock
        endpoints = Path(mock.endpoints_file)
        self.endpoints[lab] = endpoints
        return endpoints

    def close(self) -> None:
        for lab, mock in reversed(list(self.mocks.items())):
            self.header(f"mock down: {lab}")
            try:
                mock.__exit__(None, None, None)
                self.say(f"stopped {len(getattr(mock, 'names', []))} mock device(s)")
            except Exception as exc:  # keep stopping the others
                self.problem(f"{lab}: mock down failed: {exc}")
        self.mocks.clear()


DemoStep = Callable[[Demo], None]


def step_validate(demo: Demo) -> None:
    from fabriccfg.inventory.load import load

    demo.header("validate the example inventories")
    for path in sorted(INVENTORIES.glob("*.yaml")):
        res = load(path)
        errors = [f for f in res.findings if f.severity == "error"]
        warnings = [f for f in res.findings if f.severity == "warning"]
        if res.fabric is None or errors:
            demo.problem(f"{path.name}: {len(errors)} error(s)")
            for f in errors[:5]:
                demo.say(f"  {f.format()}")
            continue
        demo.fabrics[path.stem] = res.fabric
        kinds: dict[str, int] = {}
        for dev in res.fabric.devices.values():
            kinds[dev.platform] = kinds.get(dev.platform, 0) + 1
        mix = ", ".join(f"{n} {p}" for p, n in sorted(kinds.items()))
        fab = res.fabric
        demo.say(f"[green]ok[/]  {path.name}: {fab.fabric.technology}, {len(fab.devices)} devices "
                 f"({mix}), {len(fab.links)} links, {len(warnings)} warning(s)")


def step_gen(demo: Demo) -> None:
    try:
        from fabriccfg.inventory import gen
    except ImportError:
        return
    import yaml

    from fabriccfg.inventory.load import loads

    demo.header("generate a fabric (fabriccfg gen --gpus 512 --technology roce)")
    doc = gen.generate(512, "roce")
    text = yaml.safe_dump(doc, sort_keys=False)
    res = loads(text, "<gen roce 512>")
    if res.fabric is None or not res.ok:
        demo.problem("the generated inventory does not validate")
        return
    plan = gen.plan(512, "roce")
    fab = res.fabric
    demo.say(f"[green]ok[/]  {plan.describe()}: {len(fab.devices)} devices, {len(fab.links)} links, "
             "validates clean")


def lab_step(inventory: str) -> DemoStep:
    """mock up -> render -> diff -> push -> diff for one example inventory."""
    lab = Path(inventory).stem

    def step(demo: Demo) -> None:
        from fabriccfg.push import api
        from fabriccfg.push.display import PlainDisplay
        from fabriccfg.push.runner import RunnerOptions
        from fabriccfg.render.engine import render_fabric
        from fabriccfg.targets import load_endpoints

        fabric = demo.fabrics.get(lab)
        if fabric is None:
            return
        ib = fabric.fabric.technology == "infiniband"
        demo.header(f"{lab}: mock up" + (" (ibsim backend when installed)" if ib else ""))
        t = time.monotonic()
        endpoints = demo.mock_up(lab, fabric, backend="ibsim" if ib else "modelled")
        mock = demo.mocks[lab]
        if mock.fallback:
            demo.say(f"[yellow]{mock.fallback}[/]")
        eps = load_endpoints(endpoints)
        demo.say(f"{len(eps)} mock devices on 127.0.0.1 (real SSH, their own host keys) in "
                 f"{time.monotonic() - t:.1f}s; endpoints: {endpoints}"
                 + ("; the real OpenSM and infiniband-diags on ibsim" if mock.backend == "ibsim" else ""))

        demo.header(f"{lab}: render")
        rendered = render_fabric(fabric)
        lines = sum(r.lines for r in rendered)
        files = sum(len(r.files) for r in rendered)
        demo.say(f"{len(rendered)} devices rendered, {files} files, {lines} lines")
        for r in rendered[:4]:
            demo.say(f"  {r.name:<12} {r.platform:<14} {', '.join(sorted(r.files))}")
        if len(rendered) > 4:
            demo.say(f"  ... and {len(rendered) - 4} more")

        jobs = api.plan_jobs(fabric, eps, list(fabric.devices), endpoints_source=str(endpoints))
        runs = demo.workdir / "runs" / lab
        opts = RunnerOptions(workers=demo.workers, timeout=60)

        demo.header(f"{lab}: diff (live, over SSH)")
        before = api.live_diff(fabric, jobs, inventory=lab, run_base=runs, runner=opts)
        _say_diff(demo, before)

        demo.header(f"{lab}: push (backup, apply in a transaction, verify, confirm)")
        report = api.push(fabric, jobs, inventory=lab, run_base=runs, runner=opts, confirm_timeout=120,
                          display=PlainDisplay(_ConsoleStream(demo.console)))
        demo.reports[lab] = report
        s = report.summary()
        demo.say(f"{s['applied']} applied, {s['unchanged']} unchanged, {s['rolled-back']} rolled back, "
                 f"{s['failed']} failed, {sum(1 for d in report.devices if not d.target)} not push targets, "
                 f"in {report.to_dict()['duration_s']:.1f}s; report: {report.run_dir}/report.json")
        if report.exit_code:
            demo.problem(f"{lab}: push did not apply everywhere")

        demo.header(f"{lab}: diff again (expect nothing)")
        after = api.live_diff(fabric, jobs, inventory=lab, run_base=runs, runner=opts)
        if _say_diff(demo, after):
            demo.problem(f"{lab}: differences remain after the push")
        else:
            demo.say("[green]no differences[/]: running configs match intent")
        if mock.backend == "ibsim":
            _say_real_sm(demo, lab, fabric, mock)

    step.__name__ = f"lab_{lab}"
    return step


def _say_real_sm(demo: Demo, lab: str, fabric: Fabric, mock: Any) -> None:
    """The pushed SM config, as the real OpenSM runs it: sminfo from a host's shell (deadline loop:
    a higher-priority SM may still be taking over)."""
    from fabriccfg.mock.fabric import profile_for
    from fabriccfg.mock.ibsim import wait_until

    ib = fabric.ib
    if ib is None or not ib.subnet_managers:
        return
    best = max(ib.subnet_managers, key=lambda s: s.priority)
    kinds = {d: fabric.devices[d].kind for d in mock.names}
    host = next((d for d, k in kinds.items() if k == "sm-host"), None) or \
        next((d for d, k in kinds.items() if k == "host"), None)
    if host is None:
        return
    demo.header(f"{lab}: the real OpenSM runs the pushed config (sminfo on {host})")
    prof = profile_for(fabric.devices[host].platform)
    assert prof is not None
    out = [""]

    def master() -> bool:
        session = prof.session_class(mock.device(host))
        out[0] = str(mock.call(lambda: session.execute("sminfo"), timeout=60))
        return f"priority {best.priority} state 3 SMINFO_MASTER" in out[0]

    try:
        wait_until(master, 60, f"{best.device} master")
        demo.say(out[0].strip())
    except Exception as exc:
        demo.problem(f"{lab}: {exc}; last: {out[0].strip()[:160]}")


def _say_diff(demo: Demo, report: RunReport) -> int:
    """One line per target device (the others in one line); return how many differ or could not be read."""
    from rich.markup import escape

    from fabriccfg.push.display import not_targets_line

    bad = 0
    folded = not_targets_line(report.devices)
    if folded:
        demo.say(f"  [magenta]{escape(folded)}[/]")
    for d in report.devices:
        if not d.target:
            continue
        if d.state == "failed":
            bad += 1
            demo.say(f"  {d.name:<12} [red]unreachable[/]  {d.reason}")
        elif d.changed:
            bad += 1
            plus = sum(1 for ln in d.diff.splitlines()
                       if ln.lstrip().startswith("+") and not ln.startswith("+++"))
            demo.say(f"  {d.name:<12} [yellow]differs[/]  {plus} line(s) to add")
        else:
            demo.say(f"  {d.name:<12} [green]in sync[/]")
    return bad


class _ConsoleStream:
    """A text stream that prints through the rich console (so the push's plain lines interleave cleanly)."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def write(self, text: str) -> int:
        if text.strip():
            self.console.print("  " + text.rstrip("\n"), highlight=False, markup=False)
        return len(text)

    def flush(self) -> None:
        return None


demo_steps: list[DemoStep] = [step_validate, step_gen, *(lab_step(lab) for lab in LABS)]
"""The demo, in order. Other packages append steps (the verify package adds a pause-storm hunt); mocks
started by a step stay up until every step has run."""


def run_demo(console: Console | None = None, *, keep: bool = False, workdir: Path | None = None) -> int:
    from fabriccfg.commands._console import console as make_console

    console = console or make_console()
    tmp = workdir or Path(tempfile.mkdtemp(prefix="fabriccfg-demo-"))
    demo = Demo(console=console, workdir=tmp)
    console.print(f"[bold]fabriccfg demo[/]: intent -> render -> diff -> guarded push -> diff, on mock "
                  f"devices (work folder {tmp})", highlight=False)
    try:
        for step in list(demo_steps):
            try:
                step(demo)
            except Exception as exc:
                name = getattr(step, "__name__", str(step))
                demo.problem(f"step {name} failed: {exc.__class__.__name__}: {exc}")
    except KeyboardInterrupt:
        demo.problem("interrupted")
    finally:
        demo.close()
    demo.header("done")
    wall = time.monotonic() - demo.t0
    if demo.problems:
        console.print(f"[bold red]{len(demo.problems)} problem(s)[/] in {wall:.1f}s", highlight=False)
    else:
        console.print(f"[bold green]all steps passed[/] in {wall:.1f}s", highlight=False)
    if keep or workdir is not None:
        console.print(f"run folders kept under {tmp}", highlight=False)
    else:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if demo.problems else 0


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""

    @app.command()
    def demo(
        keep: Annotated[bool, typer.Option("--keep", help="Keep the work folder.")] = False,
        workdir: Annotated[Path | None, typer.Option("--workdir", help="Work folder (kept).")] = None,
    ) -> None:
        """The whole loop on the embedded mock fabric: validate, gen, mock up, render, diff, push, diff."""
        raise typer.Exit(run_demo(keep=keep, workdir=workdir))
