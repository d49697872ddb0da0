"""Take the samples a verify round needs and evaluate the checks: shared by verify, watch and push.

``samples`` snapshots are taken ``interval`` seconds apart (rates need two). With a state dir, the
previous run's last snapshot (SQLite sample store) is put in front, so a single-sample run from cron
still gets rates, and this run's last snapshot is stored for the next one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry.model import Snapshot
from fabriccfg.telemetry.shard import in_shard, parse_shard, shard_of
from fabriccfg.verify.engine import Check, Context, Report, evaluate, needed_metrics

Collector = Callable[[Fabric, dict[str, Endpoint]], Snapshot]
__all__ = ["Collector", "PreviousRun", "default_collector", "gather", "in_shard", "parse_shard", "shard_of",
           "verify"]

MAX_PREVIOUS_AGE_S = 3600.0
"""A stored snapshot older than this is not used for rates (a rate over hours hides a storm)."""


def default_collector(*, processes: int = 1, **kwargs: Any) -> Collector:
    """The telemetry package's collector (imported late: it pulls in SNMP and SSH clients).
    ``processes`` > 1: a :class:`~fabriccfg.telemetry.pool.CollectorPool` of that many processes."""
    from fabriccfg.telemetry import collect as collect_mod

    if processes > 1:
        from fabriccfg.telemetry.pool import CollectorPool

        shard = kwargs.pop("shard", None)
        timeout = float(kwargs.pop("timeout", 30.0))
        return CollectorPool(processes, shard=shard, timeout=timeout, options=kwargs)

    def run(fabric: Fabric, targets: dict[str, Endpoint]) -> Snapshot:
        snap: Snapshot = collect_mod.collect(fabric, targets, **kwargs)
        return snap

    return run


@dataclass
class PreviousRun:
    """The previous run's snapshot in a state dir (:class:`fabriccfg.telemetry.store.SampleStore`).

    ``scope`` keeps verify, watch and each shard apart when they share a state dir.
    """

    state_dir: Path
    scope: str = "verify"
    _store: Any = field(default=None, repr=False)

    def _open(self) -> Any:
        if self._store is None:
            from fabriccfg.telemetry.store import SampleStore

            self._store = SampleStore(self.state_dir)
        return self._store

    def previous(self) -> Snapshot | None:
        snap: Snapshot | None = self._open().latest(self.scope)
        return snap

    def save(self, snap: Snapshot) -> None:
        self._open().save(snap, self.scope)

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


def gather(fabric: Fabric, targets: dict[str, Endpoint], collector: Collector, *, samples: int = 2,
           interval: float = 5.0, store: PreviousRun | None = None,
           sleep: Callable[[float], None] = time.sleep) -> list[Snapshot]:
    """``samples`` snapshots ``interval`` s apart, after the stored previous one when it is fresh."""
    snaps: list[Snapshot] = []
    if store is not None:
        prev = store.previous()
        if prev is not None and 0 < time.time() - prev.ts <= MAX_PREVIOUS_AGE_S:
            snaps.append(prev)
    for i in range(max(1, samples)):
        if i:
            started = snaps[-1].ts
            sleep(max(0.0, started + interval - time.time()))
        snaps.append(collector(fabric, targets))
    if store is not None:
        store.save(snaps[-1])
    return snaps


def verify(fabric: Fabric, targets: dict[str, Endpoint], checks: Sequence[Check], collector: Collector, *,
           samples: int = 2, interval: float = 5.0, store: PreviousRun | None = None,
           running_configs: dict[str, dict[str, str]] | None = None,
           sleep: Callable[[float], None] = time.sleep) -> Report:
    t0 = time.perf_counter()
    snaps = gather(fabric, targets, collector, samples=samples, interval=interval, store=store, sleep=sleep)
    report = evaluate(checks, Context(fabric, snaps, running_configs=running_configs,
                                      metrics=needed_metrics(checks)))
    report.elapsed_s = time.perf_counter() - t0
    return report
