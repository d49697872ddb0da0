"""The SNMP tables fabriccfg polls, as :class:`~fabriccfg.telemetry.spec.SnmpTable` values, and the
mapping from polled rows to samples. Platforms pick the tables their agents implement."""

from __future__ import annotations

from collections.abc import Iterable

from fabriccfg.telemetry import oids
from fabriccfg.telemetry.model import LabelSet, Sample, new_sample
from fabriccfg.telemetry.snmp import Row, index_of
from fabriccfg.telemetry.spec import PortOf, SnmpColumn, SnmpTable

C = SnmpColumn

IF_MIB = SnmpTable("if-mib", (
    C("if_in_octets", oids.IF_HC_IN_OCTETS, "counter64"),
    C("if_out_octets", oids.IF_HC_OUT_OCTETS, "counter64"),
    C("if_in_ucast_pkts", oids.IF_HC_IN_UCAST_PKTS, "counter64"),
    C("if_out_ucast_pkts", oids.IF_HC_OUT_UCAST_PKTS, "counter64"),
    C("speed_mbps", oids.IF_HIGH_SPEED, "gauge"),
    C("oper_status", oids.IF_OPER_STATUS, "state", oids.IF_OPER_STATUS_NAMES),
    C("admin_status", oids.IF_ADMIN_STATUS, "state", oids.IF_ADMIN_STATUS_NAMES),
    C("if_in_discards", oids.IF_IN_DISCARDS, "counter32"),
    C("if_in_errors", oids.IF_IN_ERRORS, "counter32"),
    C("if_out_discards", oids.IF_OUT_DISCARDS, "counter32"),
    C("if_out_errors", oids.IF_OUT_ERRORS, "counter32"),
))
IEEE_PFC = SnmpTable("ieee8021-pfc", (
    C("pfc_requests", oids.PFC_REQUESTS, "counter32"),
    C("pfc_indications", oids.PFC_INDICATIONS, "counter32"),
))
MLNX_QOS_PFC = SnmpTable("mellanox-qos-pfc", (
    C("pfc_rx_pause", oids.MLNX_PFC_RX_PAUSE_PKTS, "counter64"),
    C("pfc_rx_pause_duration", oids.MLNX_PFC_RX_PAUSE_DURATION, "counter64"),
    C("pfc_tx_pause", oids.MLNX_PFC_TX_PAUSE_PKTS, "counter64"),
    C("pfc_tx_pause_duration", oids.MLNX_PFC_TX_PAUSE_DURATION, "counter64"),
), index=("ifIndex", "prio"))
MLNX_QOS_TC = SnmpTable("mellanox-qos-tc", (
    C("tc_no_buffer_discard", oids.MLNX_TC_UNICAST_NO_BUFFER_DISCARD, "counter64"),
    C("tc_wred_discard", oids.MLNX_TC_WRED_DISCARD, "counter64"),
), index=("ifIndex", "tc"))
MLNX_QOS_PORT = SnmpTable("mellanox-qos-port", (
    C("port_tx_wait_us", oids.MLNX_PORT_TX_WAIT_US, "counter64"),
))
ARISTA_QUEUE = SnmpTable("arista-queue", (
    C("tc_tx_pkts", oids.ARISTA_EGRESS_PKTS, "counter64"),
    C("tc_tx_bytes", oids.ARISTA_EGRESS_BYTES, "counter64"),
    C("tc_tx_discard", oids.ARISTA_EGRESS_PKTS_DROPPED, "counter64"),
), index=("ifIndex", "tc", "_ptype"))
CISCO_PFC_PRIO = SnmpTable("cisco-pfc-ext-prio", (
    C("pfc_tx_pause", oids.CPFC_PRIO_REQUESTS, "counter64"),
    C("pfc_rx_pause", oids.CPFC_PRIO_INDICATIONS, "counter64"),
), index=("ifIndex", "prio"))
"""SONiC (sonic-snmpagent ciscoPfcExtMIB.py): PFC frames per priority; cpfcIfTable is not polled, because
the agent fills its per-interface 'totals' from priority 3 alone."""

_CSQ_METRICS = {oids.CSQ_UCAST_PKTS: "tc_tx_pkts", oids.CSQ_UCAST_BYTES: "tc_tx_bytes",
                oids.CSQ_UCAST_DROPPED_PKTS: "tc_tx_discard"}


def _csq_samples(device: str, port_of: PortOf,
                 rows: dict[str, dict[tuple[int, ...], int | bytes | None]]) -> list[Sample]:
    """csqIfQosGroupStatsValue (index ifIndex.direction.queue.counter, queue 1-based) -> per-TC counters
    (SONiC's TC_TO_QUEUE_MAP is the identity, so queue N+1 is traffic class N)."""
    out: list[Sample] = []
    for idx, value in rows.get("_csq", {}).items():
        if len(idx) != 4 or idx[1] != oids.CSQ_EGRESS or not isinstance(value, int):
            continue
        metric = _CSQ_METRICS.get(idx[3])
        if metric is None or idx[2] < 1:
            continue
        port = port_of(idx[0]) or str(idx[0])
        out.append(Sample(device, port, metric, (("tc", str(idx[2] - 1)),), value, "counter64"))
    return out


CISCO_QOS_QUEUE = SnmpTable("cisco-switch-qos-queue", (
    C("_csq", oids.CSQ_QOS_GROUP_STATS_VALUE, "counter64"),
), index=("ifIndex", "_dir", "queue", "_counter"), to_samples=_csq_samples)
"""SONiC (sonic-snmpagent ciscoSwitchQosMIB.py): egress unicast packets, bytes and drops per queue."""
MLNX_IF_VPI = SnmpTable("mellanox-if-vpi", (
    C("ib_phys_state", oids.MLNX_IB_PORT_PHYSICAL_STATE, "state", oids.IB_PHYS_STATE_NAMES),
    C("ib_logical_state", oids.MLNX_IB_PORT_LOGICAL_STATE, "state", oids.IB_LOGICAL_STATE_NAMES),
    C("PortXmitWait", oids.MLNX_PORT_XMIT_WAIT, "counter64"),
    C("SymbolErrorCounter", oids.MLNX_SYMBOL_ERROR_COUNTER, "counter64"),
))
def _lldp_samples(device: str, port_of: PortOf,
                  rows: dict[str, dict[tuple[int, ...], int | bytes | None]]) -> list[Sample]:
    """lldpRemTable (index timeMark.localPortNum.remIndex) -> ``lldp_neighbor`` info samples.
    The local port number is mapped like an ifIndex (true on the platforms we poll)."""
    out: list[Sample] = []
    names = rows.get("sys_name", {})
    for idx, sysname in names.items():
        if len(idx) < 3:
            continue
        local = idx[1]
        pid = rows.get("port_id", {}).get(idx)
        pdesc = rows.get("port_desc", {}).get(idx)
        chassis = rows.get("chassis_id", {}).get(idx)
        out.append(Sample(device, port_of(local) or str(local), "lldp_neighbor", tuple(sorted((
            ("remote_port", _text(pid)), ("remote_port_desc", _text(pdesc)),
            ("remote_chassis", _text(chassis)),
        ))), _text(sysname), "info"))
    return out


def _text(value: int | bytes | None) -> str:
    if value is None:
        return ""
    if isinstance(value, int):
        return str(value)
    try:
        text = value.decode()
    except UnicodeDecodeError:
        return value.hex(":")
    if text.isprintable():
        return text
    return value.hex(":")


LLDP = SnmpTable("lldp", (
    C("chassis_id", oids.LLDP_REM_CHASSIS_ID, "info"),
    C("port_id", oids.LLDP_REM_PORT_ID, "info"),
    C("port_desc", oids.LLDP_REM_PORT_DESC, "info"),
    C("sys_name", oids.LLDP_REM_SYS_NAME, "info"),
), index=("_time", "lldpLocPortNum", "_rem"), to_samples=_lldp_samples)


def port_map(rows: Iterable[Row]) -> dict[int, str]:
    """ifName rows -> {ifIndex: name}."""
    out: dict[int, str] = {}
    for suffix, value in rows:
        idx = index_of(suffix)
        if len(idx) == 1 and isinstance(value, bytes):
            out[idx[0]] = value.decode(errors="replace")
    return out


def to_samples(device: str, table: SnmpTable, columns: dict[tuple[int, ...], list[Row]],
               port_of: PortOf) -> list[Sample]:
    """Rows of ``table`` (column OID -> rows, as :meth:`SnmpPoller.walk` returns) -> samples."""
    if table.to_samples is not None:
        by_metric = {c.metric: {index_of(s): v for s, v in columns.get(c.oid, [])} for c in table.columns}
        return table.to_samples(device, port_of, by_metric)
    out: list[Sample] = []
    append = out.append
    names = table.index
    width = len(names)
    label_pos = [(i, n) for i, n in enumerate(names) if n != "ifIndex" and not n.startswith("_")]
    drop_pos = [i for i, n in enumerate(names) if n.startswith("_")]
    port_pos = names.index("ifIndex") if "ifIndex" in names else None
    filters = table.index_filter
    # The columns of a table share their index suffixes: map each suffix to (port, labels, rank) once.
    keys: dict[bytes, tuple[str | None, LabelSet, tuple[int, ...]] | None] = {}

    def key_of(suffix: bytes) -> tuple[str | None, LabelSet, tuple[int, ...]] | None:
        idx = index_of(suffix)
        if len(idx) != width:
            return None
        for p, ok in filters.items():
            if idx[p] not in ok:
                return None
        port = None
        if port_pos is not None:
            port = port_of(idx[port_pos]) or str(idx[port_pos])
        if not label_pos:
            lbls: LabelSet = ()
        elif len(label_pos) == 1:
            lbls = ((label_pos[0][1], str(idx[label_pos[0][0]])),)
        else:
            lbls = tuple(sorted((n, str(idx[i])) for i, n in label_pos))
        return port, lbls, tuple([idx[i] for i in drop_pos]) if drop_pos else ()

    for col in table.columns:
        rows = columns.get(col.oid, ())
        metric, kind, states = col.metric, col.kind, col.states or {}
        # Dropped index components (Arista's packet type) can collapse rows onto one key: the row with
        # the highest dropped component wins (packet type 2 = mixed = unicast + multicast), so nothing
        # is counted twice.
        chosen: dict[tuple[str | None, LabelSet], tuple[tuple[int, ...], int | str]] = {}
        for suffix, value in rows:
            if suffix in keys:
                k = keys[suffix]
            else:
                k = keys[suffix] = key_of(suffix)
            if k is None:
                continue
            port, lbls, rank = k
            if kind == "state":
                if not isinstance(value, int):
                    continue
                v: int | str = states.get(value, str(value))
            elif kind == "info":
                v = _text(value)
            else:
                if not isinstance(value, int):
                    continue
                v = value
            if drop_pos:
                prev = chosen.get((port, lbls))
                if prev is None or rank >= prev[0]:
                    chosen[(port, lbls)] = (rank, v)
            else:
                append(new_sample((device, port, metric, lbls, v, kind)))
        for (cport, clbls), (_rank, cv) in chosen.items():
            append(new_sample((device, cport, metric, clbls, cv, kind)))
    return out
