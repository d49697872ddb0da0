"""Render-side derivations, computed once per fabric and cached.

Shared maths (PFC headroom, effective QoS, port speeds) lives in :mod:`fabriccfg.inventory.derive`
and is reused here; this module adds what only configs need: per-port facts of a switch, pause
quanta, the GUID tables of an InfiniBand fabric (root GUIDs = the top switch tier, compute-node
GUIDs, node-name map) and partitions with their members resolved to GUIDs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypeVar

from fabriccfg.inventory.derive import effective_cable_m, pfc_headroom_bytes, switch_ports
from fabriccfg.render.filters import cable

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Link, Switch

T = TypeVar("T")

PAUSE_QUANTA: dict[int, int] = {800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67}
"""Peer response time in pause quanta per speed (IEEE 802.3 31B.3.7; SONiC buffer_headroom_mellanox.lua)."""

PARTITION_KEYWORDS = frozenset({"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"})
_TIER = {"core": 2, "spine": 1, "leaf": 0}
_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def _headroom(speed: int, length: float, mtu: int) -> int:
    return pfc_headroom_bytes(speed, length, mtu)


@lru_cache(maxsize=64)
def pause_quanta(speed_gbps: int) -> int:
    """Pause quanta of the nearest listed speed at or below ``speed_gbps`` (10G for anything slower)."""
    for speed in sorted(PAUSE_QUANTA, reverse=True):
        if speed_gbps >= speed:
            return PAUSE_QUANTA[speed]
    return PAUSE_QUANTA[10]


@lru_cache(maxsize=65536)
def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort ``Ethernet2/1`` before ``Ethernet10/1`` (the order devices print ports in)."""
    return tuple((0, int(p)) if p.isdigit() else (1, p) for p in _DIGITS.split(text) if p)


@dataclass(frozen=True, slots=True)
class PortFacts:
    """One cabled switch port with everything its config needs."""

    name: str
    peer: str
    """``device:port`` at the other end (used as the interface description)."""
    speed_gbps: int
    cable_m: int
    """Cable length rounded up to whole metres (100 m when the inventory gives none)."""
    headroom_bytes: int
    """PFC xoff headroom at the switch MTU (mlx5 formula, roce.md §7.3 item 1)."""
    pause_quanta: int


@dataclass(frozen=True, slots=True)
class PartitionView:
    name: str
    pkey: int
    ipoib: bool
    mtu: int | None
    rate: int | None
    sl: int | None
    defmember: str | None
    members: tuple[tuple[str, str], ...]
    """(``ALL_CAS`` | ``0x…`` port GUID, membership) in inventory order."""


@dataclass
class FabricFacts:
    """Fabric-level derivations, built lazily and kept for the life of one :class:`Fabric` object."""

    fabric: Fabric
    _ports: dict[tuple[str, int], tuple[PortFacts, ...]] = field(default_factory=dict)
    _port_names: dict[str, dict[str, int]] = field(default_factory=dict)
    _links: dict[tuple[int, int], tuple[int, float, int]] = field(default_factory=dict)
    _link_base: dict[int, tuple[int, float]] = field(default_factory=dict)
    _ends: dict[str, list[tuple[str, str, str, Link]]] | None = None
    _memo: dict[str, Any] = field(default_factory=dict)
    _ib: IbFacts | None = None

    # ----------------------------------------------------------------- Ethernet
    def port_names(self, switch: Switch) -> dict[str, int]:
        got = self._port_names.get(switch.name)
        if got is None:
            got = self._port_names[switch.name] = switch_ports(switch)
        return got

    def _end_speed(self, device: Device, port: str) -> int:
        fab = self.fabric.fabric
        if device.kind == "switch":
            sw: Switch = device  # type: ignore[assignment]
            lane = self.port_names(sw).get(port, 0)
            return lane or sw.port_speed or fab.link_speed
        if device.kind == "host":
            for nic in device.nics:  # type: ignore[union-attr]
                if port in (nic.name, nic.netdev):
                    return nic.speed or fab.link_speed
        return fab.link_speed

    def link_speed(self, link: Link) -> int:
        """The link's own speed, else the slower end's (same rule as ``inventory.derive.link_speed``)."""
        if link.speed:
            return link.speed
        devices = self.fabric.devices
        speeds = [self._end_speed(dev, port) for dev_name, port in link.ends
                  if (dev := devices.get(dev_name)) is not None]
        return min(speeds) if speeds else self.fabric.fabric.link_speed

    @property
    def link_ends(self) -> dict[str, list[tuple[str, str, str, Link]]]:
        """device -> [(port, peer device, peer port, link)], built in one pass over the links."""
        if self._ends is None:
            ends: dict[str, list[tuple[str, str, str, Link]]] = {}
            for link in self.fabric.links:
                (a_dev, a_port), (b_dev, b_port) = link.ends
                ends.setdefault(a_dev, []).append((a_port, b_dev, b_port, link))
                ends.setdefault(b_dev, []).append((b_port, a_dev, a_port, link))
            self._ends = ends
        return self._ends

    def link_facts(self, link: Link, mtu: int) -> tuple[int, float, int]:
        """(speed, cable length, headroom at ``mtu``) of a link, computed once per link and MTU."""
        key = (id(link), mtu)  # the fabric keeps its links alive, so ids are stable
        got = self._links.get(key)
        if got is None:
            base = self._link_base.get(id(link))
            if base is None:
                base = self._link_base[id(link)] = (self.link_speed(link), effective_cable_m(link))
            speed, length = base
            got = self._links[key] = (speed, length, _headroom(speed, length, mtu))
        return got

    def switch_ports(self, switch: Switch, mtu: int) -> tuple[PortFacts, ...]:
        """The switch's cabled ports in device order, each with speed, cable and headroom."""
        key = (switch.name, mtu)
        got = self._ports.get(key)
        if got is not None:
            return got
        out: dict[str, PortFacts] = {}
        for port, peer_dev, peer_port, link in self.link_ends.get(switch.name, ()):
            if port in out:
                continue
            speed, length, headroom = self.link_facts(link, mtu)
            out[port] = PortFacts(port, f"{peer_dev}:{peer_port}", speed, cable(length), headroom,
                                  pause_quanta(speed))
        got = tuple(out[p] for p in sorted(out, key=natural_key))
        self._ports[key] = got
        return got

    def memo(self, key: str, build: Callable[[], T]) -> T:
        """A fabric-wide value computed once (e.g. a platform's DCQCN table)."""
        if key not in self._memo:
            self._memo[key] = build()
        return self._memo[key]  # type: ignore[no-any-return]

    # ----------------------------------------------------------------- InfiniBand
    @property
    def ib(self) -> IbFacts:
        if self._ib is None:
            self._ib = IbFacts.build(self.fabric)
        return self._ib


@dataclass(frozen=True)
class IbFacts:
    device_guids: dict[str, tuple[str, ...]]
    root_guids: tuple[str, ...]
    """GUIDs of the top switch tier (core, else spine): ftree/updn roots."""
    cn_guids: tuple[str, ...]
    """Port GUIDs of GPU-host NICs: ftree compute nodes."""
    node_names: tuple[tuple[str, str], ...]
    """(GUID, name) sorted by GUID: the node-name map."""
    partitions: tuple[PartitionView, ...]
    sm_priority: dict[str, int]

    @classmethod
    def build(cls, fabric: Fabric) -> IbFacts:
        guids: dict[str, tuple[str, ...]] = {}
        names: dict[str, str] = {}
        for sw in fabric.switches:
            if sw.guid:
                guids[sw.name] = (sw.guid,)
                names.setdefault(sw.guid, sw.name)
        cns: list[str] = []
        for host in fabric.hosts:
            own = tuple(nic.guid for nic in host.nics if nic.guid)
            guids[host.name] = own
            cns.extend(own)
            for nic in host.nics:
                if nic.guid:
                    names.setdefault(nic.guid, f"{host.name} {nic.name}")
        for mh in fabric.management_hosts:
            guids[mh.name] = (mh.port_guid,)
            names.setdefault(mh.port_guid, f"{mh.name} {mh.hca}")
        top = max((_TIER[sw.role] for sw in fabric.switches if sw.guid), default=None)
        roots = tuple(sorted(sw.guid for sw in fabric.switches if sw.guid and top is not None
                             and _TIER[sw.role] == top and top > 0))
        parts: list[PartitionView] = []
        ib = fabric.ib
        for p in ib.partitions if ib else ():
            members: list[tuple[str, str]] = []
            for m in p.members:
                spec = m.device
                if spec.upper() in PARTITION_KEYWORDS:
                    members.append((spec.upper(), m.membership))
                elif spec in guids:
                    members.extend((g, m.membership) for g in guids[spec])
                else:
                    members.append((spec.lower(), m.membership))
            parts.append(PartitionView(p.name, p.pkey, p.ipoib, p.mtu, p.rate, p.sl, p.defmember,
                                       tuple(members)))
        return cls(
            device_guids=guids,
            root_guids=roots,
            cn_guids=tuple(sorted(set(cns))),
            node_names=tuple(sorted(names.items())),
            partitions=tuple(parts),
            sm_priority={sm.device: sm.priority for sm in ib.subnet_managers} if ib else {},
        )


_CACHE: list[FabricFacts] = []
_CACHE_SIZE = 4


def facts(fabric: Fabric) -> FabricFacts:
    """The cached :class:`FabricFacts` of ``fabric`` (the model is read-only after validation)."""
    for item in _CACHE:
        if item.fabric is fabric:
            return item
    item = FabricFacts(fabric)
    _CACHE.insert(0, item)
    del _CACHE[_CACHE_SIZE:]
    return item
