"""CLI telemetry output of the mock fabric, rendered from the traffic model in the real formats.

The SSH mock (:mod:`fabriccfg.mock.ssh`) calls :func:`run` for each command line; it returns
``(output, exit_status)`` or ``None`` when the line is not a telemetry command. Output uses ``\\n``
(the SSH layer converts to ``\\r\\n``) and ends with a newline. Formats: ``ib.md`` §5-§6 for the IB
tools (``perfquery``, ``ibqueryerrors``, ``ibnetdiscover``, ``sminfo``), mlx5 ``ethtool -S``, and per
switch platform the ECN / PFC / PFC-watchdog show commands its mock profile lists in ``SHOW_COMMANDS``
(:func:`show_commands`; documented in
``docs/mock-telemetry.md``, samples in ``tests/mock/fixtures/``).

IB identities (:class:`IbView`): LIDs are given in inventory order (switches, then SHARP aggregation
nodes, then SM-host HCAs, then GPU-host NICs) starting at 1; a switch's node and port GUID is its
inventory ``guid``; a NIC's node GUID equals its port GUID (ConnectX-6 behaviour); the SHARP
aggregation node of a Quantum switch is a CA with GUID switch+8 on the switch's last port (41, or 81
on a split-ready switch) when ``ib.sharp.enabled``. Node descriptions: ``MF0;<name>:<MODEL>/U1``
(managed, mlnxos-ib), ``Quantum Mellanox Technologies`` (MQM8790), ``<host> <hca>`` for CAs.
"""

from __future__ import annotations

import hashlib
import re
import shlex
import time
import weakref
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabriccfg import catalog, registry
from fabriccfg.inventory.models import Host, ManagementHost, Switch
from fabriccfg.mock import probe_outputs
from fabriccfg.mock.traffic import IB_EXT_NAMES

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel

PERFQUERY_EXT_FIELDS: tuple[str, ...] = IB_EXT_NAMES
ERROR_FIELDS: tuple[str, ...] = (
    "SymbolErrorCounter",
    "LinkErrorRecoveryCounter",
    "LinkDownedCounter",
    "PortRcvErrors",
    "PortRcvRemotePhysicalErrors",
    "PortRcvSwitchRelayErrors",
    "PortXmitDiscards",
    "PortXmitConstraintErrors",
    "PortRcvConstraintErrors",
    "LocalLinkIntegrityErrors",
    "ExcessiveBufferOverrunErrors",
    "VL15Dropped",
)
IBQUERYERRORS_FIELDS: tuple[str, ...] = (*ERROR_FIELDS, "PortXmitWait")
SWITCH_CAPMASK = "0x5A00"
CA_CAPMASK = "0x5300"
AN_DESC = "Mellanox Technologies Aggregation Node"
UNMANAGED_DESC = "Quantum Mellanox Technologies"
M32 = (1 << 32) - 1


def now(t: float | None) -> float:
    return time.time() if t is None else t


def _field(name: str, value: object) -> str:
    """libibmad ``Name:....value`` (name, colon and dots fill 33 columns)."""
    return f"{name}:".ljust(33, ".") + str(value)


def derived_guid(*key: str) -> int:
    return 0x0002C90300000000 | int.from_bytes(
        hashlib.blake2b("|".join(key).encode(), digest_size=4).digest(), "big"
    )


# --------------------------------------------------------------------------- IB identities
@dataclass(frozen=True)
class IbNode:
    name: str  # inventory device, or "<switch>/AN" for an aggregation node
    kind: str  # "switch" | "ca"
    guid: int
    lid: int
    desc: str
    nports: int
    device: str  # inventory device (the switch for an AN)
    port: str | None  # CA: the inventory port (NIC / HCA name); None for switches and ANs


class IbView:
    """LIDs, GUIDs and descriptions of an IB fabric's nodes, and port-number mapping."""

    def __init__(self, model: TrafficModel) -> None:
        self.model = model
        fab = model.fabric
        self.nodes: list[IbNode] = []
        self.by_lid: dict[int, IbNode] = {}
        self.switch: dict[str, IbNode] = {}
        self.an: dict[str, IbNode] = {}
        self.ca: dict[tuple[str, str], IbNode] = {}
        lid = 1
        sharp = bool(fab.ib is not None and fab.ib.sharp.enabled)
        for sw in fab.switches:
            info = catalog.info(sw.platform)
            if "infiniband" not in info.technologies:
                continue
            guid = int(sw.guid, 16) if sw.guid else derived_guid(sw.name)
            model_short = (sw.model or "MQM8700").split("-")[0]
            desc = f"MF0;{sw.name}:{model_short}/U1" if info.device_type else UNMANAGED_DESC
            nports = 81 if sw.breakouts else 41
            node = IbNode(sw.name, "switch", guid, lid, desc, nports, sw.name, None)
            self._add(node)
            self.switch[sw.name] = node
            lid += 1
        if sharp:
            for name, swn in list(self.switch.items()):
                an = IbNode(f"{name}/AN", "ca", swn.guid + 8, lid, AN_DESC, 1, name, None)
                self._add(an)
                self.an[name] = an
                lid += 1
        for mh in fab.management_hosts:
            node = IbNode(
                mh.name, "ca", int(mh.port_guid, 16), lid, f"{mh.name} {mh.hca}", 1, mh.name, mh.hca
            )
            self._add(node)
            self.ca[(mh.name, mh.hca)] = node
            lid += 1
        for host in fab.hosts:
            for nic in host.nics:
                if (host.name, nic.name) not in fab.neighbours:
                    continue
                guid = int(nic.guid, 16) if nic.guid else derived_guid(host.name, nic.name)
                node = IbNode(host.name, "ca", guid, lid, f"{host.name} {nic.name}", 1, host.name, nic.name)
                self._add(node)
                self.ca[(host.name, nic.name)] = node
                lid += 1

    def _add(self, node: IbNode) -> None:
        self.nodes.append(node)
        self.by_lid[node.lid] = node

    def port_number(self, device: str, port: str) -> int:
        """The IB port number of ``device:port`` (1 for a CA)."""
        if device in self.switch:
            info = catalog.info(self.model.fabric.devices[device].platform)
            n = info.fabric_port_number(port) if info.fabric_port_number else None
            if n is None:
                n = self.model.if_index(device, port)
            return n
        return 1

    def port_name(self, device: str, number: int) -> str | None:
        """Inverse of :meth:`port_number` over the cabled ports of a switch."""
        for p in self.model.ports(device):
            if self.port_number(device, p) == number:
                return p
        return None

    def node_of(self, device: str, port: str) -> IbNode | None:
        """The node owning ``device:port`` (the switch, or the CA of a NIC / HCA)."""
        if device in self.switch:
            return self.switch[device]
        return self.ca.get((device, port))

    def local_ca(self, device: str) -> IbNode | None:
        for (dev, _port), node in self.ca.items():
            if dev == device:
                return node
        return None

    def width_speed(self, device: str, port: str) -> str:
        gbps = self.model.speed_gbps(device, port)
        width = "2x" if gbps <= 100 else "4x"
        speed = "NDR" if gbps >= 400 else "HDR" if gbps >= 100 else "EDR"
        return width + speed

    def links(self, node: IbNode, t: float) -> list[tuple[int, IbNode, int, str]]:
        """(local port number, remote node, remote port number, width+speed) of ``node``'s connected ports."""
        out: list[tuple[int, IbNode, int, str]] = []
        if node.name.endswith("/AN"):
            sw = self.switch[node.device]
            return [(1, sw, sw.nports, "4xHDR")]
        ports = self.model.ports(node.device) if node.kind == "switch" else [node.port or ""]
        for p in ports:
            peer = self.model.neighbour(node.device, p, t)
            if peer is None:
                continue
            rnode = self.node_of(*peer)
            if rnode is None:
                continue
            out.append(
                (
                    self.port_number(node.device, p),
                    rnode,
                    self.port_number(*peer),
                    self.width_speed(node.device, p),
                )
            )
        if node.kind == "switch" and node.device in self.an:
            out.append((node.nports, self.an[node.device], 1, "4xHDR"))
        out.sort(key=lambda x: x[0])
        return out


_VIEWS: weakref.WeakKeyDictionary[TrafficModel, IbView] = weakref.WeakKeyDictionary()


def ib_view(model: TrafficModel) -> IbView:
    """The (cached) :class:`IbView` of ``model``."""
    view = _VIEWS.get(model)
    if view is None:
        view = _VIEWS[model] = IbView(model)
    return view


# --------------------------------------------------------------------------- perfquery
def _port_counters(model: TrafficModel, view: IbView, node: IbNode, number: int, t: float) -> dict[str, int]:
    name = view.port_name(node.device, number) if node.kind == "switch" else node.port
    if name is None or node.name.endswith("/AN"):
        return dict.fromkeys((*PERFQUERY_EXT_FIELDS, *ERROR_FIELDS, "PortXmitWait", "QP1Dropped"), 0)
    return model.port_counters(node.device, name, t)


def perfquery(
    model: TrafficModel,
    device: str,
    lid: int | None = None,
    port: int | None = None,
    t: float | None = None,
    *,
    extended: bool = True,
) -> tuple[str, int]:
    """``perfquery [-x] [LID [PORT]]`` as run on ``device`` (default: its own HCA, port 1).

    Extended (``-x``): the PortCountersExtended layout with CapMask2 0x2 (64-bit data counters; the
    error counters carry the model's saturating values). Without ``-x``: the PortCounters layout,
    32-bit data counters saturated at 2**32-1.
    """
    t = now(t)
    view = ib_view(model)
    node = view.local_ca(device) if lid is None else view.by_lid.get(lid)
    if node is None:
        target = f"Lid {lid}" if lid is not None else "local port"
        return (
            f"ibwarn: [4242] mad_rpc: _do_madrpc failed; dport ({target})\n"
            "perfquery: iberror: failed: perfquery\n",
            255,
        )
    number = port if port is not None else 1
    c = _port_counters(model, view, node, number, t)
    cap = SWITCH_CAPMASK if node.kind == "switch" else CA_CAPMASK
    lines: list[str] = []
    if extended:
        lines.append(
            f"# Port extended counters: Lid {node.lid} port {number} (CapMask: {cap} CapMask2: 0x0000002)"
        )
        lines.append(_field("PortSelect", number))
        lines.append(_field("CounterSelect", "0x0000"))
        lines += [_field(n, c[n]) for n in PERFQUERY_EXT_FIELDS]
        lines.append(_field("CounterSelect2", "0x00000000"))
        lines += [_field(n, c[n]) for n in ERROR_FIELDS]
        lines.append(_field("PortXmitWait", c["PortXmitWait"]))
        lines.append(_field("QP1Dropped", c["QP1Dropped"]))
    else:
        lines.append(f"# Port counters: Lid {node.lid} port {number} (CapMask: {cap})")
        lines.append(_field("PortSelect", number))
        lines.append(_field("CounterSelect", "0x0000"))
        lines += [_field(n, c[n]) for n in ERROR_FIELDS[:9]]
        lines.append(_field("CounterSelect2", "0x00"))
        lines += [
            _field(n, c[n])
            for n in ("LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "QP1Dropped", "VL15Dropped")
        ]
        lines += [
            _field(n, min(c[n], M32))
            for n in ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts", "PortXmitWait")
        ]
    return "\n".join(lines) + "\n", 0


# --------------------------------------------------------------------------- ibqueryerrors
def _human(v: int) -> str:
    """ibdiag_common.c ``conv_cnt_human_readable`` for non-data counters: ' (21.677M)'."""
    tmp, ui, div = v // 1024, 0, 1
    while tmp:
        ui += 1
        tmp //= 1024
        div *= 1024
    unit = ("", "K", "M", "G", "T", "P", "E")[min(ui, 6)]
    return f"{v / div:5.3f}{unit}"


def ibqueryerrors(
    model: TrafficModel, t: float | None = None, *, suppress: Collection[str] = ()
) -> tuple[str, int]:
    """``ibqueryerrors`` over the whole subnet; default thresholds 0; exit 1 when a port is beyond them."""
    t = now(t)
    view = ib_view(model)
    checked = [f for f in IBQUERYERRORS_FIELDS if f not in suppress]
    out: list[str] = []
    nodes_checked = bad_nodes = ports_checked = bad_ports = bad_switches = 0
    for node in view.nodes:
        nodes_checked += 1
        rows: list[str] = []
        total: dict[str, int] = dict.fromkeys(checked, 0)
        for number, _rnode, _rport, _ws in view.links(node, t):
            ports_checked += 1
            c = _port_counters(model, view, node, number, t)
            errs = [(f, c[f]) for f in checked if c[f] > 0]
            for f in checked:
                total[f] += c[f]
            if errs:
                bad_ports += 1
                text = " ".join(f"[{f} == {v} ({_human(v)})]" for f, v in errs)
                rows.append(f"   GUID 0x{node.guid:x} port {number}: {text}")
        if not rows:
            continue
        bad_nodes += 1
        if node.kind == "switch":
            bad_switches += 1
            out.append(f'Errors for 0x{node.guid:x} "{node.desc}"')
            agg = " ".join(f"[{f} == {v} ({_human(v)})]" for f, v in total.items() if v > 0)
            out.append(f"   GUID 0x{node.guid:x} port ALL: {agg}")
        else:
            out.append(f'Errors for "{node.desc}"')
        out += rows
    # the real tool counts every port of every node it checked, plus the ALL query of a bad switch
    # (seen on ibsim: 46 nodes / 286 ports, 287 with one bad switch), and a blank line precedes the summary
    ports_checked = sum(node.nports for node in view.nodes) + bad_switches
    suppressed = " ".join(s for s in IBQUERYERRORS_FIELDS if s in suppress)
    out.append("")
    out.append(f"## Summary: {nodes_checked} nodes checked, {bad_nodes} bad nodes found")
    out.append(f"##          {ports_checked} ports checked, {bad_ports} ports have errors beyond threshold")
    out.append("## Thresholds: ")
    out.append("## Suppressed:" + (f" {suppressed}" if suppressed else ""))
    return "\n".join(out) + "\n", 1 if bad_ports else 0


# --------------------------------------------------------------------------- ibnetdiscover
def ibnetdiscover_ports(model: TrafficModel, t: float | None = None) -> str:
    """``ibnetdiscover -p``: one line per port of every node (``ib.md`` §6; unconnected switch ports as
    ``4x ???`` with the node description only, as the real tool prints them)."""
    t = now(t)
    view = ib_view(model)
    out: list[str] = []
    for node in view.nodes:
        typ = "SW" if node.kind == "switch" else "CA"
        linked = {number: (rnode, rport, ws) for number, rnode, rport, ws in view.links(node, t)}
        for number in range(1, node.nports + 1):
            head = f"{typ:>2} {node.lid:5d} {number:2d} 0x{node.guid:016x}"
            if number in linked:
                rnode, rport, ws = linked[number]
                rtyp = "SW" if rnode.kind == "switch" else "CA"
                width, speed = ws[:2], ws[2:]
                out.append(f"{head} {width} {speed} - {rtyp:>2} {rnode.lid:5d} {rport:2d} "
                           f"0x{rnode.guid:016x} "
                           f"( '{node.desc}' - '{rnode.desc}' )")
            elif node.kind == "switch":
                out.append(f"{head} 4x ???{' ' * 36}'{node.desc}'")
    return "\n".join(out) + "\n"


def ibnetdiscover(model: TrafficModel, t: float | None = None, device: str | None = None) -> str:
    """``ibnetdiscover``: switch blocks then CA blocks, physical cabling at ``t`` (cabling-swap aware)."""
    t = now(t)
    view = ib_view(model)
    origin = view.local_ca(device) if device else None
    origin = origin or next((n for n in view.nodes if n.kind == "ca"), None) or view.nodes[0]
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(t))
    out = [
        "#",
        f"# Topology file: generated on {stamp}",
        "#",
        f"# Initiated from node {origin.guid:016x} port {origin.guid:016x}",
        "",
    ]
    for node in view.nodes:
        if node.kind != "switch":
            continue
        sw = model.fabric.devices[node.device]
        managed = isinstance(sw, Switch) and catalog.info(sw.platform).device_type is not None
        out += [
            "vendid=0x2c9",
            "devid=0xd2f0",
            f"sysimgguid=0x{node.guid:x}",
            f"switchguid=0x{node.guid:x}({node.guid:x})",
            f'Switch\t{node.nports} "S-{node.guid:016x}"\t\t# "{node.desc}" '
            f"{'enhanced' if managed else 'base'} port 0 lid {node.lid} lmc 0",
        ]
        for number, rnode, rport, ws in view.links(node, t):
            if rnode.kind == "switch":
                out.append(
                    f'[{number}]\t"S-{rnode.guid:016x}"[{rport}]\t\t# "{rnode.desc}" lid {rnode.lid} {ws}'
                )
            else:
                out.append(
                    f'[{number}]\t"H-{rnode.guid:016x}"[{rport}]({rnode.guid:x}) \t\t# "{rnode.desc}" '
                    f"lid {rnode.lid} {ws}"
                )
        out.append("")
    for node in view.nodes:
        if node.kind != "ca":
            continue
        devid = "0xcf09" if node.name.endswith("/AN") else "0x101b"
        out += [
            "vendid=0x2c9",
            f"devid={devid}",
            f"sysimgguid=0x{node.guid:x}",
            f"caguid=0x{node.guid:x}",
            f'Ca\t{node.nports} "H-{node.guid:016x}"\t\t# "{node.desc}"',
        ]
        for number, rnode, rport, ws in view.links(node, t):
            out.append(
                f'[{number}]({node.guid:x}) \t"S-{rnode.guid:016x}"[{rport}]\t\t# lid {node.lid} lmc 0 '
                f'"{rnode.desc}" lid {rnode.lid} {ws}'
            )
        out.append("")
    return "\n".join(out)


# --------------------------------------------------------------------------- sminfo
SM_STATES = {0: "SMINFO_NOTACT", 1: "SMINFO_DISCOVER", 2: "SMINFO_STANDBY", 3: "SMINFO_MASTER"}


def sm_table(
    model: TrafficModel, t: float, down: Collection[str] = ()
) -> list[tuple[str, int, int, int, int]]:
    """(device, lid, guid, priority, state) of every SM of the inventory: the master is the highest
    priority, then the lowest GUID, among SMs that are up; SMs that are down are NOTACT."""
    fab = model.fabric
    view = ib_view(model)
    rows: list[tuple[str, int, int, int, int]] = []
    for sm in fab.ib.subnet_managers if fab.ib is not None else []:
        dev = fab.devices.get(sm.device)
        if isinstance(dev, ManagementHost):
            node = view.ca.get((dev.name, dev.hca))
        elif isinstance(dev, Switch):
            node = view.switch.get(dev.name)
        else:
            node = None
        if node is None:
            continue
        up = sm.device not in down and bool(model.device_state(sm.device, t)["up"])
        rows.append((sm.device, node.lid, node.guid, sm.priority, 2 if up else 0))
    live = [r for r in rows if r[4] == 2]
    if live:
        master = min(live, key=lambda r: (-r[3], r[2]))
        rows = [(*r[:4], 3) if r is master else r for r in rows]
    return rows


def sminfo(
    model: TrafficModel,
    device: str,
    lid: int | None = None,
    t: float | None = None,
    *,
    down: Collection[str] = (),
) -> tuple[str, int]:
    """``sminfo [LID]``: the master SM by default, or the SM at ``LID``."""
    t = now(t)
    rows = sm_table(model, t, down)
    if lid is None:
        row = next((r for r in rows if r[4] == 3), None)
    else:
        row = next((r for r in rows if r[1] == lid and r[4] != 0), None)
    if row is None:
        return (
            "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid %s)\nsminfo: iberror: failed: query\n"
            % (lid if lid is not None else 0),
            255,
        )
    name, slid, guid, prio, state = row
    boot = float(model.device_state(name, t)["boot_time"])
    activity = int((t - boot) * (10 if state == 3 else 0.01)) & M32
    return (
        f"sminfo: sm lid {slid} sm guid 0x{guid:x}, activity count {activity} priority {prio} "
        f"state {state} {SM_STATES[state]}\n",
        0,
    )


# --------------------------------------------------------------------------- ethtool -S
def ethtool_stats(model: TrafficModel, device: str, netdev: str, t: float | None = None) -> tuple[str, int]:
    """``ethtool -S NETDEV`` on a ConnectX host: mlx5 names, 5-space indent.

    ``np_cnp_sent``, ``np_ecn_marked_roce_packets``, ``rp_cnp_handled``, ``rp_cnp_ignored`` live in the
    RDMA ``hw_counters`` on a real host; the mock lists them here too so one command has them all.
    """
    t = now(t)
    host = model.fabric.devices.get(device)
    nic = None
    if isinstance(host, Host):
        nic = next((n for n in host.nics if netdev in (n.netdev, n.name)), None)
    if nic is None or (device, nic.name) not in model.fabric.neighbours:
        return "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n", 1
    c = model.port_counters(device, nic.name, t)
    rows: list[tuple[str, int]] = [
        ("rx_packets", c["if_in_ucast_pkts"]),
        ("rx_bytes", c["if_in_octets"]),
        ("tx_packets", c["if_out_ucast_pkts"]),
        ("tx_bytes", c["if_out_octets"]),
        ("rx_vport_rdma_unicast_packets", c["if_in_ucast_pkts"]),
        ("rx_vport_rdma_unicast_bytes", c["if_in_octets"]),
        ("tx_vport_rdma_unicast_packets", c["if_out_ucast_pkts"]),
        ("tx_vport_rdma_unicast_bytes", c["if_out_octets"]),
        ("rx_packets_phy", c["if_in_ucast_pkts"]),
        ("rx_bytes_phy", c["if_in_octets"]),
        ("tx_packets_phy", c["if_out_ucast_pkts"]),
        ("tx_bytes_phy", c["if_out_octets"]),
        ("rx_discards_phy", c["if_in_discards"]),
        ("tx_discards_phy", c["if_out_discards"]),
        ("rx_crc_errors_phy", c["if_in_errors"]),
        ("rx_symbol_err_phy", 0),
        ("link_down_events_phy", c.get("link_down_events", c.get("LinkDownedCounter", 0))),
        ("rx_out_of_buffer", 0),
    ]
    for p in range(8):
        rows += [
            (f"rx_prio{p}_pause", c.get(f"rx_prio{p}_pause", 0)),
            (f"rx_prio{p}_pause_duration", c.get(f"rx_prio{p}_pause_duration", 0)),
            (f"tx_prio{p}_pause", c.get(f"tx_prio{p}_pause", 0)),
            (f"tx_prio{p}_pause_duration", c.get(f"tx_prio{p}_pause_duration", 0)),
        ]
    rows += [
        (n, c.get(n, 0))
        for n in (
            "tx_pause_storm_warning_events",
            "tx_pause_storm_error_events",
            "np_cnp_sent",
            "np_ecn_marked_roce_packets",
            "rp_cnp_handled",
            "rp_cnp_ignored",
        )
    ]
    return "NIC statistics:\n" + "".join(f"     {n}: {v}\n" for n, v in rows), 0


# --------------------------------------------------------------------------- switch show commands
def eth_counters(model: TrafficModel, device: str, port: str, t: float) -> dict[str, int]:
    return model.port_counters(device, port, t)


def resolve_port(model: TrafficModel, device: str, text: str) -> str | None:
    """Accept the inventory name and the usual abbreviations (``Et1/1``, ``eth1/1``, ``e1/1``)."""
    ports = model.ports(device)
    if text in ports:
        return text
    m = re.match(r"^(?:ethernet|eth|et|e)\s*(\d.*)$", text, re.IGNORECASE)
    if m:
        cand = f"Ethernet{m.group(1)}"
        if cand in ports:
            return cand
    low = {p.lower(): p for p in ports}
    return low.get(text.lower())


def ports_of(model: TrafficModel, device: str, port: str | None) -> list[str] | None:
    """Every port of ``device`` (``port`` None) or the one ``port`` names; None when it names none."""
    if port is None:
        return model.ports(device)
    p = resolve_port(model, device, port)
    return [p] if p else None


def no_port(device: str, text: str) -> tuple[str, int]:
    return f"Error: interface {text} not found on {device}\n", 1


def lossless_tc(model: TrafficModel) -> int:
    return model.lossless_prio


def wd_state(c: dict[str, int], p: int) -> tuple[int, int, bool]:
    det, res = c.get(f"pfcwd_storm_detected.{p}", 0), c.get(f"pfcwd_storm_restored.{p}", 0)
    return det, res, det > res


def text_table(headers: list[str], rows: list[list[str]], align: list[str]) -> str:
    """A ``tabulate``-style "simple" table (as SONiC's show commands print)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(cells, widths, align, strict=True)
        )

    lines = [fmt(headers).rstrip(), "  ".join("-" * w for w in widths)]
    lines += [fmt(r).rstrip() for r in rows]
    return "\n".join(lines) + "\n"


def comma(v: int) -> str:
    return f"{v:,}"
































# --------------------------------------------------------------------------- dispatch
Renderer = Callable[["TrafficModel", str, "re.Match[str]", float], tuple[str, int]]


def with_port(fn: Callable[[TrafficModel, str, str, float], tuple[str, int]]) -> Renderer:
    def render(model: TrafficModel, device: str, m: re.Match[str], t: float) -> tuple[str, int]:
        port = resolve_port(model, device, m.group("port"))
        if port is None:
            return no_port(device, m.group("port"))
        return fn(model, device, port, t)

    return render


def opt_port(fn: Callable[[TrafficModel, str, str | None, float], tuple[str, int]]) -> Renderer:
    def render(model: TrafficModel, device: str, m: re.Match[str], t: float) -> tuple[str, int]:
        return fn(model, device, m.group("port"), t)

    return render


def no_args(fn: Callable[[TrafficModel, str, float], tuple[str, int]]) -> Renderer:
    def render(model: TrafficModel, device: str, m: re.Match[str], t: float) -> tuple[str, int]:
        return fn(model, device, t)

    return render


PORT = r"(?P<port>\S+)"
"""The port group of a show-command regex (for :func:`with_port` / :func:`opt_port`)."""
ShowCommands = Sequence[tuple[re.Pattern[str], Renderer]]


def show_commands(platform: str) -> ShowCommands:
    """The platform's mock profile ``SHOW_COMMANDS``: (command regex, renderer), empty when it has none."""
    try:
        profile = registry.mock_profile(platform)
    except KeyError:  # not a registered platform
        return ()
    commands: ShowCommands = getattr(profile, "SHOW_COMMANDS", ())
    return commands


def _ib_only(model: TrafficModel) -> bool:
    return model.technology == "infiniband"


def run(
    model: TrafficModel, device: str, line: str, t: float | None = None, *, down: Collection[str] = ()
) -> tuple[str, int] | None:
    """Render the telemetry command ``line`` typed on ``device``; None when it is not one.

    ``down``: devices the caller knows are unreachable (faults), for ``sminfo``'s SM election.
    Commands: ``perfquery [-x] [LID [PORT]]``, ``ibqueryerrors [-s NAMES] [-c]``, ``ibnetdiscover``,
    ``sminfo [LID]``, ``ethtool -S NETDEV``, and per switch platform the ECN / PFC-watchdog show
    commands of the platform's mock profile (:func:`show_commands`).
    """
    t = now(t)
    text = " ".join(line.strip().split())
    if text.startswith("sudo "):
        text = text[5:]
    if not text:
        return None
    dev = model.fabric.devices.get(device)
    if dev is None:
        return None
    for rx, render in show_commands(dev.platform):
        m = rx.match(text)
        if m:
            return render(model, device, m, t)
    try:
        argv = shlex.split(text)
    except ValueError:
        return None
    cmd, args = argv[0], argv[1:]
    if cmd in probe_outputs.TOOLS and isinstance(dev, Host):  # fabriccfg probe (issue 15)
        return probe_outputs.run(model, device, text, t)
    if cmd == "ethtool" and len(args) == 2 and args[0] in ("-S", "--statistics"):
        return ethtool_stats(model, device, args[1], t)
    if not _ib_only(model) or isinstance(dev, Switch):
        return None
    if cmd == "perfquery":
        extended = False
        nums: list[int] = []
        for a in args:
            if a in ("-x", "--extended"):
                extended = True
            elif a.startswith("-"):
                continue
            else:
                try:
                    nums.append(int(a, 0))
                except ValueError:
                    return f"perfquery: invalid argument {a!r}\n", 255
        lid = nums[0] if nums else None
        port = nums[1] if len(nums) > 1 else None
        return perfquery(model, device, lid, port, t, extended=extended)
    if cmd == "ibqueryerrors":
        suppress: list[str] = []
        it = iter(args)
        for a in it:
            if a in ("-s", "--suppress"):
                suppress += next(it, "").split(",")
            elif a in ("-c", "--suppress-common"):
                suppress.append("PortRcvSwitchRelayErrors")
        return ibqueryerrors(model, t, suppress=suppress)
    if cmd == "ibnetdiscover":
        if "-p" in args or "--ports" in args:
            return ibnetdiscover_ports(model, t), 0
        return ibnetdiscover(model, t, device), 0
    if cmd == "sminfo":
        lid_arg = next((a for a in args if not a.startswith("-")), None)
        try:
            lid = int(lid_arg, 0) if lid_arg is not None else None
        except ValueError:
            return f"sminfo: invalid lid {lid_arg!r}\n", 255
        return sminfo(model, device, lid, t, down=down)
    return None
