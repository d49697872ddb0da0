"""Buffer rules for RoCE: ECN thresholds that can mark, and PFC headroom that fits each port.

Headroom is the buffer a port keeps for bytes still arriving after it sends a pause; it grows
with speed and cable length (``derive.pfc_headroom_bytes``, roce.md §7.3). When it does not fit
the ASIC's per-port budget the switch refuses the profile or, worse, drops in the lossless class.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabriccfg.inventory.derive import (
    DEFAULT_CABLE_M,
    asic_info,
    effective_cable_m,
    headroom_budget_bytes,
    pfc_headroom_bytes,
)
from fabriccfg.inventory.rules import Issue, rule
from fabriccfg.inventory.rules._util import link_speeds

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric, RoceQos, Switch


def _roce(fabric: Fabric) -> RoceQos | None:
    return fabric.roce if fabric.fabric.technology == "roce" else None


def _lossless(fabric: Fabric) -> RoceQos | None:
    roce = _roce(fabric)
    return roce if roce is not None and roce.mode == "lossless" else None


@rule("ecn-thresholds", "error", "ECN Kmin is below Kmax")
def ecn_thresholds(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is not None and roce.ecn.kmin_bytes >= roce.ecn.kmax_bytes:
        yield Issue(
            f"ECN kmin_bytes {roce.ecn.kmin_bytes} must be below kmax_bytes {roce.ecn.kmax_bytes} "
            "(NVIDIA default 150000 / 1500000)",
            ("roce", "ecn", "kmin_bytes"),
        )


@rule("ecn-probability", "error", "ECN marking probability at Kmax is 1..100 %")
def ecn_probability(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is not None and not 1 <= roce.ecn.pmax_percent <= 100:
        yield Issue(
            f"ECN pmax_percent {roce.ecn.pmax_percent} is not a percentage in 1..100",
            ("roce", "ecn", "pmax_percent"),
        )


@rule("ecn-buffer", "error", "ECN thresholds fit in the lossless pool of each switch ASIC's buffer")
def ecn_buffer(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is None:
        return
    by_asic: dict[str, list[str]] = {}
    for sw in fabric.switches:
        known = asic_info(sw.asic)
        if known is not None:
            by_asic.setdefault(known.name, []).append(sw.name)
    for name, switches in sorted(by_asic.items()):
        known = asic_info(name)
        assert known is not None
        pool = known.buffer_bytes * roce.buffer.lossless_pool_percent // 100
        for key in ("kmax_bytes", "kmin_bytes"):
            value = getattr(roce.ecn, key)
            if value > pool:
                shown = ", ".join(switches[:3]) + (
                    f" and {len(switches) - 3} more" if len(switches) > 3 else ""
                )
                yield Issue(
                    f"ECN {key} {value} exceeds the lossless pool of {name} ({pool} bytes = "
                    f"{roce.buffer.lossless_pool_percent}% of {known.buffer_bytes}) on {shown}: it would "
                    "never mark",
                    ("roce", "ecn", key),
                )
                break


def _switch_ends(fabric: Fabric) -> Iterator[tuple[int, Switch]]:
    devices = fabric.devices
    for i, link in enumerate(fabric.links):
        for dev_name, _port in link.ends:
            dev = devices.get(dev_name)
            if dev is not None and dev.kind == "switch":
                yield i, dev  # type: ignore[misc]


@rule(
    "pfc-headroom",
    "error",
    "PFC headroom per port (speed, cable length, MTU; mlx5 formula) fits the ASIC budget",
)
def pfc_headroom(fabric: Fabric) -> Iterator[Issue]:
    roce = _lossless(fabric)
    if roce is None:
        return
    speeds = link_speeds(fabric)
    budgets: dict[str, int] = {}
    for i, sw in _switch_ends(fabric):
        link = fabric.links[i]
        budget = budgets.get(sw.name)
        if budget is None:
            budget = budgets[sw.name] = headroom_budget_bytes(fabric, sw)
        cable = effective_cable_m(link)
        need = pfc_headroom_bytes(speeds[i], cable, roce.switch_mtu)
        if need > budget:
            assumed = "" if link.length_m is not None else f" (no length_m: {DEFAULT_CABLE_M:g} m assumed)"
            yield Issue(
                f"PFC headroom for {link.a} <-> {link.b} at {speeds[i]}G over {cable:g} m{assumed}, MTU "
                f"{roce.switch_mtu} is {need} bytes, more than {sw.name}'s per-port budget of {budget} "
                "(roce.buffer.headroom_budget_bytes)",
                ("links", i, "length_m") if link.length_m is not None else ("links", i),
            )


@rule(
    "cable-length-missing", "warning", "Links to switches in a lossless RoCE fabric give their cable length"
)
def cable_length_missing(fabric: Fabric) -> Iterator[Issue]:
    roce = _lossless(fabric)
    if roce is None:
        return
    speeds = link_speeds(fabric)
    done: set[int] = set()
    for i, _sw in _switch_ends(fabric):
        link = fabric.links[i]
        if link.length_m is not None or i in done:
            continue
        done.add(i)
        assumed = pfc_headroom_bytes(speeds[i], DEFAULT_CABLE_M, roce.switch_mtu)
        short = pfc_headroom_bytes(speeds[i], 5, roce.switch_mtu)
        yield Issue(
            f"{link.a} <-> {link.b} has no length_m: the switch assumes {DEFAULT_CABLE_M:g} m and reserves "
            f"{assumed} bytes of PFC headroom per port ({short} at 5 m)",
            ("links", i),
        )
