"""Helpers shared by the parsers: the IB node resolver context and IB counter kinds."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from fabriccfg.telemetry.model import METRICS, Kind

NodeResolver = Callable[[str | None, str | None], str | None]
"""(GUID '0x...' or None, node description or None) -> inventory device name (None: unknown)."""
PortNamer = Callable[[str, int], str]
"""(inventory device, IB port number) -> the port name the inventory uses."""

_DESC_HOST = re.compile(r"^(?:MF0;)?([^:;\s]+)")


def host_of_desc(desc: str) -> str:
    """Node description -> host/switch name: 'MF0;leaf-1:MQM8700/U1' -> 'leaf-1', 'gpu01 HCA-1' -> 'gpu01'."""
    m = _DESC_HOST.match(desc.strip())
    return m.group(1) if m else desc.strip()


def norm_guid(text: str) -> str:
    """'0x2c903006e29b0' / '2c903006e29b0' / 'S-0002c9...' -> '0x0002c903006e29b0' (16 hex digits)."""
    t = text.strip()
    if t[:2] in ("S-", "H-", "R-"):
        t = t[2:]
    if t.lower().startswith("0x"):
        t = t[2:]
    return "0x" + t.lower().rjust(16, "0")


@dataclass
class IbContext:
    """How parsers map fabric-wide IB output (ibnetdiscover, ibqueryerrors, sminfo) to inventory names.

    ``guids``: node GUID -> device; ``port_guids``: port GUID -> (device, port) (HCA ports);
    ``nics``: host -> its NIC names in order; ``port_name``: (switch, IB port number) -> port name.
    Without them a node is named by the host part of its description and a port by its number."""

    resolve: NodeResolver | None = None
    port_name: PortNamer | None = None
    guids: dict[str, str] = field(default_factory=dict)
    port_guids: dict[str, tuple[str, str]] = field(default_factory=dict)
    nics: dict[str, list[str]] = field(default_factory=dict)
    sm_devices: frozenset[str] = frozenset()
    """Devices that run a subnet manager (for ``sminfo LID`` follow-ups)."""

    def device(self, guid: str | None, desc: str | None) -> str:
        if guid is not None:
            g = norm_guid(guid)
            if g in self.guids:
                return self.guids[g]
            if g in self.port_guids:
                return self.port_guids[g][0]
        if self.resolve is not None:
            name = self.resolve(norm_guid(guid) if guid else None, desc)
            if name:
                return name
            if guid is not None:  # inventory-backed and unknown (e.g. a SHARP aggregation node): its GUID
                return norm_guid(guid)
        if desc:
            return host_of_desc(desc)
        return norm_guid(guid) if guid else "unknown"

    def port(self, device: str, number: int) -> str:
        if self.port_name is not None:
            return self.port_name(device, number)
        return str(number)

    def endpoint(self, guid: str | None, desc: str | None, number: int,
                 port_guid: str | None = None) -> tuple[str, str]:
        """(device, port) of port ``number`` of the node ``guid``/``desc`` (``port_guid`` wins)."""
        for g in (port_guid, guid):
            if g is not None and norm_guid(g) in self.port_guids:
                return self.port_guids[norm_guid(g)]
        dev = self.device(guid, desc)
        nics = self.nics.get(dev)
        if nics:
            words = (desc or "").replace(";", " ").split()
            for w in words[1:]:
                if w in nics:
                    return dev, w
                m = _HCA_N.match(w)
                if m and 1 <= int(m.group(1)) <= len(nics):
                    return dev, nics[int(m.group(1)) - 1]
            if len(nics) == 1:
                return dev, nics[0]
        return dev, self.port(dev, number)


_HCA_N = re.compile(r"^HCA-(\d+)$", re.IGNORECASE)


def ib_kind(name: str, extended: bool) -> Kind:
    """Saturating width of an IB PMA counter: 64 bits in PortCountersExtended (``-x``) when present."""
    if extended:
        return "sat64"
    if name in ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait"):
        return "sat32"
    kind = METRICS.get(name, ("sat16",))[0]
    if kind in ("sat4", "sat8", "sat16", "sat32", "sat64"):
        return kind  # type: ignore[return-value]
    return "sat64"
