"""What a push shows while it runs: a live table on a terminal, plain lines otherwise; the final table.

Devices that are never push targets (no transaction, or nothing rendered; ``target`` False) are not
listed one by one: on a 2,000-switch MQM8790 fabric that would be 2,000 lines saying the same thing.
They fold into one line (:func:`not_targets_line`) and are not counted in the ``[i/N]`` progress;
``report.json`` still lists each of them with its reason. Every other skip (failure budget, Ctrl-C,
dry-run) stays listed per device.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from fabriccfg.push.device import DeviceJob
from fabriccfg.push.report import DeviceResult, RunReport
from fabriccfg.push.runner import Display

STYLE = {"unchanged": "dim", "applied": "green", "rolled-back": "yellow", "failed": "bold red",
         "skipped": "magenta"}


def _changes(r: DeviceResult) -> str:
    if r.changed is None:
        return ""
    if not r.changed:
        return "0"
    lines = [ln.lstrip() for ln in r.diff.splitlines() if not ln.startswith(("+++", "---", "@@"))]
    plus = sum(1 for ln in lines if ln.startswith("+"))
    minus = sum(1 for ln in lines if ln.startswith("-"))
    return f"+{plus}/-{minus}" if plus or minus else "yes"


def not_targets_line(devices: Iterable[DeviceJob | DeviceResult]) -> str:
    """``not push targets: 6 unmanaged-ib (externally managed ...), 8 connectx-host (render nothing)``.

    Counts the devices that are not targets per platform and label, in first-seen order; "" when none.
    """
    counts: dict[tuple[str, str], int] = {}
    for d in devices:
        if not d.target:
            key = (d.platform, d.skip_label)
            counts[key] = counts.get(key, 0) + 1
    if not counts:
        return ""
    groups = (f"{n} {platform}" + (f" ({label})" if label else "") for (platform, label), n in counts.items())
    return "not push targets: " + ", ".join(groups)


class Stream(Protocol):
    def write(self, text: str, /) -> int: ...
    def flush(self) -> None: ...


class PlainDisplay(Display):
    """One line per finished target device (and per runner message): good for CI logs and pipes."""

    def __init__(self, stream: Stream | None = None, verb: str = "push") -> None:
        self.stream: Stream = stream or sys.stdout
        self.verb = verb
        self.total = 0
        self.count = 0
        self._lock = threading.Lock()
        self._folded: set[str] = set()

    def start(self, jobs: Sequence[DeviceJob]) -> None:
        self._folded = {j.name for j in jobs if not j.target}
        self.total = len(jobs) - len(self._folded)
        line = not_targets_line(jobs)
        if line:
            with self._lock:
                self.stream.write(line + "\n")
                self.stream.flush()

    def done(self, result: DeviceResult) -> None:
        if result.name in self._folded:
            return
        with self._lock:
            self.count += 1
            width = len(str(self.total))
            t = result.timings.get("total")
            extra = f"  {result.reason}" if result.reason else ""
            ch = _changes(result)
            line = (f"[{self.count:>{width}}/{self.total}] {result.name:<20} {result.state:<11}"
                    f"{(' changes ' + ch) if ch else ''}{f'  {t:.1f}s' if t is not None else ''}{extra}")
            self.stream.write(line + "\n")
            self.stream.flush()

    def message(self, text: str) -> None:
        with self._lock:
            self.stream.write(f"-- {text}\n")
            self.stream.flush()


class RichDisplay(Display):
    """A live table of in-flight devices with their step and elapsed time, plus counts per state."""

    def __init__(self, console: Any, verb: str = "push") -> None:
        self.console = console
        self.verb = verb
        self._lock = threading.Lock()
        self.steps: dict[str, tuple[str, float]] = {}
        self.done_results: list[DeviceResult] = []
        self.total = 0
        self.live: Any = None
        self.t0 = time.monotonic()
        self._folded: set[str] = set()

    def start(self, jobs: Sequence[DeviceJob]) -> None:
        from rich.live import Live

        self._folded = {j.name for j in jobs if not j.target}
        self.total = len(jobs) - len(self._folded)
        self.t0 = time.monotonic()
        line = not_targets_line(jobs)
        if line:
            from rich.text import Text

            self.console.print(Text(line, style=STYLE["skipped"]))
        self.live = Live(console=self.console, refresh_per_second=8, transient=True,
                         get_renderable=self._render)
        self.live.start()

    def step(self, name: str, step: str) -> None:
        with self._lock:
            started = self.steps.get(name, (step, time.monotonic()))[1]
            self.steps[name] = (step, started)

    def done(self, result: DeviceResult) -> None:
        if result.name in self._folded:
            return
        with self._lock:
            self.steps.pop(result.name, None)
            self.done_results.append(result)
        if self.live is not None:
            style = STYLE.get(result.state, "")
            why = f"  {result.reason}" if result.reason and result.state != "unchanged" else ""
            self.live.console.print(f"[{style}]{result.state:<11}[/] {result.name}{why}", markup=True,
                                    highlight=False)

    def message(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(f"[bold]-- {text}[/]", highlight=False)

    def stop(self) -> None:
        if self.live is not None:
            self.live.stop()
            self.live = None

    def _render(self) -> Any:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        with self._lock:
            steps = dict(self.steps)
            done = list(self.done_results)
        now = time.monotonic()
        table = Table(box=None, show_header=True, header_style="bold", pad_edge=False)
        table.add_column("device")
        table.add_column("step")
        table.add_column("elapsed", justify="right")
        for name, (step, started) in sorted(steps.items(), key=lambda kv: kv[1][1])[:20]:
            table.add_row(name, step, f"{now - started:5.1f}s")
        if len(steps) > 20:
            table.add_row(f"... {len(steps) - 20} more", "", "")
        counts: dict[str, int] = {}
        for r in done:
            counts[r.state] = counts.get(r.state, 0) + 1
        summary = "  ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        head = Text(f"{self.verb}: {len(done)}/{self.total} done, {len(steps)} in flight, "
                    f"{now - self.t0:.1f}s  {summary}")
        return Group(head, ProgressBar(total=max(self.total, 1), completed=len(done), width=60), table)


def final_table(report: RunReport, console: Any) -> None:
    """The summary table printed after a run (plain text when not on a terminal); non-targets: one line."""
    from rich.table import Table

    table = Table(title=f"{report.command} {report.fabric}" + (" (dry-run)" if report.dry_run else ""),
                  show_lines=False)
    for col in ("device", "platform", "state", "changes", "time", "note"):
        table.add_column(col, justify="right" if col == "time" else "left", overflow="fold")
    for r in report.devices:
        if not r.target:
            continue
        t = r.timings.get("total")
        table.add_row(r.name, r.platform, f"[{STYLE.get(r.state, '')}]{r.state}[/]", _changes(r),
                      f"{t:.1f}s" if t is not None else "", r.reason)
    console.print(table)
    folded = not_targets_line(report.devices)
    if folded:
        console.print(folded, highlight=False, markup=False)
    s = report.summary()
    parts = ", ".join(f"{v} {k}" for k, v in s.items() if v)
    console.print(f"{parts or 'no devices'} in {report.to_dict()['duration_s']:.1f}s; report: "
                  f"{report.run_dir}/report.json", highlight=False)
