"""A round's collection spread over worker processes, so one ``watch`` uses every core.

One Python process tops out at one core (SSH crypto, BER decoding and parsing hold the interpreter
lock). :class:`CollectorPool` starts ``processes`` workers (``spawn``: no fork of a threaded parent),
each with its own :class:`~fabriccfg.telemetry.collect.Collector` (its own event loop, SNMP engine, SSH
threads and kept sessions), and splits the devices the way ``watch --shard`` does: worker ``j`` of
shard ``I/N`` polls shard ``I + N*j`` of ``N*P`` (the same hash, so a device is in exactly one worker
and fabric-wide IB tools run once). The fabric and endpoints go to each worker once; a round sends one
word and gets a :class:`~fabriccfg.telemetry.model.Snapshot` back. The parts are merged with the
single collector's precedence: what a device says about itself before what another device's tools
say about it.

``spawn`` re-imports the caller's main module in each worker: a script that builds a pool (or runs
``Watcher`` with ``processes`` > 1) needs the ``if __name__ == "__main__":`` guard; the ``fabriccfg``
command has it.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
import traceback
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry.collect import Collector
from fabriccfg.telemetry.gc_rounds import RoundGC
from fabriccfg.telemetry.model import Sample, Snapshot
from fabriccfg.telemetry.shard import Shard, in_shard

START_TIMEOUT = 120.0
"""Seconds a worker may take to import and build its collector."""


def inner_shards(shard: Shard | None, processes: int) -> list[Shard]:
    """The shard each worker polls: ``(I + N*j, N*P)`` for worker j of shard I/N (unsharded: j/P)."""
    i, n = shard if shard is not None else (0, 1)
    return [(i + n * j, n * processes) for j in range(processes)]


def _worker(conn: Connection) -> None:
    """Worker process: build a Collector from the init message, then one snapshot per 'collect'."""
    col: Collector | None = None
    rounds_gc = RoundGC()
    fabric: Fabric | None = None
    targets: dict[str, Endpoint] = {}
    shard: Shard | None = None
    try:
        while True:
            try:
                msg = conn.recv()
            except EOFError:
                return
            if msg[0] == "init":
                _, fabric, targets, shard, kwargs = msg
                col = Collector(**kwargs)
                conn.send(("ok", None))
            elif msg[0] == "collect" and col is not None and fabric is not None:
                try:
                    conn.send(("ok", col.collect(fabric, targets, shard=shard)))
                except Exception as exc:  # reported as collect errors by the parent
                    conn.send(("error", f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"))
                rounds_gc.round_done()
            else:
                return
    finally:
        if col is not None:
            col.close()


@dataclass
class _Worker:
    shard: Shard
    process: Any = None
    conn: Connection | None = None
    started: bool = False


@dataclass
class CollectorPool:
    """``processes`` collector processes for one fabric; call it like a collector, ``close()`` at the end."""

    processes: int
    shard: Shard | None = None
    timeout: float = 30.0
    options: dict[str, Any] = field(default_factory=dict)
    _workers: list[_Worker] = field(default_factory=list)
    _key: tuple[int, int] | None = None

    def __call__(self, fabric: Fabric, targets: dict[str, Endpoint]) -> Snapshot:
        key = (id(fabric), id(targets))
        if self._key != key:
            self.close()
            self._key = key
            self._workers = [_Worker(s) for s in inner_shards(self.shard, self.processes)]
        for w in self._workers:
            if not w.started:
                self._start(w, fabric, targets)
        parts: list[tuple[Shard, Snapshot]] = []
        errors: dict[str, list[str]] = {}
        for w in self._workers:
            if w.conn is not None:
                w.conn.send(("collect",))
        deadline = time.monotonic() + self.round_deadline(fabric)
        for w in self._workers:
            got = self._receive(w, deadline)
            if isinstance(got, Snapshot):
                parts.append((w.shard, got))
            else:
                for name in fabric.devices:
                    if in_shard(name, w.shard) and name in targets:
                        errors.setdefault(name, []).append(f"collector process: {got}")
                self._stop(w)
        snap = merge(parts)
        for dev, msgs in errors.items():
            for m in msgs:
                snap.error(dev, m)
        return snap

    def round_deadline(self, fabric: Fabric) -> float:
        """Generous: every device's commands could each take ``timeout``; the worker enforces those."""
        return self.timeout * 4 + 60.0

    def _start(self, w: _Worker, fabric: Fabric, targets: dict[str, Endpoint]) -> None:
        ctx = multiprocessing.get_context("spawn")
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_worker, args=(child,), name=f"collector-{w.shard[0]}-of-{w.shard[1]}",
                           daemon=True)
        proc.start()
        child.close()
        w.process, w.conn = proc, parent
        mine = {n: e for n, e in targets.items() if in_shard(n, w.shard)}
        parent.send(("init", fabric, mine, w.shard, {"timeout": self.timeout, **self.options}))
        got = self._receive(w, time.monotonic() + START_TIMEOUT)
        w.started = got is None

    def _receive(self, w: _Worker, deadline: float) -> Snapshot | str | None:
        if w.conn is None:
            return "not running"
        try:
            if not w.conn.poll(max(0.0, deadline - time.monotonic())):
                return "no answer before the round deadline"
            status, payload = w.conn.recv()
        except (EOFError, OSError) as exc:
            return f"exited ({type(exc).__name__})"
        if status != "ok":
            return str(payload).splitlines()[0][:300]
        return payload if isinstance(payload, Snapshot) else None

    def _stop(self, w: _Worker) -> None:
        if w.conn is not None:
            with contextlib.suppress(OSError, ValueError):
                w.conn.send(("close",))
            w.conn.close()
        if w.process is not None:
            w.process.join(5)
            if w.process.is_alive():
                w.process.kill()
                w.process.join(5)
        w.process, w.conn, w.started = None, None, False

    def close(self) -> None:
        for w in self._workers:
            self._stop(w)
        self._workers = []
        self._key = None


def merge(parts: list[tuple[Shard, Snapshot]]) -> Snapshot:
    """One snapshot from the workers' parts: each device's own samples first (from the worker that polls
    it), then what fabric-wide tools elsewhere said about it, one sample per series."""
    snap = Snapshot(ts=min((p.ts for _, p in parts), default=time.time()))
    remote: list[Sample] = []
    for shard, part in parts:
        for dev, rows in part.samples.items():
            if in_shard(dev, shard):
                # a device is in exactly one worker's shard and a collector gives a series once: its
                # rows are taken whole (checking 10^6 keys a round cost more than the merge itself)
                snap.samples[dev] = rows
            else:
                remote.extend(rows)
        for dev, msgs in part.errors.items():
            for m in msgs:
                snap.error(dev, m)
        snap.uptime.update(part.uptime)
        for dev, ts in part.device_ts.items():
            if in_shard(dev, shard) or dev not in snap.device_ts:
                snap.device_ts[dev] = ts
        for (dev, metric), ts in part.metric_ts.items():
            if in_shard(dev, shard) or (dev, metric) not in snap.metric_ts:
                snap.metric_ts[(dev, metric)] = ts
    seen: dict[str, set[tuple[Any, ...]]] = {}
    for s in remote:
        keys = seen.get(s.device)
        if keys is None:
            keys = seen[s.device] = {r[:4] for r in snap.samples.get(s.device, ())}
        if s[:4] not in keys:
            keys.add(s[:4])
            snap.add(s)
    return snap
