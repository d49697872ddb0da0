"""Inventory -> ibsim topology file (the ``ibnetdiscover``-like net file ``ibsim -s`` reads).

One node per IB switch (its ports: the highest front-panel IB port number + 1, the internal port a
Quantum switch reports, 41 or 81), one CA per SM-host HCA and per cabled GPU-host NIC, and, when
``ib.sharp.enabled``, the SHARP aggregation node of each switch as a CA on that last port (as the
modelled mock draws it). Every link is 4x HDR.

GUIDs: a switch keeps its inventory ``guid``. ibsim always gives a CA port the GUID *node GUID + 1*
(sim_mad.c ``do_nodeinfo``), so a CA's node GUID is written as the inventory *port* GUID - 1: the
port GUIDs the SM, the diagnostics and our parsers see are the inventory's. Devices without a GUID
get the same derived GUIDs as the modelled mock (:func:`fabriccfg.mock.cli_telemetry.derived_guid`).

Node descriptions follow the modelled mock (``MF0;<name>:<MODEL>/U1`` for a managed switch,
``Quantum Mellanox Technologies`` for an MQM8790, ``<host> <hca>`` for a CA), so the parsers' name
resolution by description works on both backends. ibsim node ids are ``S-<guid>`` / ``H-<guid>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Host, ManagementHost, Switch
from fabriccfg.mock.cli_telemetry import AN_DESC, UNMANAGED_DESC, derived_guid

SPEED = "4xHDR"
AN_GUID_FLIP = 0x00FF_0000_0000_0000
"""A SHARP aggregation node's port GUID is its switch's GUID with these bits flipped (unique per switch)."""


@dataclass(frozen=True)
class SimNode:
    """One ibsim node. ``device``/``port``: the inventory device and, for a CA, its HCA/NIC name."""

    nodeid: str
    kind: str  # "switch" | "ca"
    node_guid: int
    port_guid: int
    desc: str
    nports: int
    device: str
    port: str | None = None

    @property
    def is_an(self) -> bool:
        return self.desc == AN_DESC


@dataclass
class SimTopology:
    """Nodes, links (nodeid, port, nodeid, port) and the inventory-endpoint -> (node, port) map."""

    nodes: list[SimNode] = field(default_factory=list)
    links: list[tuple[str, int, str, int]] = field(default_factory=list)
    ends: dict[tuple[str, str], tuple[SimNode, int]] = field(default_factory=dict)
    by_id: dict[str, SimNode] = field(default_factory=dict)

    def add(self, node: SimNode) -> SimNode:
        self.nodes.append(node)
        self.by_id[node.nodeid] = node
        return node

    def ca(self, device: str, port: str | None = None) -> SimNode | None:
        """The CA of ``device`` (its ``port`` NIC/HCA, or its first one)."""
        for n in self.nodes:
            if n.kind == "ca" and n.device == device and (port is None or n.port == port):
                return n
        return None

    def end(self, device: str, port: str) -> tuple[SimNode, int]:
        """(node, IB port number) of the inventory endpoint ``device:port``."""
        try:
            return self.ends[(device, port)]
        except KeyError:
            raise ValueError(f"{device}:{port} is not a cabled IB endpoint of the inventory") from None

    def peer(self, nodeid: str, port: int) -> tuple[str, int] | None:
        for a, pa, b, pb in self.links:
            if (a, pa) == (nodeid, port):
                return b, pb
            if (b, pb) == (nodeid, port):
                return a, pa
        return None

    def netfile(self) -> str:
        """The topology in ibsim's net-file format (blank line between nodes)."""
        ports: dict[str, list[tuple[int, str, int]]] = {n.nodeid: [] for n in self.nodes}
        for a, pa, b, pb in self.links:
            ports[a].append((pa, b, pb))
            ports[b].append((pb, a, pa))
        out: list[str] = []
        for n in self.nodes:
            if n.kind == "switch":
                out.append(f"switchguid=0x{n.node_guid:016x}")
                out.append(f'Switch\t{n.nports} "{n.nodeid}"\t\t# "{n.desc}" enhanced port 0 lid 0 lmc 0')
            else:
                out.append(f"caguid=0x{n.node_guid:016x}")
                out.append(f'Ca\t{n.nports} "{n.nodeid}"\t\t# "{n.desc}"')
            for port, rid, rport in sorted(ports[n.nodeid]):
                r = self.by_id[rid]
                if n.kind == "switch":
                    out.append(f'[{port}]\t"{rid}"[{rport}]\t\t# "{r.desc}" lid 0 {SPEED}')
                else:
                    out.append(f'[{port}]\t"{rid}"[{rport}]\t\t# lid 0 lmc 0 "{r.desc}" lid 0 {SPEED}')
            out.append("")
        return "\n".join(out)


def _switch_ports(sw: Switch) -> dict[str, int]:
    info = catalog.info(sw.platform)
    if info.fabric_port_number is None:
        return {}
    out: dict[str, int] = {}
    for name in info.port_names(sw):
        n = info.fabric_port_number(name)
        if n is not None:
            out[name] = n
    return out


def build(fabric: Fabric) -> SimTopology:
    """The ibsim topology of an InfiniBand inventory (ValueError for a RoCE one)."""
    if fabric.fabric.technology != "infiniband":
        raise ValueError(f"fabric {fabric.fabric.name} is not InfiniBand: ibsim simulates IB fabrics only")
    topo = SimTopology()
    sharp = bool(fabric.ib is not None and fabric.ib.sharp.enabled)
    numbers: dict[str, dict[str, int]] = {}
    for sw in fabric.switches:
        if "infiniband" not in catalog.info(sw.platform).technologies:
            continue
        guid = int(sw.guid, 16) if sw.guid else derived_guid(sw.name)
        nums = _switch_ports(sw)
        numbers[sw.name] = nums
        nports = max(nums.values(), default=sw.ports) + 1
        managed = catalog.info(sw.platform).device_type is not None
        model = (sw.model or "MQM8700").split("-")[0]
        desc = f"MF0;{sw.name}:{model}/U1" if managed else UNMANAGED_DESC
        node = topo.add(SimNode(f"S-{guid:016x}", "switch", guid, guid, desc, nports, sw.name))
        if sharp:  # not switch+8 as the modelled mock: gen numbers switch GUIDs consecutively
            an_guid = guid ^ AN_GUID_FLIP
            an = topo.add(SimNode(f"H-{an_guid - 1:016x}", "ca", an_guid - 1, an_guid, AN_DESC, 1,
                                  sw.name, None))
            topo.links.append((node.nodeid, nports, an.nodeid, 1))
    cas: list[tuple[str, str, int]] = []
    for dev in fabric.devices.values():
        if isinstance(dev, ManagementHost):
            cas.append((dev.name, dev.hca, int(dev.port_guid, 16)))
        elif isinstance(dev, Host):
            for nic in dev.nics:
                if (dev.name, nic.name) in fabric.neighbours:
                    guid = int(nic.guid, 16) if nic.guid else derived_guid(dev.name, nic.name)
                    cas.append((dev.name, nic.name, guid))
    for device, port, pguid in cas:
        node = topo.add(SimNode(f"H-{pguid - 1:016x}", "ca", pguid - 1, pguid, f"{device} {port}", 1,
                                device, port))
        topo.ends[(device, port)] = (node, 1)
    switch_node = {n.device: n for n in topo.nodes if n.kind == "switch"}
    for sw_name, nums in numbers.items():
        for pname, num in nums.items():
            topo.ends[(sw_name, pname)] = (switch_node[sw_name], num)
    for link in fabric.links:
        (da, pa), (db, pb) = link.ends
        if (da, pa) not in topo.ends or (db, pb) not in topo.ends:
            raise ValueError(f"link {da}:{pa} <-> {db}:{pb}: an end is not an IB port ibsim can simulate")
        na, num_a = topo.ends[(da, pa)]
        nb, num_b = topo.ends[(db, pb)]
        topo.links.append((na.nodeid, num_a, nb.nodeid, num_b))
    for what in ("node_guid", "port_guid"):  # ibsim refuses a duplicate; OpenSM tracks each kind apart
        seen: dict[int, str] = {}
        for n in topo.nodes:
            g = getattr(n, what)
            other = seen.setdefault(g, n.desc)
            if other != n.desc:
                kind = what.replace("_", " ")
                raise ValueError(f"{kind} 0x{g:016x} is used by both {other!r} and {n.desc!r} in the "
                                 "simulated fabric (ibsim gives a CA port the node GUID + 1)")
    return topo
