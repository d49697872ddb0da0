"""`fabriccfg watch`: a scheduled poll-and-check loop with a Prometheus exporter.

Each round takes one snapshot of this shard's devices, computes rates against the previous rounds
(kept in memory; the SQLite store with ``--state-dir`` survives restarts and serves ``--once``), runs
the checks and publishes the result through a custom collector on its own registry: per-port raw
counters (``fabriccfg_<metric>_<unit>_total``: Prometheus takes the ``rate()``), gauges and states in
base units (:func:`fabriccfg.verify.output.sample_families`; per-priority series only for the lossless
and CNP priorities unless ``all_priorities``), check states and findings. Prometheus does the
aggregation across shards (``--shard i/n`` splits devices by a stable hash of their name; each shard
plans, polls, checks and reports only its devices, see :mod:`fabriccfg.telemetry.shard`).

The exposition is rendered once per round, at the end of the round (:mod:`fabriccfg.verify.exposition`:
the library's text format, series prefixes kept between rounds), and scrapes are served from those
bytes (:mod:`fabriccfg.verify.scrape`): a scrape never renders, never waits for a round, and a round
never waits for scrapes.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from fabriccfg.inventory.models import Fabric
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry.gc_rounds import RoundGC
from fabriccfg.telemetry.model import Snapshot
from fabriccfg.verify import exposition, hysteresis, output, scrape
from fabriccfg.verify.engine import Check, Context, Point, Report, build_points, evaluate, needed_metrics
from fabriccfg.verify.runner import MAX_PREVIOUS_AGE_S, Collector, PreviousRun, in_shard

_BAD = re.compile(r"[^a-zA-Z0-9_]")


metric_name = output.snake


def parse_address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"--serve {text!r}: write HOST:PORT, e.g. 127.0.0.1:9108")
    try:
        p = int(port)
    except ValueError:
        raise ValueError(f"--serve {text!r}: the port is not a number") from None
    if not 0 <= p <= 65535:
        raise ValueError(f"--serve {text!r}: port out of range")
    return host.strip("[]"), p


def summary(report: Report) -> str:
    counts = {s: sum(1 for f in report.findings if f.severity == s)
              for s in ("critical", "warning", "unknown")}
    storms = [f for f in report.findings if f.origin]
    text = (f"{time.strftime('%H:%M:%S')} {report.status.upper()}: {counts['critical']} critical, "
            f"{counts['warning']} warning, {counts['unknown']} unknown; {report.devices} device(s), "
            f"{report.elapsed_s:.2f} s")
    for f in storms:
        text += f"\n  storm origin {f.origin}: {' -> '.join(f.path)}"
    return text


class Watcher:
    """The round loop and the state the exporter reads (guarded by a lock: scrapes run on a thread)."""

    def __init__(self, fabric: Fabric, targets: dict[str, Endpoint], checks: Sequence[Check],
                 collector: Collector, *, shard: tuple[int, int] | None = None, state_dir: Path | None = None,
                 textfile: Path | None = None, clock: Callable[[], float] = time.time,
                 damping: tuple[int, int] = (hysteresis.DEFAULT_UP, hysteresis.DEFAULT_DOWN),
                 all_priorities: bool = False, warnings: Sequence[str] = ()) -> None:
        self.fabric = fabric
        self.keep = None if all_priorities else output.kept_priorities(fabric)
        self.warnings = list(warnings)
        self.series = 0
        self.targets = {n: e for n, e in targets.items() if in_shard(n, shard)}
        self.checks = list(checks)
        self.needed = needed_metrics(self.checks)
        """Counters whose rates the checks (and storm tracing) read: the others are exported, not rated."""
        self.collector = collector
        self.shard = shard
        self.textfile = textfile
        self.clock = clock
        depth = max([c.for_points for c in self.checks] + [1]) + 1
        self.snaps: deque[Snapshot] = deque(maxlen=depth)
        self.points: deque[Point] = deque(maxlen=depth)
        key = f"watch-{shard[0]}-of-{shard[1]}" if shard else "watch"
        scope = f"{fabric.fabric.name}:{key}"
        self.store = PreviousRun(state_dir, scope=scope) if state_dir is not None else None
        self.hysteresis_file = (state_dir / f"hysteresis-{_BAD.sub('_', scope)}.json"
                                if state_dir is not None else None)
        self.hysteresis = hysteresis.Hysteresis(*damping)
        if self.hysteresis_file is not None:
            hysteresis.load(self.hysteresis, self.hysteresis_file, clock(), MAX_PREVIOUS_AGE_S)
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.last: Report | None = None
        self.last_point: Point | None = None
        self.rounds = 0
        self.round_ts = 0.0
        self.round_s = 0.0
        self._renderer = exposition.Renderer()
        self._gc = RoundGC()
        self.exposition = scrape.Exposition.of(b"")
        self.publish()

    def publish(self) -> None:
        """Render the exposition of the latest round once; scrapes send these bytes until the next. The
        per-port series are written straight from the snapshot (the same bytes as rendering
        ``FabricCollector.families()``, which the registry path and the tests use)."""
        head, point, tail = FabricCollector(self).parts()
        samples = point.snapshot if point is not None else ()
        body, self.series = self._renderer.render_round(head, samples, self.keep, tail)
        self.exposition = scrape.Exposition.of(body)

    def round(self) -> Report:
        t0 = time.perf_counter()
        if not self.snaps and self.store is not None:
            prev = self.store.previous()
            if prev is not None and 0 < self.clock() - prev.ts <= MAX_PREVIOUS_AGE_S:
                self.snaps.append(prev)
        snap = self.collector(self.fabric, self.targets)
        pair = [self.snaps[-1], snap] if self.snaps else [snap]
        self.points.append(build_points(pair, self.needed, strip=False)[0])
        self.snaps.append(snap)
        ctx = Context(self.fabric, list(self.snaps), points=list(self.points), options={"shard": self.shard})
        report = self.hysteresis.apply(evaluate(self.checks, ctx))
        for pt in ctx.points[:-1]:  # the shipped windows read back the point before the newest only (a
            pt.verdicts.clear()     # longer one evaluates its older points again)
        report.warnings.extend(self.warnings)
        if self.store is not None:
            self.store.save(snap)
        if self.hysteresis_file is not None:
            hysteresis.save(self.hysteresis, self.hysteresis_file, self.clock())
        report.elapsed_s = time.perf_counter() - t0
        with self.lock:
            self.last = report
            self.last_point = self.points[-1]
            self.rounds += 1
            self.round_ts = self.clock()
            self.round_s = report.elapsed_s
        self.publish()
        if self.textfile is not None:
            tmp = self.textfile.with_name(self.textfile.name + f".{os.getpid()}.tmp")
            tmp.write_text(output.to_prometheus(report), encoding="utf-8")
            tmp.replace(self.textfile)
        self._gc.round_done()
        return report

    def run(self, period: float, *, rounds: int | None = None,
            on_round: Callable[[Report], None] | None = None) -> None:
        """Rounds every ``period`` seconds on a fixed schedule (a slow round delays, never piles up)."""
        start = time.monotonic()
        k = done = 0
        while not self.stop.is_set():
            try:
                report = self.round()
            except Exception as exc:  # a failed round is reported and retried next period
                report = Report("unknown", [], [], errors={"watch": [f"{type(exc).__name__}: {exc}"]})
                with self.lock:
                    self.last = report
                self.publish()
            if on_round is not None:
                on_round(report)
            k += 1
            done += 1
            if rounds is not None and done >= rounds:
                return
            now = time.monotonic()
            nxt = start + k * period
            if nxt < now:  # overran: skip missed slots
                k = int((now - start) // period) + 1
                nxt = start + k * period
            self.stop.wait(nxt - now)

    def close(self) -> None:
        self.stop.set()
        self._gc.close()
        if self.store is not None:
            self.store.close()
        closer = getattr(self.collector, "close", None)  # a collector pool ends its processes
        if callable(closer):
            closer()


MetricFamilyRows = output.Family


class FabricCollector:
    """prometheus_client custom collector over the watcher's latest round."""

    def __init__(self, watcher: Watcher) -> None:
        self.watcher = watcher

    def families(self) -> list[MetricFamilyRows]:
        head, point, tail = self.parts()
        return head + (output.sample_families(point.snapshot, self.watcher.keep) if point else []) + tail

    def parts(self) -> tuple[list[MetricFamilyRows], Point | None, list[MetricFamilyRows]]:
        """The watch's own families, the latest point (its samples are the per-port series), and the
        report's families: in exposition order."""
        w = self.watcher
        with w.lock:
            report, point, rounds, ts, dur = w.last, w.last_point, w.rounds, w.round_ts, w.round_s
        fams: list[MetricFamilyRows] = [
            MetricFamilyRows("fabriccfg_watch_rounds_total", "Poll-and-check rounds this watch process "
                             "completed since it started.", "counter", [], [([], float(rounds))]),
            MetricFamilyRows("fabriccfg_watch_last_round_timestamp_seconds", "Unix time the last round "
                             "ended; absent or old means the exporter or its rounds stopped.", "gauge", [],
                             [([], ts)]),
            MetricFamilyRows("fabriccfg_watch_last_round_duration_seconds", "Wall-clock seconds the last "
                             "round took (poll, rates, checks).", "gauge", [], [([], dur)]),
        ]
        return fams, point, output.report_families(report) if report is not None else []

    def collect(self) -> Iterator[Any]:
        for fam in self.families():
            mf: CounterMetricFamily | GaugeMetricFamily
            if fam.kind == "counter":
                mf = CounterMetricFamily(fam.name.removesuffix("_total"), fam.doc, labels=fam.labelnames)
            else:
                mf = GaugeMetricFamily(fam.name, fam.doc, labels=fam.labelnames)
            for lv, v in fam.rows:
                mf.add_metric(lv, v)
            yield mf

    def describe(self) -> list[Any]:
        return []


def serve(watcher: Watcher, address: tuple[str, int], *, workers: int = 4) -> scrape.Server:
    """Serve ``/metrics``: the watcher's latest pre-rendered exposition (:mod:`fabriccfg.verify.scrape`)."""
    return scrape.start(address, lambda: watcher.exposition, workers=workers)
