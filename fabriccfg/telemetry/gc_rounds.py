"""Full garbage collections once every few rounds, not whenever CPython's counts say.

A watch round keeps ~500 samples, rates and index lists per device for the next rounds. Samples and rates
are NamedTuples, which the collector never untracks (only exact tuples are), so every full collection walks
all of them: at 560 devices CPython's own rule (objects promoted since the last full collection exceed a
quarter of the oldest generation) ran one about every round, 0.5-1 ms of CPU per device, in the watch
process and in each collector process. Young generations still collect on their own (they hold what a
round leaves in cycles), with a larger first threshold; the oldest is collected every ``every`` rounds, so
a garbage cycle that reaches it waits at most that many rounds.
"""

from __future__ import annotations

import gc

YOUNG = 50_000
"""Allocations between young collections (CPython's default is 700: ~3,400 of them a round at 560 devices)."""
NEVER = 1 << 30
"""A third threshold no round reaches: the oldest generation is collected by :meth:`RoundGC.round_done`."""


class RoundGC:
    """Sets this process's collection thresholds for round-based work; call :meth:`round_done` per round."""

    def __init__(self, every: int = 10) -> None:
        self.every = max(1, every)
        self.rounds = 0
        self._before = gc.get_threshold()
        gc.set_threshold(YOUNG, 20, NEVER)

    def close(self) -> None:
        """Back to the thresholds the process had (a library caller's process outlives the watch)."""
        gc.set_threshold(*self._before)

    def round_done(self) -> None:
        self.rounds += 1
        if self.rounds % self.every == 0:
            gc.collect()
