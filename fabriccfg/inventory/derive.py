"""Values derived from the intent, computed once in Python and shared by rules and renderers.

The rules check these numbers and the render package writes them into configs, so both must use
the same functions: PFC headroom per port (``roce.md`` §7.3 item 1), the effective QoS of a
switch or NIC after its overrides, port speeds after breakouts and the per-ASIC buffer facts.
Everything here is pure: no I/O, no mutation of the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabriccfg import catalog
from fabriccfg.catalog import AsicInfo
from fabriccfg.catalog import info as platform_info

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Link, Nic, RoceQos, Switch

DEFAULT_CABLE_M = 100.0
"""Cable length vendors assume when none is configured (Cumulus and Onyx show 100 m)."""

ETH_OVERHEAD_BYTES = 22
"""Ethernet header (14) + 802.1Q tag (4) + FCS (4): what a switch port MTU needs above the host MTU."""

ROCE_PATH_MTU_HOST_MIN = 4200
"""Smallest netdev MTU that carries a 4096-byte RoCE path MTU (roce.md §7.4)."""


def pfc_headroom_bytes(speed_gbps: float, cable_m: float, mtu: int) -> int:
    """PFC xoff headroom in bytes, the mlx5 driver formula (``port_buffer.c`` ``calculate_xoff``).

    ``xoff = (301 + 2.16 * cable_m) * speed_G + 2.72 * MTU`` with the speed clamped to at least
    40 Gb/s. It covers the bytes still arriving after a pause is sent: wire delay both ways at the
    cable length, the peer's response time and one maximum frame in flight at each end.
    400G, 5 m, MTU 4200 gives 136 144 bytes.
    """
    speed = max(float(speed_gbps), 40.0)
    return math.ceil((301 + 2.16 * float(cable_m)) * speed + 2.72 * mtu)




DEFAULT_HEADROOM_BUDGET_BYTES = 512 * 1024
"""Per-port headroom budget for an ASIC no platform declares (roughly a 400G-era chip)."""


def asic_info(asic: str | None) -> AsicInfo | None:
    """Look up an ASIC generation ('Spectrum-4', 'spectrum4', 'spectrum_4' all match)."""
    if not asic:
        return None
    key = asic.strip().lower().replace("_", "-").replace(" ", "-")
    table = catalog.asics()
    if key in table:
        return table[key]
    for name, item in table.items():
        if name.replace("-", "") == key.replace("-", ""):
            return item
    return None


def headroom_budget_bytes(fabric: Fabric, switch: Switch) -> int:
    """Per-port headroom budget: the inventory's override, else the ASIC table, else a default."""
    roce = fabric.roce
    if roce is not None and roce.buffer.headroom_budget_bytes is not None:
        return roce.buffer.headroom_budget_bytes
    known = asic_info(switch.asic)
    return known.headroom_budget_bytes if known else DEFAULT_HEADROOM_BUDGET_BYTES


# --------------------------------------------------------------------------- effective QoS
def roce_intent(fabric: Fabric) -> RoceQos:
    """The fabric's RoCE intent (defaults for a fabric that has none, e.g. InfiniBand)."""
    from fabriccfg.inventory.models import RoceQos

    return fabric.roce if fabric.roce is not None else RoceQos()


@dataclass(frozen=True, slots=True)
class SwitchQosView:
    """A switch's RoCE settings after its ``qos:`` overrides are applied to the fabric intent."""

    roce_dscp: int
    roce_priority: int
    cnp_dscp: int
    cnp_priority: int
    ecn_enabled: bool
    pfc_enabled: bool
    mtu: int


@dataclass(frozen=True, slots=True)
class NicQosView:
    """A NIC's RoCE settings after its ``qos:`` overrides are applied to the fabric intent."""

    trust: str
    roce_dscp: int
    pfc_priorities: tuple[int, ...]
    cnp_dscp: int
    cnp_priority: int
    mtu: int


def _pick(override: int | bool | None, default: int | bool) -> int | bool:
    return default if override is None else override


def effective_switch_qos(fabric: Fabric, switch: Switch) -> SwitchQosView:
    roce = roce_intent(fabric)
    q = switch.qos
    lossless = roce.mode == "lossless"
    if q is None:
        return SwitchQosView(
            roce.roce_dscp,
            roce.roce_priority,
            roce.cnp_dscp,
            roce.cnp_priority,
            True,
            lossless,
            roce.switch_mtu,
        )
    return SwitchQosView(
        roce_dscp=int(_pick(q.roce_dscp, roce.roce_dscp)),
        roce_priority=int(_pick(q.roce_priority, roce.roce_priority)),
        cnp_dscp=int(_pick(q.cnp_dscp, roce.cnp_dscp)),
        cnp_priority=int(_pick(q.cnp_priority, roce.cnp_priority)),
        ecn_enabled=bool(_pick(q.ecn_enabled, True)),
        pfc_enabled=bool(_pick(q.pfc_enabled, lossless)),
        mtu=roce.switch_mtu,
    )


def effective_nic_qos(fabric: Fabric, nic: Nic) -> NicQosView:
    roce = roce_intent(fabric)
    q = nic.qos
    default_pfc = (roce.roce_priority,) if roce.mode == "lossless" else ()
    if q is None:
        return NicQosView(
            "dscp", roce.roce_dscp, default_pfc, roce.cnp_dscp, roce.cnp_priority, roce.host_mtu
        )
    return NicQosView(
        trust=q.trust or "dscp",
        roce_dscp=int(_pick(q.roce_dscp, roce.roce_dscp)),
        pfc_priorities=tuple(q.pfc_priorities) if q.pfc_priorities is not None else default_pfc,
        cnp_dscp=int(_pick(q.cnp_dscp, roce.cnp_dscp)),
        cnp_priority=int(_pick(q.cnp_priority, roce.cnp_priority)),
        mtu=int(_pick(q.mtu, roce.host_mtu)),
    )


# --------------------------------------------------------------------------- ports and speeds
def switch_ports(switch: Switch) -> dict[str, int]:
    """Valid port names of ``switch`` -> breakout lane speed (0 = the switch's port speed)."""
    try:
        plat = platform_info(switch.platform)
    except (KeyError, ImportError):
        return {}
    return plat.port_names(switch)


def port_speed(fabric: Fabric, device: Device, port: str, ports: dict[str, int] | None = None) -> int:
    """Speed in Gb/s of one end of a link, from the device's own settings.

    Switch: the breakout lane speed of a sub-port, else ``port_speed``, else the fabric default.
    Host NIC: its ``speed``, else the fabric default. SM host: the fabric default.
    ``ports`` may pass a precomputed :func:`switch_ports` result (rules do, for speed).
    """
    kind = device.kind
    if kind == "switch":
        sw: Switch = device  # type: ignore[assignment]
        lane = (ports if ports is not None else switch_ports(sw)).get(port, 0)
        if lane:
            return lane
        return sw.port_speed or fabric.fabric.link_speed
    if kind == "host":
        for nic in device.nics:  # type: ignore[union-attr]
            if port in (nic.name, nic.netdev):
                return nic.speed or fabric.fabric.link_speed
    return fabric.fabric.link_speed


def link_speed(fabric: Fabric, link: Link) -> int:
    """The link's speed: its own ``speed``, else the slower end's (unknown devices: fabric default)."""
    if link.speed:
        return link.speed
    speeds = []
    for dev_name, port in link.ends:
        dev = fabric.devices.get(dev_name)
        if dev is not None:
            speeds.append(port_speed(fabric, dev, port))
    return min(speeds) if speeds else fabric.fabric.link_speed


def effective_cable_m(link: Link) -> float:
    """The link's cable length, or the 100 m the vendors assume when it is missing."""
    return link.length_m if link.length_m is not None else DEFAULT_CABLE_M


def link_headroom_bytes(fabric: Fabric, link: Link, mtu: int | None = None) -> int:
    """PFC headroom a switch port on ``link`` needs (switch MTU unless ``mtu`` is given)."""
    roce = roce_intent(fabric)
    return pfc_headroom_bytes(link_speed(fabric, link), effective_cable_m(link), mtu or roce.switch_mtu)
