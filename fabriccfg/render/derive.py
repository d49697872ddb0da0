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
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from fabriccfg.inventory.derive import (
    DEFAULT_CABLE_M,
    effective_switch_qos,
    pfc_headroom_bytes,
    roce_intent,
    switch_ports,
)
from fabriccfg.render.filters import cable

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric, Switch

T = TypeVar("T")

PAUSE_QUANTA: dict[int, int] = {800: 905, 400: 905, 200: 453, 100: 394, 50: 147, 40: 118, 25: 80, 10: 67}
"""Peer response time in pause quanta per speed (IEEE 802.3 31B.3.7; SONiC buffer_headroom_mellanox.lua)."""

PARTITION_KEYWORDS = frozenset({"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"})
_TIER = {"core": 2, "spine": 1, "leaf": 0}
_DIGITS = re.compile(r"(\d+)")


@lru_cache(maxsize=4096)
def headroom(speed_gbps: int, cable_m: float, mtu: int) -> int:
    """:func:`fabriccfg.inventory.derive.pfc_headroom_bytes`, memoised (few distinct inputs per fabric)."""
    return pfc_headroom_bytes(speed_gbps, cable_m, mtu)


@lru_cache(maxsize=4096)
def _cable(length_m: float) -> int:
    return cable(length_m)


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


class PortFacts(NamedTuple):
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


class LinkEnd(NamedTuple):
    """One end of a link seen from its device: the port, the far end, and the link's speed and length."""

    port: str
    peer_device: str
    peer_port: str
    speed_gbps: int
    length_m: float


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
    _ends: dict[str, list[LinkEnd]] | None = None
    _speed_of: dict[str, tuple[int, dict[str, int]] | None] = field(default_factory=dict)
    _ib: IbFacts | None = None
    _memo: dict[str, Any] = field(default_factory=dict)

    # ----------------------------------------------------------------- Ethernet
    def port_names(self, switch: Switch) -> dict[str, int]:
        got = self._port_names.get(switch.name)
        if got is None:
            got = self._port_names[switch.name] = switch_ports(switch)
        return got

    def _speeds(self, name: str) -> tuple[int, dict[str, int]] | None:
        """(default speed, port -> speed where it differs) of a device.

        The rules of ``inventory.derive.port_speed``: switch breakout lane, else ``port_speed``, else
        the fabric's; NIC ``speed``, else the fabric's.
        """
        got = self._speed_of.get(name)
        if got is None and name not in self._speed_of:
            device = self.fabric.devices.get(name)
            default = self.fabric.fabric.link_speed
            if device is None:
                got = None
            elif device.kind == "switch":
                sw: Switch = device  # type: ignore[assignment]
                lanes = {p: s for p, s in self.port_names(sw).items() if s} if sw.breakouts else {}
                got = (sw.port_speed or default, lanes)
            elif device.kind == "host":
                nics: dict[str, int] = {}
                for nic in device.nics:  # type: ignore[union-attr]
                    for port in (nic.name, nic.netdev):
                        if port:
                            nics.setdefault(port, nic.speed or default)
                got = (default, nics)
            else:
                got = (default, {})
            self._speed_of[name] = got
        return got

    @property
    def link_ends(self) -> dict[str, list[LinkEnd]]:
        """device -> its link ends, each with the link's speed (own, else the slower end's) and length.

        One pass over the links, so a 16k-GPU fabric pays for it once, not once per device.
        """
        if self._ends is None:
            default = self.fabric.fabric.link_speed
            speeds = self._speeds
            ends: dict[str, list[LinkEnd]] = {}
            for link in self.fabric.links:
                a_dev, _, a_port = link.a.partition(":")
                b_dev, _, b_port = link.b.partition(":")
                speed = link.speed
                if not speed:
                    sa, sb = speeds(a_dev), speeds(b_dev)
                    known = [s[1].get(p, s[0]) for s, p in ((sa, a_port), (sb, b_port)) if s is not None]
                    speed = min(known) if known else default
                length = link.length_m if link.length_m is not None else DEFAULT_CABLE_M
                ends.setdefault(a_dev, []).append(LinkEnd(a_port, b_dev, b_port, speed, length))
                if b_dev != a_dev or b_port != a_port:
                    ends.setdefault(b_dev, []).append(LinkEnd(b_port, a_dev, a_port, speed, length))
            self._ends = ends
        return self._ends

    def device_ends(self, device: str) -> dict[str, LinkEnd]:
        """The device's link ends by its port name (first link wins, as in ``Fabric.link_by_end``)."""
        out: dict[str, LinkEnd] = {}
        for end in self.link_ends.get(device, ()):
            out.setdefault(end.port, end)
        return out

    def switch_ports(self, switch: Switch, mtu: int) -> tuple[PortFacts, ...]:
        """The switch's cabled ports in device order, each with speed, cable and headroom."""
        key = (switch.name, mtu)
        got = self._ports.get(key)
        if got is not None:
            return got
        out: dict[str, PortFacts] = {}
        for port, peer_dev, peer_port, speed, length in self.link_ends.get(switch.name, ()):
            if port not in out:
                out[port] = PortFacts(port, f"{peer_dev}:{peer_port}", speed, _cable(length),
                                      headroom(speed, length, mtu), pause_quanta(speed))
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
    root_guids: tuple[str, ...]
    """GUIDs of the top switch tier (core, else spine): ftree/updn roots."""
    cn_guids: tuple[str, ...]
    """Port GUIDs of GPU-host NICs, in inventory order: ftree compute nodes."""
    node_names: tuple[tuple[str, str], ...]
    """(GUID, name) in inventory order (switches, hosts, SM hosts): the node-name map."""
    partitions: tuple[PartitionView, ...]
    sm_priority: dict[str, int]

    @classmethod
    def build(cls, fabric: Fabric) -> IbFacts:
        # One comprehension per device list (a 16k-GPU fabric has 16 384 NICs: no per-NIC calls).
        switches = fabric.switches
        sw_pairs = [(sw.guid, sw.name) for sw in switches if sw.guid]
        cn_pairs: list[tuple[str, str]] = []
        for host in fabric.hosts:
            prefix = host.name + " "
            cn_pairs += [(g, prefix + nic.name) for nic in host.nics if (g := nic.guid)]
        sm_pairs = [(mh.port_guid, f"{mh.name} {mh.hca}") for mh in fabric.management_hosts]
        pairs = sw_pairs + cn_pairs + sm_pairs
        names = dict(pairs)
        if len(names) == len(pairs):  # no GUID twice (the usual case): keep the pairs as they are
            node_names = tuple(pairs)
            cn_guids = tuple([g for g, _ in cn_pairs])
        else:  # first name of a GUID wins; compute nodes deduplicated in order
            names = {}
            for guid, name in pairs:
                names.setdefault(guid, name)
            node_names = tuple(names.items())
            cn_guids = tuple(dict.fromkeys([g for g, _ in cn_pairs]))
        tier = _TIER
        top = max((tier[sw.role] for sw in switches if sw.guid), default=0)
        roots = tuple(sorted([sw.guid for sw in switches if sw.guid and tier[sw.role] == top])) if top else ()
        ib = fabric.ib
        return cls(
            root_guids=roots,
            cn_guids=cn_guids,
            node_names=node_names,
            partitions=_partition_views(fabric),
            sm_priority={sm.device: sm.priority for sm in ib.subnet_managers} if ib else {},
        )


def _device_guids(fabric: Fabric) -> dict[str, tuple[str, ...]]:
    guids: dict[str, tuple[str, ...]] = {sw.name: (sw.guid,) for sw in fabric.switches if sw.guid}
    for host in fabric.hosts:
        guids[host.name] = tuple([g for g in [nic.guid for nic in host.nics] if g])
    for mh in fabric.management_hosts:
        guids[mh.name] = (mh.port_guid,)
    return guids


def _partition_views(fabric: Fabric) -> tuple[PartitionView, ...]:
    """Partitions with device names resolved to their port GUIDs (keywords upper-cased)."""
    guids: dict[str, tuple[str, ...]] | None = None  # only when a member names a device
    parts: list[PartitionView] = []
    for p in fabric.ib.partitions if fabric.ib else ():
        members: list[tuple[str, str]] = []
        for m in p.members:
            spec = m.device
            if spec.upper() in PARTITION_KEYWORDS:
                members.append((spec.upper(), m.membership))
                continue
            if guids is None:
                guids = _device_guids(fabric)
            if spec in guids:
                members.extend((g, m.membership) for g in guids[spec])
            else:
                members.append((spec.lower(), m.membership))
        parts.append(PartitionView(p.name, p.pkey, p.ipoib, p.mtu, p.rate, p.sl, p.defmember, tuple(members)))
    return tuple(parts)


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


class BufferThresholds(NamedTuple):
    """The buffer levels the configs set on one switch port: what a watermark is compared against.

    One derivation for render (the configs), the mock (how full a queue gets) and verify (the
    ``microburst``, ``headroom-near-full``, ``hol-blocking`` and ``ecn-threshold`` checks)."""

    kmin_bytes: int | None
    """ECN marking starts (None: ECN off on this switch)."""
    kmax_bytes: int | None
    """ECN marks at Pmax (None: ECN off on this switch)."""
    headroom_bytes: int
    """PFC xoff headroom of the port's lossless priority group (:func:`headroom`)."""


def buffer_thresholds(fabric: Fabric, switch: Switch) -> dict[str, BufferThresholds]:
    """Cabled port -> :class:`BufferThresholds` of ``switch``, from the same facts the render writes:
    the effective QoS (ECN on/off, switch MTU), the intent's ECN thresholds and
    :meth:`FabricFacts.switch_ports` headroom (cached per fabric)."""
    f = facts(fabric)

    def build() -> dict[str, BufferThresholds]:
        q = effective_switch_qos(fabric, switch)
        ecn = roce_intent(fabric).ecn
        kmin, kmax = (ecn.kmin_bytes, ecn.kmax_bytes) if q.ecn_enabled else (None, None)
        return {p.name: BufferThresholds(kmin, kmax, p.headroom_bytes) for p in f.switch_ports(switch, q.mtu)}

    return f.memo(f"buffer-thresholds:{switch.name}", build)
