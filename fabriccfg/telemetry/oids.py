"""Numeric OIDs (tuples of ints) for the MIB objects fabriccfg polls and the mock serves.

Numeric because pysnmp ships no IF-MIB and MIB lookups cost CPU (``netmiko_pysnmp.md`` §3, §5;
``ib.md`` §7). Column OIDs: append the table index (ifIndex, or ifIndex.prio / ifIndex.tc ...).
Shared by the poller (``fabriccfg.telemetry.snmp``) and the mock agent (``fabriccfg.mock.snmp``).
"""

from __future__ import annotations

Oid = tuple[int, ...]

# SNMPv2-MIB system group (scalars: append .0)
SYS_DESCR: Oid = (1, 3, 6, 1, 2, 1, 1, 1)
SYS_OBJECT_ID: Oid = (1, 3, 6, 1, 2, 1, 1, 2)
SYS_UPTIME: Oid = (1, 3, 6, 1, 2, 1, 1, 3)
SYS_NAME: Oid = (1, 3, 6, 1, 2, 1, 1, 5)

# IF-MIB ifTable (1.3.6.1.2.1.2.2.1), index ifIndex
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

# IEEE8021-PFC-MIB ieee8021PfcIfEntry (AUGMENTS ifEntry: index ifIndex); per-interface totals
PFC_IF_ENTRY: Oid = (1, 3, 111, 2, 802, 1, 1, 21, 1, 1, 1)
PFC_REQUESTS: Oid = (*PFC_IF_ENTRY, 2)      # PFC frames sent
PFC_INDICATIONS: Oid = (*PFC_IF_ENTRY, 3)   # PFC frames received

# MELLANOX-QOS-MIB (1.3.6.1.4.1.33049.15.1)
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

# ARISTA-QUEUE-MIB (1.3.6.1.4.1.30065.3.6.1)
ARISTA_QUEUE: Oid = (1, 3, 6, 1, 4, 1, 30065, 3, 6, 1)
ARISTA_EGRESS_ENTRY: Oid = (*ARISTA_QUEUE, 2, 1)  # index ifIndex.queue.packetType (0 uc, 1 mc, 2 mixed)
ARISTA_EGRESS_PKTS: Oid = (*ARISTA_EGRESS_ENTRY, 4)
ARISTA_EGRESS_BYTES: Oid = (*ARISTA_EGRESS_ENTRY, 5)
ARISTA_EGRESS_PKTS_DROPPED: Oid = (*ARISTA_EGRESS_ENTRY, 6)
ARISTA_EGRESS_BYTES_DROPPED: Oid = (*ARISTA_EGRESS_ENTRY, 7)
ARISTA_INGRESS_ENTRY: Oid = (*ARISTA_QUEUE, 1, 1)  # index ifIndex.queue
ARISTA_INGRESS_PKTS_DROPPED: Oid = (*ARISTA_INGRESS_ENTRY, 3)

# LLDP-MIB (IEEE 802.1AB-2005, 1.0.8802.1.1.2)
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

# MELLANOX-IF-VPI-MIB (1.3.6.1.4.1.33049.3.1.1.1), index ifIndex
MLNX_IF_VPI_ENTRY: Oid = (1, 3, 6, 1, 4, 1, 33049, 3, 1, 1, 1)
MLNX_IB_PORT_PHYSICAL_STATE: Oid = (*MLNX_IF_VPI_ENTRY, 2)
MLNX_IB_PORT_LOGICAL_STATE: Oid = (*MLNX_IF_VPI_ENTRY, 3)
MLNX_IB_PORT_GUID: Oid = (*MLNX_IF_VPI_ENTRY, 4)
MLNX_PORT_XMIT_WAIT: Oid = (*MLNX_IF_VPI_ENTRY, 5)
MLNX_SYMBOL_ERROR_COUNTER: Oid = (*MLNX_IF_VPI_ENTRY, 6)

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
