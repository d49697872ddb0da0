"""Numeric OIDs (tuples of ints) for the MIB objects fabriccfg polls and the mock serves.

Numeric because pysnmp ships no IF-MIB and MIB lookups cost CPU (``netmiko_pysnmp.md`` §3, §5;
``ib.md`` §7). Column OIDs: append the table index (ifIndex, or ifIndex.prio / ifIndex.tc ...).
Shared by the poller (``fabriccfg.telemetry.snmp``) and the mock agent (``fabriccfg.mock.snmp``).

Each block names where its OIDs are defined and which agents really serve it (``SERVED BY``): a
platform's ``TELEMETRY`` polls only what its agent serves (docs/telemetry.md, "SNMP vs CLI coverage").
"""

from __future__ import annotations

Oid = tuple[int, ...]

# SNMPv2-MIB system group (scalars: append .0). Defined: RFC 3418. SERVED BY: every agent.
SYS_DESCR: Oid = (1, 3, 6, 1, 2, 1, 1, 1)
SYS_OBJECT_ID: Oid = (1, 3, 6, 1, 2, 1, 1, 2)
SYS_UPTIME: Oid = (1, 3, 6, 1, 2, 1, 1, 3)
SYS_NAME: Oid = (1, 3, 6, 1, 2, 1, 1, 5)

# IF-MIB ifTable (1.3.6.1.2.1.2.2.1), index ifIndex. Defined: RFC 2863. SERVED BY: every platform here
# (Cumulus: "Supported MIBs" page, CumulusNetworks/docs content/cumulus-linux-59/
# Monitoring-and-Troubleshooting/Simple-Network-Management-Protocol-SNMP/Supported-MIBs.md; SONiC:
# sonic-net/sonic-snmpagent
# src/sonic_ax_impl/mibs/ietf/rfc1213.py and rfc2863.py, ifIndex of EthernetN = N + 1 per
# src/sonic_ax_impl/mibs/__init__.py get_index_from_str).
IF_TABLE: Oid = (1, 3, 6, 1, 2, 1, 2, 2, 1)
IF_INDEX: Oid = (*IF_TABLE, 1)
IF_DESCR: Oid = (*IF_TABLE, 2)
IF_TYPE: Oid = (*IF_TABLE, 3)
IF_MTU: Oid = (*IF_TABLE, 4)
IF_SPEED: Oid = (*IF_TABLE, 5)
IF_ADMIN_STATUS: Oid = (*IF_TABLE, 7)
IF_OPER_STATUS: Oid = (*IF_TABLE, 8)
IF_IN_OCTETS: Oid = (*IF_TABLE, 10)
IF_IN_UCAST_PKTS: Oid = (*IF_TABLE, 11)
IF_IN_DISCARDS: Oid = (*IF_TABLE, 13)
IF_IN_ERRORS: Oid = (*IF_TABLE, 14)
IF_OUT_OCTETS: Oid = (*IF_TABLE, 16)
IF_OUT_UCAST_PKTS: Oid = (*IF_TABLE, 17)
IF_OUT_DISCARDS: Oid = (*IF_TABLE, 19)
IF_OUT_ERRORS: Oid = (*IF_TABLE, 20)

# IF-MIB ifXTable (1.3.6.1.2.1.31.1.1.1), index ifIndex
IFX_TABLE: Oid = (1, 3, 6, 1, 2, 1, 31, 1, 1, 1)
IF_NAME: Oid = (*IFX_TABLE, 1)
IF_HC_IN_OCTETS: Oid = (*IFX_TABLE, 6)
IF_HC_IN_UCAST_PKTS: Oid = (*IFX_TABLE, 7)
IF_HC_IN_MULTICAST_PKTS: Oid = (*IFX_TABLE, 8)
IF_HC_IN_BROADCAST_PKTS: Oid = (*IFX_TABLE, 9)
IF_HC_OUT_OCTETS: Oid = (*IFX_TABLE, 10)
IF_HC_OUT_UCAST_PKTS: Oid = (*IFX_TABLE, 11)
IF_HC_OUT_MULTICAST_PKTS: Oid = (*IFX_TABLE, 12)
IF_HC_OUT_BROADCAST_PKTS: Oid = (*IFX_TABLE, 13)
IF_HIGH_SPEED: Oid = (*IFX_TABLE, 15)
IF_ALIAS: Oid = (*IFX_TABLE, 18)

# IEEE8021-PFC-MIB ieee8021PfcIfEntry (AUGMENTS ifEntry: index ifIndex); per-interface totals.
# Defined: IEEE 802.1Qbb MIB (IEEE8021-PFC-MIB).
# SERVED BY: EOS (listed among the IEEE MIBs of Arista's "Arista SNMP MIBs" page,
# https://www.arista.com/en/support/product-documentation/arista-snmp-mibs, as read through Arista SE
# J. Georges' genAristaMIBReport.py v1.3 (2021), whose IEEE list is LLDP-MIB, LLDP-EXT-DOT1/DOT3 and
# IEEE8021-PFC-MIB; the page itself was not retrievable here: a secondary source).
# NOT served by NX-OS: absent from Cisco's Nexus 9000 MIB support list (cisco/cisco-mibs
# supportlists/nexus9000/Nexus9000MIBSupportList.html at 305e11e, "Supported from NX-OS 9.3(5)": 2,887
# objects, none of IEEE8021-PFC-MIB; CISCO-PFC-EXT-MIB instead, below). NOT served by Cumulus (absent from
# its Supported MIBs page) nor by sonic-snmpagent (no such module under src/sonic_ax_impl/mibs).
PFC_IF_ENTRY: Oid = (1, 3, 111, 2, 802, 1, 1, 21, 1, 1, 1)
PFC_REQUESTS: Oid = (*PFC_IF_ENTRY, 2)      # PFC frames sent
PFC_INDICATIONS: Oid = (*PFC_IF_ENTRY, 3)   # PFC frames received

# MELLANOX-QOS-MIB (1.3.6.1.4.1.33049.15.1). Defined: Mellanox/NVIDIA enterprise MIB (Onyx). SERVED BY: no
# platform polled here. Cumulus does not list it (Supported MIBs page) and sonic-snmpagent has no such module;
# kept for Onyx-era agents and for the mock's documented layout tests.
MLNX_QOS: Oid = (1, 3, 6, 1, 4, 1, 33049, 15, 1)
MLNX_PFC_ENTRY: Oid = (*MLNX_QOS, 2, 1)          # index ifIndex.prio
MLNX_PFC_RX_PAUSE_PKTS: Oid = (*MLNX_PFC_ENTRY, 3)
MLNX_PFC_RX_PAUSE_DURATION: Oid = (*MLNX_PFC_ENTRY, 4)
MLNX_PFC_TX_PAUSE_PKTS: Oid = (*MLNX_PFC_ENTRY, 5)
MLNX_PFC_TX_PAUSE_DURATION: Oid = (*MLNX_PFC_ENTRY, 6)
MLNX_TC_ENTRY: Oid = (*MLNX_QOS, 4, 1)           # index ifIndex.tc
MLNX_TC_UNICAST_NO_BUFFER_DISCARD: Oid = (*MLNX_TC_ENTRY, 8)
MLNX_TC_WRED_DISCARD: Oid = (*MLNX_TC_ENTRY, 9)
MLNX_PG_ENTRY: Oid = (*MLNX_QOS, 3, 1)           # index ifIndex.pg
MLNX_PG_NO_BUFFER_DISCARD: Oid = (*MLNX_PG_ENTRY, 6)
MLNX_PG_SHARED_BUFFER_DISCARD: Oid = (*MLNX_PG_ENTRY, 7)
MLNX_PORT_ENTRY: Oid = (*MLNX_QOS, 5, 1)         # index ifIndex
MLNX_PORT_RX_PAUSE_PKTS: Oid = (*MLNX_PORT_ENTRY, 2)
MLNX_PORT_TX_PAUSE_PKTS: Oid = (*MLNX_PORT_ENTRY, 3)
MLNX_PORT_TX_WAIT_US: Oid = (*MLNX_PORT_ENTRY, 5)

# ARISTA-QUEUE-MIB (1.3.6.1.4.1.30065.3.6.1). Defined and served: Arista EOS
# (https://www.arista.com/assets/data/docs/MIBS/ARISTA-QUEUE-MIB.txt, aristaMibs 6).
ARISTA_QUEUE: Oid = (1, 3, 6, 1, 4, 1, 30065, 3, 6, 1)
ARISTA_EGRESS_ENTRY: Oid = (*ARISTA_QUEUE, 2, 1)  # index ifIndex.queue.packetType (0 uc, 1 mc, 2 mixed)
ARISTA_EGRESS_PKTS: Oid = (*ARISTA_EGRESS_ENTRY, 4)
ARISTA_EGRESS_BYTES: Oid = (*ARISTA_EGRESS_ENTRY, 5)
ARISTA_EGRESS_PKTS_DROPPED: Oid = (*ARISTA_EGRESS_ENTRY, 6)
ARISTA_EGRESS_BYTES_DROPPED: Oid = (*ARISTA_EGRESS_ENTRY, 7)
ARISTA_INGRESS_ENTRY: Oid = (*ARISTA_QUEUE, 1, 1)  # index ifIndex.queue
ARISTA_INGRESS_PKTS_DROPPED: Oid = (*ARISTA_INGRESS_ENTRY, 3)

# LLDP-MIB (IEEE 802.1AB-2005, 1.0.8802.1.1.2). SERVED BY: Cumulus (lldpd AgentX, Supported MIBs page),
# SONiC (sonic-snmpagent src/sonic_ax_impl/mibs/ieee802_1ab.py), NX-OS (Cisco's Nexus 9000 MIB support list
# above: lldpRemChassisId, lldpRemPortId, lldpRemPortDesc, lldpRemSysName since 6.1(2)) and EOS (Arista's
# SNMP MIBs page as read through the script cited for IEEE8021-PFC-MIB: secondary source).
LLDP_MIB: Oid = (1, 0, 8802, 1, 1, 2)
LLDP_LOC_PORT_ENTRY: Oid = (*LLDP_MIB, 1, 3, 7, 1)   # index lldpLocPortNum
LLDP_LOC_PORT_ID_SUBTYPE: Oid = (*LLDP_LOC_PORT_ENTRY, 2)
LLDP_LOC_PORT_ID: Oid = (*LLDP_LOC_PORT_ENTRY, 3)
LLDP_LOC_PORT_DESC: Oid = (*LLDP_LOC_PORT_ENTRY, 4)
LLDP_REM_ENTRY: Oid = (*LLDP_MIB, 1, 4, 1, 1)        # index timeMark.localPortNum.remIndex
LLDP_REM_CHASSIS_ID_SUBTYPE: Oid = (*LLDP_REM_ENTRY, 4)
LLDP_REM_CHASSIS_ID: Oid = (*LLDP_REM_ENTRY, 5)
LLDP_REM_PORT_ID_SUBTYPE: Oid = (*LLDP_REM_ENTRY, 6)
LLDP_REM_PORT_ID: Oid = (*LLDP_REM_ENTRY, 7)
LLDP_REM_PORT_DESC: Oid = (*LLDP_REM_ENTRY, 8)
LLDP_REM_SYS_NAME: Oid = (*LLDP_REM_ENTRY, 9)

# MELLANOX-IF-VPI-MIB (1.3.6.1.4.1.33049.3.1.1.1), index ifIndex. SERVED BY: MLNX-OS IB switches (ib.md §7).
MLNX_IF_VPI_ENTRY: Oid = (1, 3, 6, 1, 4, 1, 33049, 3, 1, 1, 1)
MLNX_IB_PORT_PHYSICAL_STATE: Oid = (*MLNX_IF_VPI_ENTRY, 2)
MLNX_IB_PORT_LOGICAL_STATE: Oid = (*MLNX_IF_VPI_ENTRY, 3)
MLNX_IB_PORT_GUID: Oid = (*MLNX_IF_VPI_ENTRY, 4)
MLNX_PORT_XMIT_WAIT: Oid = (*MLNX_IF_VPI_ENTRY, 5)
MLNX_SYMBOL_ERROR_COUNTER: Oid = (*MLNX_IF_VPI_ENTRY, 6)

# CISCO-PFC-EXT-MIB (1.3.6.1.4.1.9.9.813): what sonic-snmpagent serves for PFC. Also served by NX-OS on the
# Nexus 9000 (Cisco's support list above: cpfcIfRequests/Indications and cpfcIfPriorityRequests/Indications
# since 6.1(2), cpfcWatchdogIfQueue{State,Shutdowns,Restores,DropPkts,TotalDropPkts} since 7.0(3)I4(1)); not
# polled there: show queuing interface carries the same PFC counts per CoS.
# SOURCE: sonic-net/sonic-snmpagent src/sonic_ax_impl/mibs/vendor/cisco/ciscoPfcExtMIB.py (read 2026-12-01):
# class cpfcIfTable prefix
# .1.3.6.1.4.1.9.9.813.1.1, entries '1.1' ifRequests and '1.2' ifIndications, index ifIndex, Counter64,
# fed from COUNTERS_DB SAI_PORT_STAT_PFC_3_TX/RX_PKTS only (the agent's own "BUG: need the sum of all the
# priorities");
# class cpfcIfPriorityTable prefix .1.3.6.1.4.1.9.9.813.1.2, entries '1.2' requestsPerPriority (TX) and '1.3'
# indicationsPerPriority (RX), index ifIndex.priority with priority 0..7, Counter64, from
# SAI_PORT_STAT_PFC_<prio>_TX/RX_PKTS. No pause-duration column exists.
CPFC_IF_ENTRY: Oid = (1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 1, 1)      # index ifIndex
CPFC_IF_REQUESTS: Oid = (*CPFC_IF_ENTRY, 1)     # PFC frames sent on priority 3 only (see above)
CPFC_IF_INDICATIONS: Oid = (*CPFC_IF_ENTRY, 2)  # PFC frames received on priority 3 only
CPFC_PRIO_ENTRY: Oid = (1, 3, 6, 1, 4, 1, 9, 9, 813, 1, 2, 1)    # index ifIndex.priority
CPFC_PRIO_REQUESTS: Oid = (*CPFC_PRIO_ENTRY, 2)     # PFC frames sent, per priority
CPFC_PRIO_INDICATIONS: Oid = (*CPFC_PRIO_ENTRY, 3)  # PFC frames received, per priority

# CISCO-SWITCH-QOS-MIB csqIfQosGroupStatsTable (1.3.6.1.4.1.9.9.580.1.5.5): SONiC's per-queue counters.
# SOURCE: sonic-net/sonic-snmpagent src/sonic_ax_impl/mibs/vendor/cisco/ciscoSwitchQosMIB.py (read
# 2026-12-01): entry
# '1.4' (csqIfQosGroupStatsValue), index ifIndex.direction.queue.counter with direction 2 (egress only), queue
# 1-based (queue % half-the-queues + 1: unicast and multicast queues fold onto the same number) and counter
# 1 ucast pkts, 2 ucast bytes, 3 mcast pkts, 4 mcast bytes, 5 ucast dropped pkts, 6 ucast dropped bytes,
# 7 mcast dropped pkts, 8 mcast dropped bytes; Counter64.
CSQ_QOS_GROUP_STATS_VALUE: Oid = (1, 3, 6, 1, 4, 1, 9, 9, 580, 1, 5, 5, 1, 4)
CSQ_EGRESS = 2
CSQ_UCAST_PKTS, CSQ_UCAST_BYTES, CSQ_UCAST_DROPPED_PKTS = 1, 2, 5

IF_OPER_STATUS_NAMES: dict[int, str] = {
    1: "up", 2: "down", 3: "testing", 4: "unknown", 5: "dormant", 6: "notPresent", 7: "lowerLayerDown",
}
IF_ADMIN_STATUS_NAMES: dict[int, str] = {1: "up", 2: "down", 3: "testing"}
IB_PHYS_STATE_NAMES: dict[int, str] = {
    0: "noStateChange", 1: "sleep", 2: "polling", 3: "disabled", 4: "portConfigurationTraining",
    5: "linkUp", 6: "linkErrorRecovery", 7: "phyTest",
}
IB_LOGICAL_STATE_NAMES: dict[int, str] = {0: "noStateChange", 1: "down", 2: "init", 3: "armed", 4: "active"}


def dotted(oid: Oid) -> str:
    return ".".join(map(str, oid))


def parse(text: str) -> Oid:
    return tuple(int(p) for p in text.strip().lstrip(".").split("."))
