"""Round-based garbage collection: the oldest generation every N rounds, thresholds restored on close."""

from __future__ import annotations

import gc
from typing import Any

from fabriccfg.telemetry.gc_rounds import NEVER, YOUNG, RoundGC


def test_the_oldest_generation_is_collected_every_n_rounds_and_thresholds_come_back() -> None:
    before = gc.get_threshold()
    full: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "stop" and info["generation"] == 2:
            full.append(1)

    policy = RoundGC(every=3)
    gc.callbacks.append(seen)
    try:
        assert gc.get_threshold() == (YOUNG, 20, NEVER)
        for _ in range(7):
            policy.round_done()
    finally:
        gc.callbacks.remove(seen)
        policy.close()
    assert len(full) == 2  # after rounds 3 and 6
    assert gc.get_threshold() == before
