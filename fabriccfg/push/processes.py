"""Push with several worker processes: one Python process is the ceiling of a big push (issue 14).

The parent keeps everything that is run-wide: the batches and the canary, the failure budget, Ctrl-C
and SIGTERM, the display, the ``run-start``/``run-end`` records and the report. Each batch is split
into disjoint shares, one per worker process (``multiprocessing``, spawn context); a worker runs its
share with the ordinary :class:`~fabriccfg.push.runner.Runner` (its own threads, per-device deadlines,
rollbacks) and writes its devices' records to the same ``journal.jsonl`` (opened ``O_APPEND``: each
record is one ``write`` and one ``fsync``, so records of several processes never tear or mix), then
reports each result to the parent over its pipe.

What a kill leaves:

- a worker killed (SIGKILL, OOM): the parent sees its process end, reads the journal, and brings each
  device that worker left mid-change to its backup or its intent with ``--recover``'s own logic
  (:func:`fabriccfg.push.recover.recover_device`) before it goes on; devices the worker never started
  are ``skipped``. The run's later batches get a fresh worker.
- the parent killed: each worker reads end-of-file on its pipe and acts as on SIGTERM (no new device,
  in-flight sessions closed and rolled back on a fresh session, results journaled), then exits. The
  journal's ``workers`` records name the worker pids; ``push --recover`` refuses while one lives.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import pickle
import queue
import signal
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection, wait
from typing import Any

from fabriccfg import secrets
from fabriccfg.push import signals
from fabriccfg.push.device import DeviceJob, Progress, PushOptions, Watch, push_device
from fabriccfg.push.journal import Journal, read_run
from fabriccfg.push.recover import recover_device
from fabriccfg.push.report import DeviceResult
from fabriccfg.push.runner import (
    Display,
    Runner,
    RunnerOptions,
    RunOutcome,
    batch_message,
    judge_batch,
    plan_batches,
    run_outcome,
)

POLL = 0.1
"""Seconds the parent's loop waits for worker messages before it looks at signals again."""
EXIT_GRACE = 30.0
"""Seconds a worker gets to exit after the run; then it is killed."""


def default_processes(targets: int, workers: int) -> int:
    """The default ``--processes``: the machine's cores, but one process per at least 25 devices (a
    worker costs about a second of CPU to start) and never more processes than ``workers``."""
    return max(1, min(os.cpu_count() or 1, targets // 25, workers))


def unpicklable(opts: PushOptions) -> str:
    """Why ``opts`` cannot go to a worker process ('' when it can): a post-push check or differ that is a
    closure stays in the parent, and so does the push."""
    try:
        pickle.dumps(replace(opts, journal=None))
    except Exception as exc:  # pickle raises PicklingError, AttributeError or TypeError
        return f"{exc.__class__.__name__}: {str(exc)[:120]}"
    return ""


# --------------------------------------------------------------------------- worker side
class _Control:
    """A worker's link between the thread reading the pipe and the runner of the current share."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.runner: Runner | None = None
        self.interrupts: list[bool] = []
        self.stopped = ""

    def attach(self, runner: Runner) -> None:
        with self.lock:
            self.runner = runner
            if self.stopped:
                runner.stop(self.stopped)
            for terminated in self.interrupts:
                runner.interrupt(terminated)

    def interrupt(self, terminated: bool) -> None:
        with self.lock:
            self.interrupts.append(terminated)
            if self.runner is not None:
                self.runner.interrupt(terminated)

    def stop(self, reason: str) -> None:
        with self.lock:
            self.stopped = self.stopped or reason
            if self.runner is not None:
                self.runner.stop(reason)


class _Pipe(Display):
    """The worker's display: journals each result (as the parent's display does in one process) and
    tells the parent; a dead parent only costs the message, never the record."""

    def __init__(self, conn: Connection, journal: Journal) -> None:
        self.conn = conn
        self.journal = journal
        self.lock = threading.Lock()

    def send(self, msg: tuple[Any, ...]) -> None:
        with self.lock, contextlib.suppress(OSError, EOFError, ValueError):
            self.conn.send(msg)

    def step(self, name: str, step: str) -> None:
        self.send(("step", name, step))

    def done(self, result: DeviceResult) -> None:
        self.journal.write("result", device=result.name, state=result.state, result=result.journal_dict())
        self.send(("done", result.journal_dict()))


def worker_main(conn: Connection) -> None:
    """A push worker process: ``init`` (secrets, options), then one ``run`` per batch share (its devices,
    their run-wide indexes, its threads)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C reaches the parent, which relays it
    kind, known, opts, runner_opts = conn.recv()
    assert kind == "init"
    for value in known:
        secrets.remember(value, "from the parent push process")
    journal = Journal(opts.run_dir)
    opts = replace(opts, journal=journal)
    control = _Control()
    todo: queue.Queue[tuple[list[DeviceJob], dict[str, int], int] | None] = queue.Queue()

    def read() -> None:
        while True:
            try:
                msg = conn.recv()
            except (EOFError, OSError):  # the parent died: act as on SIGTERM
                control.interrupt(True)
                control.interrupt(True)
                todo.put(None)
                return
            if msg[0] == "run":
                todo.put((msg[1], msg[2], int(msg[3])))
            elif msg[0] == "interrupt":
                control.interrupt(bool(msg[1]))
            elif msg[0] == "stop":
                control.stop(str(msg[1]))
            elif msg[0] == "exit":
                todo.put(None)
                return

    threading.Thread(target=read, name="push-worker-control", daemon=True).start()
    display = _Pipe(conn, journal)

    indexes: dict[str, int] = {}

    def run_one(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
        # the run-wide index (the transaction's tag fc-<run>-<index>), not the one within this share
        return push_device(job, opts, watch, progress, indexes.get(job.name, index))

    try:
        while (got := todo.get()) is not None:
            share, where, threads = got
            indexes.update(where)
            runner = Runner(share, run_one, replace(runner_opts, workers=threads), display,
                            catch=(signal.SIGTERM,))
            control.attach(runner)
            outcome = runner.run()
            display.send(("share-done", outcome.ended))
    finally:
        journal.close()


# --------------------------------------------------------------------------- parent side
@dataclass
class _Worker:
    index: int
    process: Any
    conn: Connection
    assigned: set[str] = field(default_factory=set)
    busy: bool = False
    dead: str = ""


def _death(process: Any) -> str:
    code = process.exitcode
    if code is not None and code < 0:
        try:
            how = signal.Signals(-code).name
        except ValueError:
            how = f"signal {-code}"
    else:
        how = f"exit status {code}"
    return f"push worker process {process.pid} died ({how})"


class ProcessRunner:
    """:class:`~fabriccfg.push.runner.Runner`'s contract (batches, canary, budget, Ctrl-C, SIGTERM) with
    the devices spread over ``processes`` worker processes."""

    def __init__(self, jobs: Sequence[DeviceJob], opts: PushOptions, runner: RunnerOptions, *,
                 display: Display, journal: Journal, processes: int) -> None:
        self.jobs = list(jobs)
        self.opts = replace(opts, journal=None)
        self.runner = runner
        self.display = display
        self.journal = journal
        self.processes = max(1, processes)
        self.results: dict[str, DeviceResult] = {}
        self.by_name = {j.name: j for j in self.jobs}
        self.index = {j.name: i for i, j in enumerate(self.jobs)}
        self.workers: list[_Worker] = []
        self.stopped = ""
        self.interrupted = False
        self._sigints = 0
        self._interrupts = 0
        self._terminated = False
        self._ctx = mp.get_context("spawn")

    # ------------------------------------------------------------------ public
    def run(self) -> RunOutcome:
        with signals.handled({signal.SIGINT: self._on_sigint, signal.SIGTERM: self._on_sigterm}):
            return self._run()

    def _on_sigint(self, signum: int, frame: object) -> None:
        self._sigints += 1

    def _on_sigterm(self, signum: int, frame: object) -> None:
        self._terminated = True
        self._sigints += 2

    # ------------------------------------------------------------------ the run
    def _run(self) -> RunOutcome:
        self.display.start(self.jobs)
        try:
            targets = [j for j in self.jobs if j.target]
            for job in self.jobs:
                if not job.target:
                    self._finish(job.name, "skipped", job.skip_reason)
            batches = plan_batches([j.name for j in targets], self.runner.batch, self.runner.canary)
            for bi, names in enumerate(batches):
                self._signals()
                if self.stopped:
                    break
                if (line := batch_message(bi, len(batches), self.runner.canary, len(names))) is not None:
                    self.display.message(line)
                self._run_batch(names)
                if self.stopped:
                    break
                self._judge_batch(bi, len(batches), names)
            for job in targets:
                if job.name not in self.results:
                    self._finish(job.name, "skipped", f"not started: {self.stopped or 'run stopped'}")
        finally:
            self._close()
            self.display.stop()
        return run_outcome(self.jobs, self.results, self.stopped, self.interrupted, self._terminated)

    def _spawn(self, count: int) -> None:
        started = []
        known = sorted(secrets.known())
        for _ in range(count):
            parent, child = self._ctx.Pipe(duplex=True)
            proc = self._ctx.Process(target=worker_main, args=(child,), name="fabriccfg-push-worker",
                                     daemon=True)
            proc.start()
            child.close()
            parent.send(("init", known, self.opts, self.runner))
            worker = _Worker(len(self.workers), proc, parent)
            self.workers.append(worker)
            started.append(worker)
        # durable before any worker gets a device: ``--recover`` refuses while one of them lives
        self.journal.write("workers", pids=[w.process.pid for w in started])

    def _alive(self) -> list[_Worker]:
        return [w for w in self.workers if not w.dead]

    def _run_batch(self, names: list[str]) -> None:
        for worker in self._alive():
            if not worker.process.is_alive():  # died between batches, holding no device: replace it
                worker.process.join(5)
                worker.dead = _death(worker.process)
        want = min(self.processes, len(names))
        if len(self._alive()) < want:
            self._spawn(want - len(self._alive()))
        alive = self._alive()[:want]
        base, extra = divmod(max(self.runner.workers, len(alive)), len(alive))  # W threads in all, not more
        for i, worker in enumerate(alive):
            share = names[i::len(alive)]
            threads = base + (1 if i < extra else 0)
            self.journal.write("share", pid=worker.process.pid, devices=share,  # who pushes what, on disk
                               threads=threads)
            worker.assigned |= set(share)
            worker.busy = True
            self._send(worker, ("run", [self.by_name[n] for n in share], {n: self.index[n] for n in share},
                                threads))
        while any(w.busy for w in alive):
            self._signals()
            busy = [w for w in alive if w.busy]
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy], timeout=POLL)
            for worker in busy:
                if worker.conn in ready:
                    self._drain(worker)
                if worker.process.sentinel in ready and worker.busy:
                    self._drain(worker)
                    if worker.busy:
                        self._lost(worker)

    def _send(self, worker: _Worker, msg: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError, ValueError):
            worker.conn.send(msg)

    def _drain(self, worker: _Worker) -> None:
        try:
            while worker.conn.poll():
                self._message(worker, worker.conn.recv())
        except (EOFError, OSError):
            return

    def _message(self, worker: _Worker, msg: tuple[Any, ...]) -> None:
        kind = msg[0]
        if kind == "step":
            self.display.step(str(msg[1]), str(msg[2]))
        elif kind == "done":
            self._record(DeviceResult.from_dict(dict(msg[1])))
        elif kind == "share-done":
            worker.busy = False

    def _lost(self, worker: _Worker) -> None:
        """A worker died mid-share: finish its devices from the journal (recover those left mid-change)."""
        worker.process.join(5)  # its sentinel fired: reap it, so the exit status is known
        worker.dead = why = _death(worker.process)
        worker.busy = False
        self.display.message(f"{why}; bringing its in-flight devices to their backup or intent")
        trail = read_run(self.opts.run_dir)
        todo = []
        for name in sorted(worker.assigned - set(self.results)):
            dev = trail.devices.get(name)
            if dev is not None and dev.result is not None and isinstance(dev.result.get("result"), dict):
                self._record(DeviceResult.from_dict(dev.result["result"]))  # journaled; the message was lost
            elif dev is not None and dev.started is not None:
                todo.append(dev)
            else:
                self._finish(name, "skipped", f"not started: {why}")
        if not todo:
            return
        timeout = self.runner.timeout or 120.0

        def one(dev: Any) -> DeviceResult:
            job = self.by_name[dev.name]
            self.display.step(dev.name, "recovering")
            res = recover_device(self.opts.run_dir, dev, job.endpoint, differ=self.opts.differ,
                                 insecure_host_keys=self.opts.insecure_host_keys, timeout=timeout)
            res.reason = f"{why} while the device was {dev.last_in_flight}; {res.reason}"
            return res

        with ThreadPoolExecutor(max_workers=len(todo)) as pool:
            for res in pool.map(one, todo):
                self.journal.write("result", device=res.name, state=res.state, result=res.journal_dict())
                self._record(res)

    def _close(self) -> None:
        for worker in self.workers:
            self._send(worker, ("exit",))
        for worker in self.workers:
            worker.process.join(EXIT_GRACE)
            if worker.process.is_alive():
                worker.process.kill()
                worker.process.join(5)
            worker.conn.close()

    # ------------------------------------------------------------------ run-wide rules
    def _finish(self, name: str, state: str, reason: str) -> None:
        job = self.by_name[name]
        res = DeviceResult(job.name, job.platform, target=job.target, skip_label=job.skip_label)
        res.state = state  # type: ignore[assignment]
        res.reason = reason
        self.journal.write("result", device=res.name, state=res.state, result=res.journal_dict())
        self._record(res)

    def _record(self, result: DeviceResult) -> None:
        if result.name in self.results:
            return
        self.results[result.name] = result
        self.display.done(result)
        if not self.stopped and self._over_budget():
            self.stopped = f"failure budget exceeded (--max-failures {self.runner.max_failures})"
            self.display.message(f"stopping: {self.stopped}; in-flight devices finish")
            for worker in self._alive():
                self._send(worker, ("stop", self.stopped))

    def _failures(self) -> int:
        return sum(1 for r in self.results.values() if r.target and r.state in ("failed", "rolled-back"))

    def _over_budget(self) -> bool:
        return self.runner.max_failures is not None and self._failures() > self.runner.max_failures

    def _judge_batch(self, bi: int, total: int, names: list[str]) -> None:
        self.stopped = judge_batch(bi, total, names, self.results, self.runner) or self.stopped

    def _signals(self) -> None:
        while self._interrupts < self._sigints:
            self._interrupts += 1
            self.interrupted = True
            why, message = signals.notice(self._interrupts, self._terminated)
            self.display.message(message)
            if self._interrupts == 1:
                self.stopped = why
            for worker in self._alive():
                self._send(worker, ("interrupt", self._terminated))


def run_in_processes(jobs: Sequence[DeviceJob], opts: PushOptions, runner: RunnerOptions, *, display: Display,
                     journal: Journal, processes: int) -> RunOutcome:
    """Push ``jobs`` with ``processes`` worker processes (see the module docstring)."""
    return ProcessRunner(jobs, opts, runner, display=display, journal=journal, processes=processes).run()

