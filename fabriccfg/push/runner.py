"""Run device jobs on worker threads: batches/canary, a failure budget, per-device deadlines, Ctrl-C.

Rules (each one answers a user complaint about the peers, ``peers.md`` §B):

- a per-device wall-clock deadline, enforced here, not by the device: when it passes, the
  watchdog kills the device's session (reads raise at once) and the device is marked ``failed``
  (it may still roll back within ``rollback_grace``); its worker slot is freed, so one hung device
  never stalls the others;
- a batch must succeed before the next one starts; the canary batch must succeed outright;
- once more than ``max_failures`` devices failed or rolled back, no new device starts and every
  device not started is reported ``skipped`` with the reason: nothing is skipped silently;
- Ctrl-C stops new work; in-flight devices finish or roll back. A second Ctrl-C ends their
  sessions (platforms with a commit timer then revert on their own).
- SIGTERM (a service manager stopping us, which sends SIGKILL soon after) acts as two Ctrl-Cs at
  once: no new device, in-flight sessions end, and the run's journal and report say which devices
  were left mid-change for ``push --recover``.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fabriccfg.push import signals
from fabriccfg.push.device import DeviceJob, Progress, Watch
from fabriccfg.push.report import DeviceResult

Work = Callable[[DeviceJob, Watch, Progress, int], DeviceResult]

STOP_GRACE = 5.0
"""Seconds a killed device's worker gets to unwind before the runner gives up on it."""


class Display:
    """What the runner tells the user (progress displays implement it; the default says nothing)."""

    def start(self, jobs: Sequence[DeviceJob]) -> None:
        return None

    def step(self, name: str, step: str) -> None:
        return None

    def done(self, result: DeviceResult) -> None:
        return None

    def message(self, text: str) -> None:
        return None

    def stop(self) -> None:
        return None


@dataclass
class RunnerOptions:
    workers: int = 8
    batch: int | None = None
    canary: int | None = None
    max_failures: int | None = None
    """None: no budget (every device is tried)."""
    timeout: float | None = None
    """Per-device wall-clock seconds (None: no deadline)."""
    rollback_grace: float = 60.0
    processes: int | None = 1
    """Push worker processes (``fabriccfg.push.processes``); None: ``default_processes`` for the run.
    ``workers`` is the run's total: each process runs its share of it as threads."""


@dataclass
class RunOutcome:
    results: list[DeviceResult]
    stopped: str = ""
    interrupted: bool = False
    ended: str = "completed"
    """``completed``, ``interrupted`` (Ctrl-C) or ``SIGTERM``."""


def batch_message(bi: int, total: int, canary: int | None, size: int) -> str | None:
    """The operator's line before batch ``bi`` of ``total`` (none for a run in one batch)."""
    if total <= 1:
        return None
    label = "canary" if bi == 0 and canary else f"batch {bi + 1}/{total}"
    return f"{label}: {size} device(s)"


def run_outcome(jobs: Sequence[DeviceJob], results: dict[str, DeviceResult], stopped: str,
                interrupted: bool, terminated: bool) -> RunOutcome:
    """The run's results in inventory order and how it ended (both push paths)."""
    ordered = [results[j.name] for j in jobs if j.name in results]
    ended = "SIGTERM" if terminated else "interrupted" if interrupted else "completed"
    return RunOutcome(ordered, stopped, interrupted, ended)


def plan_batches(names: Sequence[str], batch: int | None, canary: int | None) -> list[list[str]]:
    """Canary first (when asked), then batches of ``batch`` (or everything left in one batch)."""
    names = list(names)
    out: list[list[str]] = []
    if canary:
        out.append(names[:canary])
        names = names[canary:]
    if batch:
        out.extend(names[i:i + batch] for i in range(0, len(names), batch))
    elif names:
        out.append(names)
    return [b for b in out if b]


def judge_batch(bi: int, total: int, names: Sequence[str], results: dict[str, DeviceResult],
                opts: RunnerOptions) -> str:
    """Why the next batch must not start ('' when it may): this one did not succeed (the canary must be
    perfect; a batch succeeds while the run's failures stay within ``--max-failures``, or, without a
    budget, only without failures)."""
    failures = sum(1 for r in results.values() if _failed(r))
    batch_failures = sum(1 for n in names if n in results and _failed(results[n]))
    if not batch_failures or bi == total - 1:
        return ""
    if bi == 0 and opts.canary:
        return f"canary batch failed ({batch_failures} device(s)); later batches not started"
    within = not opts.batch if opts.max_failures is None else failures <= opts.max_failures
    if not within:
        return (f"batch {bi + 1} failed ({failures} failure(s), budget "
                f"{opts.max_failures or 0}); later batches not started")
    return ""


class _Slot:
    def __init__(self, job: DeviceJob, index: int, watch: Watch) -> None:
        self.job = job
        self.index = index
        self.watch = watch
        self.result: DeviceResult | None = None
        self.done = threading.Event()
        self.killed_at: float | None = None


def _failed(result: DeviceResult) -> bool:
    return result.target and result.state in ("failed", "rolled-back")


class Runner:
    def __init__(self, jobs: Sequence[DeviceJob], work: Work, opts: RunnerOptions,
                 display: Display | None = None,
                 catch: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM)) -> None:
        """``catch``: the signals :meth:`run` handles (a push worker process leaves SIGINT to its parent,
        which relays it through :meth:`interrupt`)."""
        self.jobs = list(jobs)
        self.catch = catch
        self.work = work
        self.opts = opts
        self.display = display or Display()
        self._lock = threading.Lock()
        self.results: dict[str, DeviceResult] = {}
        self.stopped = ""
        self.interrupted = False
        self._interrupts = 0
        self._sigints = 0
        self._terminated = False
        self._active: list[_Slot] = []

    # ------------------------------------------------------------------ public
    def run(self) -> RunOutcome:
        """Run every job; Ctrl-C (SIGINT) only sets a flag that the scheduling loop acts on."""
        handlers = {signal.SIGINT: self._on_sigint, signal.SIGTERM: self._on_sigterm}
        with signals.handled({sig: handlers[sig] for sig in self.catch}):
            return self._run()

    def _on_sigint(self, signum: int, frame: object) -> None:
        self._sigints += 1  # no locks, no printing: a signal handler may run while the main thread holds one

    def _on_sigterm(self, signum: int, frame: object) -> None:
        self._terminated = True
        self._sigints += 2

    def interrupt(self, terminated: bool = False) -> None:
        """A Ctrl-C (or, with ``terminated``, a SIGTERM's share of one) relayed from another thread or
        process; the scheduling loop acts on it like on the signal."""
        self._terminated = self._terminated or terminated
        self._sigints += 1

    def stop(self, reason: str) -> None:
        """Start no new device (in-flight ones finish); those never started are ``skipped`` with ``reason``.
        A parent process enforcing the run-wide failure budget calls it."""
        if not self.stopped:
            self.stopped = reason

    def _run(self) -> RunOutcome:
        self.display.start(self.jobs)
        try:
            targets = [j for j in self.jobs if j.target]
            for job in self.jobs:
                if not job.target:
                    self._finish_now(job, "skipped", job.skip_reason)
            by_name = {j.name: j for j in targets}
            index = {j.name: i for i, j in enumerate(self.jobs)}
            batches = plan_batches([j.name for j in targets], self.opts.batch, self.opts.canary)
            for bi, names in enumerate(batches):
                try:
                    while self._interrupts < self._sigints:
                        self._interrupt()
                    if self.stopped:
                        break
                    if (line := batch_message(bi, len(batches), self.opts.canary, len(names))) is not None:
                        self.display.message(line)
                    self._run_batch([by_name[n] for n in names], index)
                    if self.stopped:
                        break
                    self._judge_batch(bi, len(batches), names)
                except KeyboardInterrupt:  # between batches: nothing is in flight
                    self._interrupt()
                    break
            for job in targets:
                if job.name not in self.results:
                    self._finish_now(job, "skipped", f"not started: {self.stopped or 'run stopped'}")
        finally:
            self.display.stop()
        return run_outcome(self.jobs, self.results, self.stopped, self.interrupted, self._terminated)

    # ------------------------------------------------------------------ internals
    def _judge_batch(self, bi: int, total: int, names: list[str]) -> None:
        self.stopped = judge_batch(bi, total, names, self.results, self.opts) or self.stopped

    def _over_budget(self) -> bool:
        if self.opts.max_failures is None:
            return False
        failures = sum(1 for r in self.results.values() if _failed(r))
        return failures > self.opts.max_failures

    def _finish_now(self, job: DeviceJob, state: str, reason: str) -> None:
        res = DeviceResult(job.name, job.platform, target=job.target, skip_label=job.skip_label)
        res.state = state  # type: ignore[assignment]
        res.reason = reason
        self._record(res)

    def _record(self, result: DeviceResult) -> None:
        with self._lock:
            if result.name in self.results:
                return
            self.results[result.name] = result
        self.display.done(result)

    def _start(self, job: DeviceJob, index: int) -> None:
        slot = _Slot(job, index, Watch(self.opts.timeout))
        self._active.append(slot)  # registered before it runs, so no interruption can lose it

        def target() -> None:
            try:
                slot.result = self.work(job, slot.watch, self.display.step, index)
            finally:
                slot.done.set()

        threading.Thread(target=target, name=f"push-{job.name}", daemon=True).start()

    def _run_batch(self, jobs: list[DeviceJob], index: dict[str, int]) -> None:
        queue = list(jobs)
        workers = max(1, self.opts.workers)
        while queue or self._active:
            try:
                while self._interrupts < self._sigints:
                    self._interrupt()
                while queue and len(self._active) < workers and not self.stopped:
                    if self._over_budget():
                        self.stopped = f"failure budget exceeded (--max-failures {self.opts.max_failures})"
                        self.display.message(f"stopping: {self.stopped}; in-flight devices finish")
                        break
                    job = queue.pop(0)
                    self._start(job, index[job.name])
                if self.stopped:
                    queue.clear()
                self._reap()
                if self._active:
                    self._active[0].done.wait(0.02)
            except KeyboardInterrupt:
                self._interrupt()

    def _interrupt(self) -> None:
        self._interrupts += 1
        self.interrupted = True
        why, message = signals.notice(self._interrupts, self._terminated)
        self.display.message(message)
        if self._interrupts == 1:
            self.stopped = why
        else:
            for slot in self._active:
                slot.watch.fire(why)

    def _reap(self) -> None:
        now = time.monotonic()
        still: list[_Slot] = []
        for slot in self._active:
            if slot.done.is_set():
                if slot.result is not None:
                    self._record(slot.result)
                else:
                    self._finish_now(slot.job, "failed", "worker ended without a result")
                continue
            deadline = slot.watch.deadline
            if deadline is not None and now >= deadline:
                if slot.killed_at is None or slot.killed_at < deadline:
                    elapsed = now - slot.watch.started
                    slot.watch.fire(f"timed out after {elapsed:.1f} s (--timeout {self.opts.timeout:g})")
                    slot.killed_at = now
                elif now - slot.killed_at > STOP_GRACE:
                    self._finish_now(slot.job, "failed",
                                     f"timed out after {now - slot.watch.started:.1f} s and did not stop "
                                     f"within {STOP_GRACE:g} s; its session was closed")
                    continue
            still.append(slot)
        self._active = still
