"""The poller against the mock SNMP agent (v2c and v3 SHA/AES), and its error paths."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from typing import Any

import pytest

from fabriccfg.inventory.models import Fabric, Switch
from fabriccfg.mock import mibs
from fabriccfg.targets import SnmpAccess
from fabriccfg.telemetry import ber, oids, tables
from fabriccfg.telemetry.collect import snmp_samples
from fabriccfg.telemetry.snmp import SnmpPoller, SnmpTarget, index_of

from .conftest import V3_USER

mock_snmp = pytest.importorskip("fabriccfg.mock.snmp")
traffic = pytest.importorskip("fabriccfg.mock.traffic")

V2C = SnmpAccess(version="2c", community="public")
V3 = SnmpAccess(version="3", user="fabric", auth_protocol="sha", auth_key="authpass123", priv_protocol="aes",
                priv_key="privpass123")
COLUMNS = [oids.IF_NAME, oids.IF_HC_IN_OCTETS, oids.IF_HC_OUT_OCTETS, oids.IF_OPER_STATUS, oids.IF_HIGH_SPEED,
           oids.CPFC_PRIO_INDICATIONS, oids.CPFC_PRIO_REQUESTS]
"""Served by the SONiC mock as by sonic-snmpagent (CISCO-PFC-EXT-MIB per priority; telemetry/oids.py)."""


def _switch(fabric: Fabric, platform: str) -> Switch:
    return next(s for s in fabric.switches if s.platform == platform)


async def _with_agent(fabric: Fabric, device: str, body: Any, **agent_kw: Any) -> Any:
    model = traffic.TrafficModel(fabric, seed=3)
    agent = await mock_snmp.start_agent(model, device, v3_user=V3_USER, **agent_kw)
    try:
        return await body(agent, model)
    finally:
        agent.close()


@pytest.mark.parametrize("access", [V2C, V3], ids=["v2c", "v3-sha-aes"])
def test_walk_matches_the_traffic_model(roce_fabric: Fabric, access: SnmpAccess) -> None:
    sw = next(s for s in roce_fabric.switches if s.platform == "sonic")

    async def body(agent: Any, model: Any) -> None:
        async with SnmpPoller(max_varbinds=40) as p:
            t = SnmpTarget(sw.name, "127.0.0.1", agent.port, access)
            before = time.time()
            r1 = await p.walk(t, COLUMNS)
            after = time.time()
            assert r1.error is None, r1.error
            assert r1.uptime is not None and r1.uptime > 0
            names = tables.port_map(r1.columns[oids.IF_NAME])
            ports = model.ports(sw.name)
            assert sorted(names.values()) == sorted(ports)
            for port in ports:
                assert names[mibs.if_index(model, sw.name, port)] == port
            # counters lie between the model's values at the start and the end of the walk
            octets = {names[index_of(s)[0]]: v for s, v in r1.columns[oids.IF_HC_IN_OCTETS]}
            for port in ports:
                lo = model.port_counters(sw.name, port, before)["if_in_octets"]
                hi = model.port_counters(sw.name, port, after)["if_in_octets"]
                assert lo <= octets[port] <= hi
            pfc = r1.columns[oids.CPFC_PRIO_INDICATIONS]
            assert len(pfc) == 8 * len(ports)  # (ifIndex, prio) rows
            samples = snmp_samples(sw.name, r1, (tables.IF_MIB, tables.CISCO_PFC_PRIO))
            prios = {s.label("prio") for s in samples if s.metric == "pfc_rx_pause"}
            assert prios == {str(p) for p in range(8)}
            assert {s.value for s in samples if s.metric == "oper_status"} <= {"up", "down"}
            # second walk: the row-count hint makes it cheaper, same rows
            r2 = await p.walk(t, COLUMNS)
            assert r2.error is None
            assert {c: len(v) for c, v in r2.columns.items()} == {c: len(v) for c, v in r1.columns.items()}
            assert r2.varbinds <= r1.varbinds

    asyncio.run(_with_agent(roce_fabric, sw.name, body))


def test_many_agents_concurrently_on_one_engine(roce_fabric: Fabric) -> None:
    switches = [s.name for s in roce_fabric.switches][:6]

    async def main() -> None:
        model = traffic.TrafficModel(roce_fabric, seed=1)
        agents = [await mock_snmp.start_agent(model, name) for name in switches]
        try:
            async with SnmpPoller() as p:
                jobs = [(SnmpTarget(n, "127.0.0.1", a.port, V2C), COLUMNS[:3])
                        for n, a in zip(switches, agents)]
                results = await p.walk_many(jobs)
                assert [r.target for r in results] == switches
                assert all(r.error is None and r.useful_varbinds > 0 for r in results)
                assert p._engine is not None  # one engine for all of them
        finally:
            for a in agents:
                a.close()

    asyncio.run(main())


def test_wrong_v3_key_and_dead_port_are_errors_not_exceptions(roce_fabric: Fabric) -> None:
    sw = roce_fabric.switches[0].name

    async def body(agent: Any, model: Any) -> None:
        bad = V3.model_copy(update={"auth_key": "wrongpass999"})
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.bind(("127.0.0.1", 0))
            dead = s.getsockname()[1]
            async with SnmpPoller() as p:
                target = SnmpTarget(sw, "127.0.0.1", agent.port, bad, timeout=0.3, retries=0)
                r = await p.walk(target, COLUMNS)
                assert r.error and ("digest" in r.error.lower() or "timeout" in r.error.lower())
                t0 = time.monotonic()
                r = await p.walk(SnmpTarget(sw, "127.0.0.1", dead, V2C, timeout=0.2, retries=1), COLUMNS)
                assert r.error and "timeout" in r.error.lower()
                assert time.monotonic() - t0 < 3
                assert r.columns[oids.IF_NAME] == []

    asyncio.run(_with_agent(roce_fabric, sw, body))


def test_snmp_timeout_fault(roce_fabric: Fabric) -> None:
    sw = roce_fabric.switches[0].name

    async def body(agent: Any, model: Any) -> None:
        async with SnmpPoller() as p:
            r = await p.walk(SnmpTarget(sw, "127.0.0.1", agent.port, V2C, timeout=0.2, retries=0), COLUMNS)
            assert r.error is not None

    asyncio.run(_with_agent(roce_fabric, sw, body, faults=["snmp-timeout"]))


def test_engine_closes_its_socket() -> None:
    async def main() -> None:
        p = SnmpPoller()
        p.open()
        assert p._engine is not None
        p.close()
        assert p._engine is None
        p.close()  # idempotent

    asyncio.run(main())


def test_ber_roundtrip() -> None:
    for oid in [(1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6, 1), (1, 0, 8802, 1, 1, 2, 1, 4, 1, 1, 9, 0, 5, 1),
                (1, 3, 111, 2, 802, 1, 1, 21, 1, 1, 1, 2, 2**31 - 1), (2, 999, 3)]:
        assert ber.decode_oid(ber.encode_oid(oid)) == oid
    vbl = ber.tlv(0x30, b"".join(
        ber.tlv(0x30, ber.tlv(6, ber.encode_oid(o)) + ber.encode_value(v, tag))
        for o, v, tag in [((1, 3, 6, 1), 2**64 - 1, 0x46), ((1, 3, 6, 2), -5, 2),
                          ((1, 3, 6, 3), b"x" * 300, 4), ((1, 3, 6, 4), None, 0x82)]))
    got = [(ber.decode_oid(o), ber.value_of(t, v)) for o, t, v in ber.decode_varbind_list(vbl)]
    assert got == [((1, 3, 6, 1), 2**64 - 1), ((1, 3, 6, 2), -5), ((1, 3, 6, 3), b"x" * 300),
                   ((1, 3, 6, 4), None)]
    with pytest.raises(ber.BerError):
        ber.decode_varbind_list(vbl[:-3])


def test_walk_groups_equals_one_loop(roce_fabric: Fabric) -> None:
    sw = next(s for s in roce_fabric.switches if s.platform == "sonic")

    async def body(agent: Any, model: Any) -> None:
        async with SnmpPoller(max_varbinds=256) as p:
            t = SnmpTarget(sw.name, "127.0.0.1", agent.port, V2C)
            one = await p.walk(t, COLUMNS)
            split = await p.walk_groups(t, [COLUMNS[:5], COLUMNS[5:6], COLUMNS[6:]])
            assert split.error is None and split.uptime is not None
            assert set(split.columns) == set(one.columns)
            for col in COLUMNS:
                assert [s for s, _ in split.columns[col]] == [s for s, _ in one.columns[col]]
            sock = p._engine.transport_dispatcher.get_transport((1, 3, 6, 1, 6, 1, 1)).transport \
                .get_extra_info("socket")
            assert sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) > 1_000_000 or os.geteuid() != 0

    asyncio.run(_with_agent(roce_fabric, sw.name, body))


def test_same_v3_user_with_different_keys_on_one_poller(roce_fabric: Fabric) -> None:
    """Two fabrics (or per-device keys) with one user name: pysnmp holds one key set per user per
    engine, so alternating between them must not reuse stale localized keys (wrong digest)."""
    names = [s.name for s in roce_fabric.switches][:2]
    other = {"user": "fabric", "auth_key": "otherauth456", "priv_key": "otherpriv456"}

    async def main() -> None:
        model = traffic.TrafficModel(roce_fabric, seed=2)
        a = await mock_snmp.start_agent(model, names[0], v3_user=V3_USER)
        b = await mock_snmp.start_agent(model, names[1], v3_user=other)
        v3b = V3.model_copy(update={"auth_key": other["auth_key"], "priv_key": other["priv_key"]})
        try:
            async with SnmpPoller() as p:
                ta = SnmpTarget(names[0], "127.0.0.1", a.port, V3, timeout=0.5, retries=1)
                tb = SnmpTarget(names[1], "127.0.0.1", b.port, v3b, timeout=0.5, retries=1)
                for _ in range(2):
                    ra, rb = await asyncio.gather(p.walk(ta, COLUMNS[:2]), p.walk(tb, COLUMNS[:2]))
                    assert ra.error is None and rb.error is None, (ra.error, rb.error)
                assert len(p._slots) == 2
        finally:
            a.close()
            b.close()

    asyncio.run(main())
