"""`fabriccfg push --verify`: run the device's health checks after the change and before confirm.

Handed to one push as ``post_push_checks`` (:func:`fabriccfg.push.api.push`). For each pushed device, two
telemetry snapshots of that device alone are taken ``interval`` seconds apart and the checks run on them;
any CRITICAL finding on the device is a problem, which makes the push roll the device back (like a failed
transaction verification). Warnings and UNKNOWN (telemetry that could not be read) are logged into the
problem text only when ``strict``: a push is not undone because a counter could not be polled.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.telemetry.model import Snapshot
from fabriccfg.verify.engine import Check, Context, evaluate, load_checks, needed_metrics
from fabriccfg.verify.runner import Collector, default_collector

ROLLBACK_SEVERITIES = frozenset({"critical"})


def make_check(fabric: Fabric, checks: Sequence[Check] | None = None, *, samples: int = 2,
               interval: float = 2.0, strict: bool = False, collector: Collector | None = None,
               sleep: Callable[[float], None] = time.sleep) -> Callable[[Any], list[str]]:
    """A post-push check bound to ``fabric`` (the hook's context carries the device, not the fabric)."""
    check_list = list(checks) if checks is not None else load_checks()
    severities = ROLLBACK_SEVERITIES | ({"warning", "unknown"} if strict else set())

    def post_push_verify(ctx: Any) -> list[str]:
        collect = collector or default_collector(devices=[ctx.name])
        targets = {ctx.name: ctx.endpoint}
        snaps: list[Snapshot] = []
        for i in range(max(2, samples)):
            if i:
                sleep(max(0.0, snaps[-1].ts + interval - time.time()))
            snaps.append(collect(fabric, targets))
        report = evaluate(check_list, Context(fabric, snaps, metrics=needed_metrics(check_list)))
        return [f"verify {f.check} {f.severity.upper()} at {f.where}: {f.message}"
                for f in report.findings if f.device == ctx.name and f.severity in severities]

    post_push_verify.__name__ = "fabriccfg_verify"
    return post_push_verify


def enable_for_inventory(inventory: Any, **kwargs: Any) -> Callable[[Any], list[str]] | None:
    """``push --verify``: load the inventory and build the check for this push; None when it does not load
    (the push itself then reports the inventory's errors)."""
    from fabriccfg.inventory.load import InventoryError, load_fabric

    try:
        fabric = load_fabric(inventory)
    except (InventoryError, OSError):
        return None
    return make_check(fabric, **kwargs)
