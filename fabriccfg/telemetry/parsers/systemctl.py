"""``systemctl is-active UNIT...``: one state per line, in the order the units were given."""

from __future__ import annotations

from fabriccfg.telemetry.model import Sample, label

_STATES = frozenset({"active", "inactive", "failed", "activating", "deactivating", "reloading", "unknown"})


def parse(text: str) -> list[str]:
    return [w for w in (line.strip() for line in text.splitlines()) if w in _STATES]


def samples(device: str, text: str, units: tuple[str, ...]) -> list[Sample]:
    states = parse(text)
    if len(states) != len(units):
        return []
    return [Sample(device, None, "service_state", label("service", u), st, "state")
            for u, st in zip(units, states, strict=True)]
