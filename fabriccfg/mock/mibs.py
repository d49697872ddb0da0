"""The OID layout the mock SNMP agent serves for one device: which MIB objects, where each value comes from.

Why a table: the agent answers GETNEXT/GETBULK by bisecting one sorted list of OIDs, and the poller
(``fabriccfg.telemetry``) polls the same numeric OIDs (:mod:`fabriccfg.telemetry.oids`), so the whole
layout lives here, in one place. Which MIBs a platform serves, and its sysDescr/sysObjectID, are data
in its mock profile (``SNMP_AGENT``, an :class:`Agent`; :func:`agent_for`):

=================  ===============================================================================
cumulus-nvue       SNMPv2-MIB system, IF-MIB ifTable + ifXTable, LLDP-MIB: what Cumulus' snmpd lists in
                   its "Supported MIBs" page (no PFC or queue MIB: those counters are NVUE CLI only)
sonic              SNMPv2-MIB, IF-MIB, CISCO-PFC-EXT-MIB (cpfcIfTable: priority 3 only, as the real agent;
                   cpfcIfPriorityTable per priority), CISCO-SWITCH-QOS-MIB csqIfQosGroupStatsTable, LLDP-MIB:
                   what sonic-snmpagent implements; ifIndex of EthernetN = N + 1 (its get_index_from_str)
eos                SNMPv2-MIB, IF-MIB, IEEE8021-PFC-MIB, ARISTA-QUEUE-MIB egress queues, LLDP-MIB
nxos               SNMPv2-MIB, IF-MIB, IEEE8021-PFC-MIB, LLDP-MIB (documented choice: the standard
                   MIBs only; NX-OS per-queue counters come from ``show queuing interface``)
mlnxos-ib          SNMPv2-MIB, IF-MIB, MELLANOX-IF-VPI-MIB (XmitWait, SymbolError Counter64, port
                   states, GUID); no LLDP on InfiniBand. ``ib.md`` §7 lists ifXTable only for
                   MLNX-OS; the mock serves ifTable too (ifOperStatus and the error columns live there)
other              SNMPv2-MIB, IF-MIB
=================  ===============================================================================

Indexes and conventions:

* ifIndex = the profile's ``Agent.if_index`` when it has one (SONiC: EthernetN -> N + 1), else
  :meth:`TrafficModel.if_index` (switch front-panel position); only cabled ports appear.
* ``ifName`` = the port name as the inventory spells it (``swp1``, ``Ethernet0``, ``Ethernet1/1``,
  ``1/1``); ``ifDescr`` the same (``IB1/1`` on MLNX-OS); ``ifAlias`` = ``to PEER:PORT`` (inventory).
* Counter32 columns (ifIn/OutErrors, ifIn/OutDiscards, ifIn/OutOctets, ifIn/OutUcastPkts, PFC
  requests/indications) serve the canonical value mod 2**32.
* MELLANOX-QOS-MIB PFC and TC tables: index ``ifIndex.prio`` / ``ifIndex.tc`` with prio/tc 0..7.
  Durations in microseconds. (No profile serves it now; kept for layout tests and Onyx-like agents.)
* CISCO-PFC-EXT-MIB (sonic-snmpagent ``ciscoPfcExtMIB.py``): cpfcIfRequests/Indications
  ``.1.1.1.{1,2}.ifIndex`` = PFC frames sent/received on priority 3 only; cpfcIfPriorityTable
  ``.1.2.1.{2,3}.ifIndex.prio``, prio 0..7 = frames sent/received per priority. All Counter64.
* CISCO-SWITCH-QOS-MIB (``ciscoSwitchQosMIB.py``): csqIfQosGroupStatsValue ``.1.4.ifIndex.2.queue.counter``,
  queue 1..8 = traffic class 0..7; counters 1 ucast pkts, 2 ucast bytes, 5 ucast dropped pkts (no-buffer +
  WRED + watchdog drops) from the model, 3/4/7 (multicast) served as 0; dropped bytes (6, 8) not served.
* ARISTA-QUEUE-MIB egress table: index ``ifIndex.queue.0`` (queue 0..7, packet type 0 = unicast);
  PktsDropped = no-buffer + WRED + PFC-watchdog drops of that queue.
* LLDP-MIB: ``lldpLocPortTable`` index lldpLocPortNum = ifIndex (PortId = ifName, subtype 5
  interfaceName); ``lldpRemTable`` index ``0.ifIndex.1`` (timeMark 0, remIndex 1): ChassisIdSubtype 4
  (MAC), ChassisId (6 bytes derived from the device name), PortIdSubtype 5 (interfaceName), PortId =
  the peer's port name, or for a GPU host its netdev (``ens1f0np0``) with PortDesc = the RDMA device
  (``mlx5_0``), SysName = the peer device name. The neighbour is the *physical* one (cabling-swap).
* MELLANOX-IF-VPI-MIB: phys state 5 linkUp / 2 polling, logical state 4 active / 1 down, GUID as an
  8-byte OCTET STRING.
* ECN-marked counts and PFC watchdog counters are not served (no MIB carries them): CLI only.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fabriccfg import registry
from fabriccfg.inventory.models import Host, Switch
from fabriccfg.telemetry import ber
from fabriccfg.telemetry import oids as O

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel

# Value kinds (first element of a getter tuple)
STATIC = 0  # (STATIC, encoded TLV bytes)
C64 = 1  # (C64, port, name)
C32 = 2  # (C32, port, name): value mod 2**32
GAUGE = 3  # (GAUGE, port, name, scale): min(value * scale, 2**32 - 1)
UPTIME = 4  # (UPTIME,)
INT_MAP = 5  # (INT_MAP, port, name, {value: int})
SUM64 = 6  # (SUM64, port, (name, ...))
LLDP = 7  # (LLDP, port, field)  field: chassis | port_id | port_desc | sys_name

Getter = tuple[Any, ...]

SNMPV2 = "SNMPv2-MIB"
IF_MIB = "IF-MIB"
PFC_MIB = "IEEE8021-PFC-MIB"
MLNX_QOS = "MELLANOX-QOS-MIB"
ARISTA_QUEUE = "ARISTA-QUEUE-MIB"
LLDP_MIB = "LLDP-MIB"
MLNX_VPI = "MELLANOX-IF-VPI-MIB"
CISCO_PFC_EXT = "CISCO-PFC-EXT-MIB"
CISCO_SWITCH_QOS = "CISCO-SWITCH-QOS-MIB"

DEFAULT_MIBS: tuple[str, ...] = (SNMPV2, IF_MIB)
NET_SNMP_AGENT: tuple[int, ...] = (1, 3, 6, 1, 4, 1, 8072)
"""sysObjectID of a platform whose profile names none (net-snmp's agent OID)."""


@dataclass(frozen=True)
class Agent:
    """What a platform's SNMP agent serves beyond the per-port data: a mock profile's ``SNMP_AGENT``."""

    mibs: tuple[str, ...] = DEFAULT_MIBS
    sys_descr: str | None = None
    """None: ``fabriccfg mock <platform>``."""
    sys_object_id: tuple[int, ...] = NET_SNMP_AGENT
    if_index: Callable[[str], int | None] | None = None
    """The agent's own ifIndex for a port name (None: the model's front-panel position)."""


IF_TYPE_ETHERNET = 6
IF_TYPE_INFINIBAND = 199

OCTETS_PER_PKT_HINT = 4166


def agent_for(platform: str) -> Agent:
    """The platform's mock profile ``SNMP_AGENT`` (defaults for a platform without one)."""
    try:
        profile = registry.mock_profile(platform)
    except KeyError:  # not a registered platform
        profile = None
    agent: Agent = getattr(profile, "SNMP_AGENT", None) or Agent()
    return agent


def mibs_for(platform: str) -> tuple[str, ...]:
    return agent_for(platform).mibs


def mac_of(device: str) -> bytes:
    """A stable locally administered MAC for ``device`` (LLDP chassis id)."""
    h = hashlib.blake2b(device.encode(), digest_size=5).digest()
    return b"\x02" + h


# --------------------------------------------------------------------------- BER for static values
# One codec for poller and agent: :mod:`fabriccfg.telemetry.ber` (these names are the layout's spelling).
tlv = ber.tlv
enc_uint = ber.unsigned
enc_int = ber.integer
enc_oid_body = ber.encode_oid
enc_oid = ber.oid_tlv
octets = ber.octet_string


# --------------------------------------------------------------------------- layout
@dataclass
class Layout:
    """Sorted OIDs of one device with, per OID, its encoded OID TLV and its getter."""

    oids: list[tuple[int, ...]]
    encoded: list[bytes]
    getters: list[Getter]
    index: dict[tuple[int, ...], int]


def if_index(model: TrafficModel, device: str, port: str) -> int:
    """The ifIndex the device's agent gives ``port`` (the profile's rule, else the front-panel position)."""
    rule = agent_for(model.fabric.devices[device].platform).if_index
    idx = rule(port) if rule is not None else None
    return idx if idx is not None else model.if_index(device, port)


def _lldp_rows(model: TrafficModel, device: str) -> list[tuple[str, int]]:
    return [
        (p, if_index(model, device, p))
        for p in model.ports(device)
        if model.fabric.neighbours.get((device, p)) is not None
    ]


def build_layout(model: TrafficModel, device: str, mibs: tuple[str, ...] | None = None) -> Layout:
    """The OID table of ``device`` (see the module docstring for what each MIB holds)."""
    fab = model.fabric
    dev = fab.devices[device]
    platform = dev.platform
    mibs = mibs if mibs is not None else mibs_for(platform)
    ib = model.technology == "infiniband"
    rows: list[tuple[tuple[int, ...], Getter]] = []
    add = rows.append
    ports = sorted(((p, if_index(model, device, p)) for p in model.ports(device)), key=lambda pi: pi[1])
    if SNMPV2 in mibs:
        agent = agent_for(platform)
        add(((*O.SYS_DESCR, 0), (STATIC, octets(agent.sys_descr or f"fabriccfg mock {platform}"))))
        add(((*O.SYS_OBJECT_ID, 0), (STATIC, enc_oid(agent.sys_object_id))))
        add(((*O.SYS_UPTIME, 0), (UPTIME,)))
        add(((*O.SYS_NAME, 0), (STATIC, octets(device))))
    if IF_MIB in mibs:
        if_type = IF_TYPE_INFINIBAND if ib else IF_TYPE_ETHERNET
        for p, i in ports:
            descr = f"IB{p}" if ib else p
            peer = fab.neighbours.get((device, p))
            alias = f"to {peer[0]}:{peer[1]}" if peer else ""
            add(((*O.IF_INDEX, i), (STATIC, enc_int(i))))
            add(((*O.IF_DESCR, i), (STATIC, octets(descr))))
            add(((*O.IF_TYPE, i), (STATIC, enc_int(if_type))))
            add(((*O.IF_MTU, i), (STATIC, enc_int(4096 if ib else 9216))))
            add(((*O.IF_SPEED, i), (GAUGE, p, "speed_mbps", 1_000_000)))
            add(((*O.IF_ADMIN_STATUS, i), (STATIC, enc_int(1))))
            add(((*O.IF_OPER_STATUS, i), (INT_MAP, p, "oper_status", {1: 1, 2: 2})))
            add(((*O.IF_IN_OCTETS, i), (C32, p, "if_in_octets")))
            add(((*O.IF_IN_UCAST_PKTS, i), (C32, p, "if_in_ucast_pkts")))
            add(((*O.IF_IN_DISCARDS, i), (C32, p, "if_in_discards")))
            add(((*O.IF_IN_ERRORS, i), (C32, p, "if_in_errors")))
            add(((*O.IF_OUT_OCTETS, i), (C32, p, "if_out_octets")))
            add(((*O.IF_OUT_UCAST_PKTS, i), (C32, p, "if_out_ucast_pkts")))
            add(((*O.IF_OUT_DISCARDS, i), (C32, p, "if_out_discards")))
            add(((*O.IF_OUT_ERRORS, i), (C32, p, "if_out_errors")))
            add(((*O.IF_NAME, i), (STATIC, octets(p))))
            add(((*O.IF_HC_IN_OCTETS, i), (C64, p, "if_in_octets")))
            add(((*O.IF_HC_IN_UCAST_PKTS, i), (C64, p, "if_in_ucast_pkts")))
            add(((*O.IF_HC_OUT_OCTETS, i), (C64, p, "if_out_octets")))
            add(((*O.IF_HC_OUT_UCAST_PKTS, i), (C64, p, "if_out_ucast_pkts")))
            add(((*O.IF_HIGH_SPEED, i), (GAUGE, p, "speed_mbps", 1)))
            add(((*O.IF_ALIAS, i), (STATIC, octets(alias))))
    if PFC_MIB in mibs and not ib:
        for p, i in ports:
            add(((*O.PFC_REQUESTS, i), (C32, p, "pfc_requests")))
            add(((*O.PFC_INDICATIONS, i), (C32, p, "pfc_indications")))
    if MLNX_QOS in mibs and not ib:
        for p, i in ports:
            for q in range(8):
                add(((*O.MLNX_PFC_RX_PAUSE_PKTS, i, q), (C64, p, f"pfc_rx_pause.{q}")))
                add(((*O.MLNX_PFC_RX_PAUSE_DURATION, i, q), (C64, p, f"pfc_rx_pause_duration.{q}")))
                add(((*O.MLNX_PFC_TX_PAUSE_PKTS, i, q), (C64, p, f"pfc_tx_pause.{q}")))
                add(((*O.MLNX_PFC_TX_PAUSE_DURATION, i, q), (C64, p, f"pfc_tx_pause_duration.{q}")))
                add(((*O.MLNX_TC_UNICAST_NO_BUFFER_DISCARD, i, q), (C64, p, f"tc_nobuffer_discard.{q}")))
                add(((*O.MLNX_TC_WRED_DISCARD, i, q), (C64, p, f"tc_wred_discard.{q}")))
            add(((*O.MLNX_PORT_RX_PAUSE_PKTS, i), (SUM64, p, tuple(f"pfc_rx_pause.{q}" for q in range(8)))))
            add(((*O.MLNX_PORT_TX_PAUSE_PKTS, i), (SUM64, p, tuple(f"pfc_tx_pause.{q}" for q in range(8)))))
    if CISCO_PFC_EXT in mibs and not ib:
        for p, i in ports:
            # the real agent fills the per-interface 'totals' from priority 3 alone (its own BUG note)
            add(((*O.CPFC_IF_REQUESTS, i), (C64, p, "pfc_tx_pause.3")))
            add(((*O.CPFC_IF_INDICATIONS, i), (C64, p, "pfc_rx_pause.3")))
            for q in range(8):
                add(((*O.CPFC_PRIO_REQUESTS, i, q), (C64, p, f"pfc_tx_pause.{q}")))
                add(((*O.CPFC_PRIO_INDICATIONS, i, q), (C64, p, f"pfc_rx_pause.{q}")))
    if CISCO_SWITCH_QOS in mibs and not ib:
        zero = (STATIC, enc_uint(ber.TAG_COUNTER64, 0))
        for p, i in ports:
            for q in range(8):
                row = (*O.CSQ_QOS_GROUP_STATS_VALUE, i, O.CSQ_EGRESS, q + 1)
                add(((*row, O.CSQ_UCAST_PKTS), (C64, p, f"tc_tx_pkts.{q}")))
                add(((*row, O.CSQ_UCAST_BYTES), (C64, p, f"tc_tx_bytes.{q}")))
                add(((*row, 3), zero))
                add(((*row, 4), zero))
                add(((*row, O.CSQ_UCAST_DROPPED_PKTS),
                     (SUM64, p, (f"tc_nobuffer_discard.{q}", f"tc_wred_discard.{q}", f"pfcwd_tx_drop.{q}"))))
                add(((*row, 7), zero))
    if ARISTA_QUEUE in mibs and not ib:
        for p, i in ports:
            for q in range(8):
                add(((*O.ARISTA_EGRESS_PKTS, i, q, 0), (C64, p, f"tc_tx_pkts.{q}")))
                add(((*O.ARISTA_EGRESS_BYTES, i, q, 0), (C64, p, f"tc_tx_bytes.{q}")))
                add(
                    (
                        (*O.ARISTA_EGRESS_PKTS_DROPPED, i, q, 0),
                        (
                            SUM64,
                            p,
                            (f"tc_nobuffer_discard.{q}", f"tc_wred_discard.{q}", f"pfcwd_tx_drop.{q}"),
                        ),
                    )
                )
    if LLDP_MIB in mibs and not ib:
        for p, i in _lldp_rows(model, device):
            add(((*O.LLDP_LOC_PORT_ID_SUBTYPE, i), (STATIC, enc_int(5))))
            add(((*O.LLDP_LOC_PORT_ID, i), (STATIC, octets(p))))
            add(((*O.LLDP_LOC_PORT_DESC, i), (STATIC, octets(p))))
            rem = (0, i, 1)
            add(((*O.LLDP_REM_CHASSIS_ID_SUBTYPE, *rem), (STATIC, enc_int(4))))
            add(((*O.LLDP_REM_CHASSIS_ID, *rem), (LLDP, p, "chassis")))
            add(((*O.LLDP_REM_PORT_ID_SUBTYPE, *rem), (STATIC, enc_int(5))))
            add(((*O.LLDP_REM_PORT_ID, *rem), (LLDP, p, "port_id")))
            add(((*O.LLDP_REM_PORT_DESC, *rem), (LLDP, p, "port_desc")))
            add(((*O.LLDP_REM_SYS_NAME, *rem), (LLDP, p, "sys_name")))
    if MLNX_VPI in mibs and ib:
        guid = int(dev.guid, 16) if isinstance(dev, Switch) and dev.guid else 0
        for p, i in ports:
            add(((*O.MLNX_IB_PORT_PHYSICAL_STATE, i), (INT_MAP, p, "oper_status", {1: 5, 2: 2})))
            add(((*O.MLNX_IB_PORT_LOGICAL_STATE, i), (INT_MAP, p, "oper_status", {1: 4, 2: 1})))
            add(((*O.MLNX_IB_PORT_GUID, i), (STATIC, octets(guid.to_bytes(8, "big")))))
            add(((*O.MLNX_PORT_XMIT_WAIT, i), (C64, p, "PortXmitWait")))
            add(((*O.MLNX_SYMBOL_ERROR_COUNTER, i), (C64, p, "SymbolErrorCounter")))
    rows.sort(key=lambda r: r[0])
    oids = [r[0] for r in rows]
    return Layout(
        oids=oids,
        encoded=[enc_oid(o) for o in oids],
        getters=[r[1] for r in rows],
        index={o: n for n, o in enumerate(oids)},
    )


def lldp_value(model: TrafficModel, device: str, port: str, field: str, t: float) -> bytes:
    """Encoded LLDP remote-table value for ``device:port`` at ``t`` (the physical neighbour)."""
    peer = model.neighbour(device, port, t)
    if peer is None:
        return octets(b"")
    pdev, pport = peer
    if field == "chassis":
        return octets(mac_of(pdev))
    if field == "sys_name":
        return octets(pdev)
    remote = model.fabric.devices.get(pdev)
    nic = None
    if isinstance(remote, Host):
        nic = next((n for n in remote.nics if n.name == pport), None)
    if field == "port_id":
        return octets(nic.netdev if nic is not None and nic.netdev else pport)
    return octets(pport)
