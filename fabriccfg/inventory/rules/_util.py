"""Helpers shared by the rule families."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from fabriccfg.inventory.derive import port_speed, switch_ports

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch

PathT = tuple[str | int, ...]
_SUGGEST_LIMIT = 5000  # difflib over more names than this costs more than the hint is worth
_PORTS: dict[tuple[str, int, tuple[tuple[str, str], ...]], dict[str, int]] = {}


def iter_devices(fabric: Fabric) -> Iterator[tuple[PathT, Device]]:
    """Every device with its data path, switches first."""
    for section in ("switches", "hosts", "management_hosts"):
        for i, dev in enumerate(getattr(fabric, section)):
            yield (section, i), dev


def ports_of(switch: Switch) -> dict[str, int]:
    """Valid port names of a switch, cached by the settings that decide them (1,000 leaves share one)."""
    key = (switch.platform, switch.ports, tuple(sorted(switch.breakouts.items())))
    got = _PORTS.get(key)
    if got is None:
        got = switch_ports(switch)
        if len(_PORTS) > 4096:
            _PORTS.clear()
        _PORTS[key] = got
    return got


def suggest(name: str, known: Iterable[str]) -> str:
    """'; did you mean X?' for the closest known name, or ''."""
    names = list(known)
    if not names or len(names) > _SUGGEST_LIMIT:
        return ""
    close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def end_path(index: int, end: int) -> PathT:
    """Data path of end ``end`` (0 = a, 1 = b) of link ``index``."""
    return ("links", index, "a" if end == 0 else "b")


_SPEEDS: list[tuple[Fabric, list[int]]] = []


def end_speed(fabric: Fabric, device: Device, port: str) -> int:
    """Speed of one link end (:func:`derive.port_speed`) with the switch port table cached."""
    ports = ports_of(device) if device.kind == "switch" else None  # type: ignore[arg-type]
    return port_speed(fabric, device, port, ports)


def link_speeds(fabric: Fabric) -> list[int]:
    """Effective speed of every link (its own ``speed``, else the slower known end), cached per fabric."""
    if _SPEEDS and _SPEEDS[0][0] is fabric:
        return _SPEEDS[0][1]
    devices = fabric.devices
    out: list[int] = []
    for link in fabric.links:
        if link.speed:
            out.append(link.speed)
            continue
        speeds = [end_speed(fabric, devices[d], p) for d, p in link.ends if d in devices]
        out.append(min(speeds) if speeds else fabric.fabric.link_speed)
    _SPEEDS[:] = [(fabric, out)]
    return out


def clear_caches() -> None:
    """Drop the per-fabric cache (``run_rules`` calls this so no fabric outlives its validation)."""
    _SPEEDS.clear()
