"""SONiC over SNMP (issue 11, defect 5): poll only what sonic-snmpagent serves, in its OID/index layout.

The oracle is the table below, written from sonic-net/sonic-snmpagent (read 2026-12-01), one row per
served table with the file it comes from. It is checked three ways: our OID constants against it, the
SONiC platform's polled tables against the prefixes the agent implements (the old IEEE8021-PFC-MIB /
MELLANOX-QOS-MIB choice fails here), and every OID the SONiC mock serves against the row's index shape.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fabriccfg import registry
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock import mibs
from fabriccfg.mock import snmp as mock_snmp
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.targets import SnmpAccess
from fabriccfg.telemetry import oids
from fabriccfg.telemetry.collect import snmp_samples
from fabriccfg.telemetry.snmp import SnmpPoller, SnmpTarget, index_of

V2C = SnmpAccess(version="2c", community="public")

P = "sonic-net/sonic-snmpagent src/sonic_ax_impl/mibs/"
# (table, column OID prefix, index arity, per-position allowed values or None, source)
SONIC_SNMPAGENT = (
    ("cpfcIfTable ifRequests", "1.3.6.1.4.1.9.9.813.1.1.1.1", 1, None,
     P + "vendor/cisco/ciscoPfcExtMIB.py: prefix .1.3.6.1.4.1.9.9.813.1.1, SubtreeMIBEntry('1.1')"),
    ("cpfcIfTable ifIndications", "1.3.6.1.4.1.9.9.813.1.1.1.2", 1, None,
     P + "vendor/cisco/ciscoPfcExtMIB.py: SubtreeMIBEntry('1.2')"),
    ("cpfcIfPriorityTable requestsPerPriority", "1.3.6.1.4.1.9.9.813.1.2.1.2", 2, (None, range(0, 8)),
     P + "vendor/cisco/ciscoPfcExtMIB.py: prefix .1.3.6.1.4.1.9.9.813.1.2, SubtreeMIBEntry('1.2'), "
         "PfcPrioUpdater min_prio 0 max_prio 7, counter SAI_PORT_STAT_PFC_<prio>_TX_PKTS"),
    ("cpfcIfPriorityTable indicationsPerPriority", "1.3.6.1.4.1.9.9.813.1.2.1.3", 2, (None, range(0, 8)),
     P + "vendor/cisco/ciscoPfcExtMIB.py: SubtreeMIBEntry('1.3'), SAI_PORT_STAT_PFC_<prio>_RX_PKTS"),
    ("csqIfQosGroupStatsTable value", "1.3.6.1.4.1.9.9.580.1.5.5.1.4", 4,
     (None, (2,), range(1, 9), range(1, 9)),
     P + "vendor/cisco/ciscoSwitchQosMIB.py: prefix .1.3.6.1.4.1.9.9.580.1.5.5, SubtreeMIBEntry('1.4'), "
         "index (if_index, DirectionTypes.EGRESS=2, queue % pq_count + 1, CounterMap id 1..8)"),
)
IMPLEMENTED_PREFIXES = (
    "1.3.6.1.2.1.2.2",             # ifTable: ietf/rfc1213.py
    "1.3.6.1.2.1.31.1.1",          # ifXTable: ietf/rfc2863.py
    "1.0.8802.1.1.2",              # LLDP-MIB: ieee802_1ab.py
    "1.3.6.1.4.1.9.9.813.1",       # CISCO-PFC-EXT-MIB: vendor/cisco/ciscoPfcExtMIB.py
    "1.3.6.1.4.1.9.9.580.1.5.5",   # CISCO-SWITCH-QOS-MIB: vendor/cisco/ciscoSwitchQosMIB.py
)
"""OID subtrees sonic-snmpagent implements that fabriccfg could poll (its src/sonic_ax_impl/mibs: ietf/*,
ieee802_1ab.py, vendor/cisco/*, vendor/broadcom/enterprise_trap.py; no IEEE8021-PFC-MIB, no Mellanox
module)."""


def _under(oid: tuple[int, ...], prefix: str) -> bool:
    p = oids.parse(prefix)
    return oid[:len(p)] == p


def test_our_cisco_oids_are_the_agents() -> None:
    ours = {
        "cpfcIfTable ifRequests": oids.CPFC_IF_REQUESTS,
        "cpfcIfTable ifIndications": oids.CPFC_IF_INDICATIONS,
        "cpfcIfPriorityTable requestsPerPriority": oids.CPFC_PRIO_REQUESTS,
        "cpfcIfPriorityTable indicationsPerPriority": oids.CPFC_PRIO_INDICATIONS,
        "csqIfQosGroupStatsTable value": oids.CSQ_QOS_GROUP_STATS_VALUE,
    }
    for name, prefix, *_ in SONIC_SNMPAGENT:
        assert ours[name] == oids.parse(prefix), name


def test_fact_sonic_polls_only_what_sonic_snmpagent_serves() -> None:
    spec = registry.telemetry("sonic")
    polled = [c.oid for table in spec.snmp for c in table.columns]
    assert polled
    stray = [oids.dotted(o) for o in polled if not any(_under(o, p) for p in IMPLEMENTED_PREFIXES)]
    assert not stray, f"not implemented by sonic-snmpagent: {stray}"
    assert any(_under(o, "1.3.6.1.4.1.9.9.813.1.2") for o in polled), "PFC per priority (CISCO-PFC-EXT-MIB)"


def test_sonic_mock_serves_the_agents_layout_and_the_poller_reads_it(roce_fabric: Fabric) -> None:
    device = next(s.name for s in roce_fabric.switches if s.platform == "sonic")
    model = TrafficModel(roce_fabric, seed=3)

    async def main() -> tuple[Any, list[Any]]:
        agent = await mock_snmp.start_agent(model, device)
        try:
            async with SnmpPoller(max_varbinds=64) as p:
                target = SnmpTarget(device, "127.0.0.1", agent.port, V2C)
                cols = [oids.parse(row[1]) for row in SONIC_SNMPAGENT] + [oids.IF_NAME]
                spec = registry.telemetry("sonic")
                res = await p.walk(target, cols + [c.oid for t in spec.snmp for c in t.columns])
                return res, list(spec.snmp)
        finally:
            agent.close()

    res, tables = asyncio.run(main())
    assert res.error is None, res.error
    ports = model.ports(device)
    for _name, prefix, arity, allowed, _src in SONIC_SNMPAGENT:
        rows = res.columns[oids.parse(prefix)]
        assert rows, prefix
        for suffix, _value in rows:
            idx = index_of(suffix)
            assert len(idx) == arity, (prefix, idx)
            assert idx[0] in {int(p.removeprefix("Ethernet")) + 1 for p in ports}  # get_index_from_str
            for pos, ok in enumerate(allowed or ()):
                assert ok is None or idx[pos] in ok, (prefix, idx)
    samples = snmp_samples(device, res, tuple(tables))
    pfc = {(s.port, s.label("prio")) for s in samples if s.metric == "pfc_rx_pause"}
    assert pfc == {(p, str(q)) for p in ports for q in range(8)}
    drops = {(s.port, s.label("tc")) for s in samples if s.metric == "tc_tx_discard"}
    assert drops == {(p, str(q)) for p in ports for q in range(8)}
    assert mibs.if_index(model, device, "Ethernet8") == 9
