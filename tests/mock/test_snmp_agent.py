"""The hand-written SNMP agent against real clients: pysnmp 7.1 and net-snmp (v2c and v3 authPriv SHA/AES)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric, Host
from fabriccfg.mock import mibs
from fabriccfg.mock.snmp import Agent, start_agent
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.telemetry import oids as O

INV = Path(__file__).resolve().parents[2] / "inventories"
T0 = 1_750_000_000.0
V3 = {
    "user": "fabric",
    "auth_key": "authpass123",
    "priv_key": "privpass123",
    "auth_protocol": "sha",
    "priv_protocol": "aes",
}
SNMPBULKWALK = shutil.which("snmpbulkwalk")
needs_netsnmp = pytest.mark.skipif(
    SNMPBULKWALK is None,
    reason="net-snmp snmpbulkwalk not installed (Debian package 'snmp': apt-get install -y snmp)",
)


class Clock:
    """The model time the agent reads; tests move it explicitly (no sleeping)."""

    def __init__(self, t: float) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


@pytest.fixture(scope="module")
def roce() -> Fabric:
    return load_fabric(INV / "roce-lab.yaml")


@pytest.fixture(scope="module")
def ib8700() -> Fabric:
    return load_fabric(INV / "ib-lab-mqm8700.yaml")


def run(coro_fn: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(coro_fn())  # type: ignore[arg-type]


class Client:
    """A pysnmp 7.1 client bound to one agent (numeric OIDs, lookupMib=False)."""

    def __init__(
        self,
        port: int,
        version: str = "2c",
        *,
        community: str = "public",
        timeout: float = 1.0,
        retries: int = 1,
        auth_key: str = "authpass123",
    ) -> None:
        self.port, self.version, self.community = port, version, community
        self.timeout, self.retries, self.auth_key = timeout, retries, auth_key

    async def __aenter__(self) -> Client:
        from pysnmp.hlapi.v3arch.asyncio import (
            USM_AUTH_HMAC96_SHA,
            USM_PRIV_CFB128_AES,
            CommunityData,
            SnmpEngine,
            UdpTransportTarget,
            UsmUserData,
        )

        self.engine = SnmpEngine()
        self.target = await UdpTransportTarget.create(
            ("127.0.0.1", self.port), timeout=self.timeout, retries=self.retries
        )
        if self.version == "3":
            self.auth: Any = UsmUserData(
                "fabric",
                authKey=self.auth_key,
                privKey="privpass123",
                authProtocol=USM_AUTH_HMAC96_SHA,
                privProtocol=USM_PRIV_CFB128_AES,
            )
        else:
            self.auth = CommunityData(self.community)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.engine.close_dispatcher()

    async def get(self, *oids: tuple[int, ...]) -> tuple[Any, list[tuple[tuple[int, ...], Any]]]:
        from pysnmp.hlapi.v3arch.asyncio import ContextData, ObjectIdentity, ObjectType, get_cmd

        ei, es, _ix, vbs = await get_cmd(
            self.engine,
            self.auth,
            self.target,
            ContextData(),
            *[ObjectType(ObjectIdentity(o)) for o in oids],
            lookupMib=False,
        )
        return ei or (es if int(es) else None), [(tuple(o), v) for o, v in vbs]

    async def next(self, oid: tuple[int, ...]) -> tuple[Any, list[tuple[tuple[int, ...], Any]]]:
        from pysnmp.hlapi.v3arch.asyncio import ContextData, ObjectIdentity, ObjectType, next_cmd

        ei, es, _ix, vbs = await next_cmd(
            self.engine,
            self.auth,
            self.target,
            ContextData(),
            ObjectType(ObjectIdentity(oid)),
            lookupMib=False,
        )
        return ei or (es if int(es) else None), [(tuple(o), v) for o, v in vbs]

    async def walk(
        self, *cols: tuple[int, ...], reps: int = 25
    ) -> dict[tuple[int, ...], dict[tuple[int, ...], Any]]:
        """Multi-column GETBULK walk: column -> {index suffix: value}."""
        from pysnmp.hlapi.v3arch.asyncio import ContextData, ObjectIdentity, ObjectType, bulk_cmd
        from pysnmp.proto.rfc1905 import EndOfMibView

        out: dict[tuple[int, ...], dict[tuple[int, ...], Any]] = {c: {} for c in cols}
        cursor = list(cols)
        live = list(cols)
        while live:
            ei, es, _ix, vbs = await bulk_cmd(
                self.engine,
                self.auth,
                self.target,
                ContextData(),
                0,
                reps,
                *[ObjectType(ObjectIdentity(cursor[cols.index(c)])) for c in live],
                lookupMib=False,
            )
            assert ei is None and not int(es), (ei, es)
            still = set(live)
            for i, (oid, val) in enumerate(vbs):
                col = live[i % len(live)]
                o = tuple(oid)
                if col not in still:
                    continue
                if isinstance(val, EndOfMibView) or o[: len(col)] != col:
                    still.discard(col)
                    continue
                out[col][o[len(col) :]] = val
                cursor[cols.index(col)] = o
            live = [c for c in live if c in still]
        return out


async def agent_for(model: TrafficModel, device: str, clock: Clock, **kw: Any) -> Agent:
    kw.setdefault("community", "public")
    kw.setdefault("v3_user", V3)
    return await start_agent(model, device, clock=clock, **kw)


@pytest.mark.parametrize("version", ["2c", "3"])
def test_pysnmp_walks_see_counters_grow(roce: Fabric, version: str) -> None:
    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0 + 5)

    async def main() -> None:
        agent = await agent_for(model, "leaf-r0", clock)
        try:
            async with Client(agent.port, version) as c:
                cols = (O.IF_NAME, O.IF_HC_OUT_OCTETS, O.IF_HC_IN_OCTETS, O.IF_OPER_STATUS, O.IF_HIGH_SPEED)
                first = await c.walk(*cols)
                clock.t += 30
                second = await c.walk(*cols)
        finally:
            agent.close()
        names = {idx[0]: str(v) for idx, v in first[O.IF_NAME].items()}
        assert list(names.values()) == model.ports("leaf-r0")
        for idx, name in names.items():
            a, b = int(first[O.IF_HC_OUT_OCTETS][(idx,)]), int(second[O.IF_HC_OUT_OCTETS][(idx,)])
            assert a == model.port_counters("leaf-r0", name, T0 + 5)["if_out_octets"]
            assert b == model.port_counters("leaf-r0", name, T0 + 35)["if_out_octets"]
            assert b - a > 30 * 0.1 * 400e9 / 8
            assert int(second[O.IF_HC_IN_OCTETS][(idx,)]) > int(first[O.IF_HC_IN_OCTETS][(idx,)])
            assert int(first[O.IF_OPER_STATUS][(idx,)]) == 1
            assert int(first[O.IF_HIGH_SPEED][(idx,)]) == 400_000
        assert agent.requests >= 2 and agent.varbinds >= 100

    run(main)


def _netsnmp(args: list[str]) -> dict[str, str]:
    proc = subprocess.run(
        [SNMPBULKWALK or "snmpbulkwalk", "-On", "-Oq", "-t", "2", "-r", "1", *args],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = {}
    for line in proc.stdout.splitlines():
        oid, _, value = line.partition(" ")
        out[oid] = value.strip().strip('"')
    return out


@needs_netsnmp
@pytest.mark.parametrize("version", ["2c", "3"])
def test_netsnmp_snmpbulkwalk(roce: Fabric, version: str) -> None:
    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0)

    async def main() -> None:
        agent = await agent_for(model, "leaf-r1", clock)
        auth = (
            ["-v2c", "-c", "public"]
            if version == "2c"
            else [
                "-v3",
                "-l",
                "authPriv",
                "-u",
                "fabric",
                "-a",
                "SHA",
                "-A",
                "authpass123",
                "-x",
                "AES",
                "-X",
                "privpass123",
            ]
        )
        loop = asyncio.get_running_loop()
        try:
            first = await loop.run_in_executor(
                None, _netsnmp, [*auth, f"127.0.0.1:{agent.port}", "1.3.6.1.2.1.31.1.1"]
            )
            clock.t += 10
            second = await loop.run_in_executor(
                None, _netsnmp, [*auth, f"127.0.0.1:{agent.port}", "1.3.6.1.2.1.31.1.1.1.10"]
            )
            whole = await loop.run_in_executor(None, _netsnmp, [*auth, f"127.0.0.1:{agent.port}", "1"])
        finally:
            agent.close()
        ports = model.ports("leaf-r1")
        names = [v for k, v in first.items() if k.startswith(".1.3.6.1.2.1.31.1.1.1.1.")]
        assert names == ports
        for p in ports:
            i = mibs.if_index(model, "leaf-r1", p)
            assert i == int(p.removeprefix("Ethernet")) + 1  # sonic-snmpagent get_index_from_str
            a = int(first[f".1.3.6.1.2.1.31.1.1.1.10.{i}"])
            b = int(second[f".1.3.6.1.2.1.31.1.1.1.10.{i}"])
            assert a == model.port_counters("leaf-r1", p, T0)["if_out_octets"]
            assert b > a
        assert len(whole) == len(agent.layout.oids)
        # SONiC serves CISCO-PFC-EXT-MIB per priority (ifIndex.prio), not MELLANOX-QOS-MIB / IEEE8021-PFC-MIB
        assert ".1.3.6.1.4.1.9.9.813.1.2.1.3.1.3" in whole and ".1.3.6.1.4.1.9.9.813.1.2.1.2.1.7" in whole
        assert not [k for k in whole if k.startswith((".1.3.6.1.4.1.33049.15.", ".1.3.111.2.802.1.1.21."))]

    run(main)


def test_lldp_neighbours_match_inventory(roce: Fabric) -> None:
    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0)

    async def main() -> dict[str, dict[tuple[int, ...], Any]]:
        agent = await agent_for(model, "leaf-r2", clock)
        try:
            async with Client(agent.port, "3") as c:
                got = await c.walk(
                    O.LLDP_LOC_PORT_ID, O.LLDP_REM_SYS_NAME, O.LLDP_REM_PORT_ID, O.LLDP_REM_PORT_DESC
                )
        finally:
            agent.close()
        return {str(k): v for k, v in got.items()}

    got = run(main)
    loc = {idx[0]: str(v) for idx, v in got[str(O.LLDP_LOC_PORT_ID)].items()}
    seen = {}
    for idx, v in got[str(O.LLDP_REM_SYS_NAME)].items():
        local = loc[idx[1]]
        seen[local] = (
            str(v),
            str(got[str(O.LLDP_REM_PORT_ID)][idx]),
            str(got[str(O.LLDP_REM_PORT_DESC)][idx]),
        )
    expected = {}
    for port in model.ports("leaf-r2"):
        dev, rport = roce.neighbours[("leaf-r2", port)]
        host = roce.devices[dev]
        port_id = next(n.netdev for n in host.nics if n.name == rport) if isinstance(host, Host) else rport
        expected[port] = (dev, port_id, rport)
    assert seen == expected


def test_lldp_follows_cabling_swap(roce: Fabric) -> None:
    model = TrafficModel(roce, ["cabling-swap:leaf-r0:swp1,leaf-r0:swp2@10"], seed=1, t0=T0)
    clock = Clock(T0 + 1)

    async def main() -> tuple[Any, Any]:
        agent = await agent_for(model, "leaf-r0", clock)
        try:
            async with Client(agent.port) as c:
                oids = ((*O.LLDP_REM_SYS_NAME, 0, 1, 1), (*O.LLDP_REM_SYS_NAME, 0, 2, 1))
                before = await c.get(*oids)
                clock.t = T0 + 11
                after = await c.get(*oids)
        finally:
            agent.close()
        return before, after

    before, after = run(main)
    assert [str(v) for _, v in before[1]] == ["gpu01", "gpu02"]
    assert [str(v) for _, v in after[1]] == ["gpu02", "gpu01"]


def test_counter_wrap_and_reboot_over_snmp(roce: Fabric) -> None:
    model = TrafficModel(roce, ["counter-wrap", "reboot:leaf-r2"], seed=1, t0=T0)
    clock = Clock(T0)

    async def main() -> list[Any]:
        agent = await agent_for(model, "leaf-r2", clock)  # EOS: an agent with the Counter32 PFC totals
        out = []
        try:
            async with Client(agent.port) as c:
                for t in (T0, T0 + 9, T0 + 11):
                    clock.t = t
                    out.append(
                        await c.get((*O.SYS_UPTIME, 0), (*O.IF_HC_OUT_OCTETS, 1), (*O.PFC_INDICATIONS, 1))
                    )
        finally:
            agent.close()
        return out

    (e1, a), (e2, b), (e3, c) = run(main)
    assert e1 is None and e2 is None and e3 is None
    up = [int(x[0][1]) for x in (a, b, c)]
    assert up[1] > up[0] > 100 * 86400 and up[2] == 100  # reboot at t0 + 10
    hc = [int(x[1][1]) for x in (a, b, c)]
    assert hc[0] > 2**64 - 2**62 and hc[1] < hc[0]  # 64-bit wrap within 9 s
    assert hc[2] < 100e9  # counters restart after the reboot
    pfc = [int(x[2][1]) for x in (a, b)]
    assert pfc[0] > 2**32 - 1000 and pfc[1] < pfc[0]  # Counter32 wraps within seconds


def test_snmp_timeout_fault_and_bad_credentials(roce: Fabric) -> None:
    from pysnmp.proto.rfc1905 import EndOfMibView, NoSuchInstance

    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0)

    async def main() -> None:
        agent = await agent_for(model, "spine1", clock, faults=["spine1:snmp-timeout"])
        try:
            async with Client(agent.port, timeout=0.2, retries=0) as c:
                err, _ = await c.get((*O.SYS_UPTIME, 0))
                assert type(err).__name__ == "RequestTimedOut"
                assert agent.dropped >= 1
                agent.set_faults([])
                err, vbs = await c.get((*O.SYS_UPTIME, 0), (*O.SYS_NAME, 0), (1, 3, 6, 1, 2, 1, 1, 99, 0))
                assert err is None and str(vbs[1][1]) == "spine1" and isinstance(vbs[2][1], NoSuchInstance)
                err, vbs = await c.next((2, 99))
                assert err is None and isinstance(vbs[0][1], EndOfMibView)
            async with Client(agent.port, community="wrong", timeout=0.2, retries=0) as c:
                err, _ = await c.get((*O.SYS_UPTIME, 0))
                assert err is not None  # a wrong community is dropped: the client times out
            async with Client(agent.port, "3", auth_key="wrongpass123", timeout=0.5, retries=0) as c:
                err, _ = await c.get((*O.SYS_UPTIME, 0))
                assert "digest" in str(err).lower()
        finally:
            agent.close()

    run(main)


def test_platform_mibs(roce: Fabric, ib8700: Fabric) -> None:
    model = TrafficModel(roce, ["pause-storm:gpu03"], seed=1, t0=T0)
    ib_model = TrafficModel(
        ib8700, ["ib-congestion:ib8700-leaf1:1/1", "ib-symbol-errors:ib8700-leaf1:1/2"], seed=1, t0=T0
    )
    clock = Clock(T0 + 20)

    async def main() -> dict[str, dict[tuple[int, ...], dict[tuple[int, ...], Any]]]:
        out = {}
        agents = [await agent_for(model, d, clock) for d in ("leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3")]
        agents.append(await agent_for(ib_model, "ib8700-leaf1", clock))
        try:
            for agent in agents:
                async with Client(agent.port, "3") as c:
                    out[agent.device] = await c.walk(
                        O.MLNX_PFC_RX_PAUSE_PKTS,
                        O.ARISTA_EGRESS_PKTS,
                        O.PFC_INDICATIONS,
                        O.MLNX_PORT_XMIT_WAIT,
                        O.MLNX_SYMBOL_ERROR_COUNTER,
                        O.LLDP_REM_SYS_NAME,
                        O.CPFC_PRIO_INDICATIONS,
                        O.CSQ_QOS_GROUP_STATS_VALUE,
                    )
        finally:
            for agent in agents:
                agent.close()
        return out

    got = run(main)
    t = T0 + 20
    # Cumulus' snmpd: IF-MIB and LLDP-MIB only (its Supported MIBs page); PFC/queue counters are NVUE CLI
    cum = got["leaf-r0"]
    assert cum[O.LLDP_REM_SYS_NAME]
    assert not cum[O.MLNX_PFC_RX_PAUSE_PKTS] and not cum[O.PFC_INDICATIONS]
    assert not cum[O.CPFC_PRIO_INDICATIONS]
    assert not cum[O.ARISTA_EGRESS_PKTS] and not cum[O.MLNX_PORT_XMIT_WAIT]
    # SONiC: CISCO-PFC-EXT-MIB per priority and CISCO-SWITCH-QOS-MIB queues, ifIndex EthernetN + 1
    son = got["leaf-r1"]
    assert not son[O.MLNX_PFC_RX_PAUSE_PKTS] and not son[O.PFC_INDICATIONS]
    want = {(int(p.removeprefix("Ethernet")) + 1, q) for p in model.ports("leaf-r1") for q in range(8)}
    assert set(son[O.CPFC_PRIO_INDICATIONS]) == want  # index ifIndex.priority, priority 0..7
    port = "Ethernet0"
    counters = model.port_counters("leaf-r1", port, t)
    assert int(son[O.CPFC_PRIO_INDICATIONS][(1, 3)]) == counters["pfc_rx_pause.3"]
    queue4 = (1, O.CSQ_EGRESS, 4, O.CSQ_UCAST_PKTS)  # queue numbers are 1-based: queue 4 = TC 3
    assert int(son[O.CSQ_QOS_GROUP_STATS_VALUE][queue4]) == counters["tc_tx_pkts.3"]
    eos = got["leaf-r2"]
    assert eos[O.ARISTA_EGRESS_PKTS] and not eos[O.MLNX_PFC_RX_PAUSE_PKTS] and eos[O.LLDP_REM_SYS_NAME]
    nxos = got["leaf-r3"]
    assert not nxos[O.PFC_INDICATIONS] and nxos[O.CPFC_PRIO_INDICATIONS]  # Cisco's N9K MIB support list
    assert not nxos[O.ARISTA_EGRESS_PKTS] and not nxos[O.MLNX_PFC_RX_PAUSE_PKTS] and nxos[O.LLDP_REM_SYS_NAME]
    ib = got["ib8700-leaf1"]
    i1 = ib_model.if_index("ib8700-leaf1", "1/1")
    i2 = ib_model.if_index("ib8700-leaf1", "1/2")
    assert (
        int(ib[O.MLNX_PORT_XMIT_WAIT][(i1,)])
        == ib_model.port_counters("ib8700-leaf1", "1/1", t)["PortXmitWait"]
    )
    assert int(ib[O.MLNX_SYMBOL_ERROR_COUNTER][(i2,)]) == 400
    assert not ib[O.LLDP_REM_SYS_NAME] and not ib[O.PFC_INDICATIONS]


def test_many_agents_in_one_loop_and_big_bulk(roce: Fabric) -> None:
    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0)
    devices = [s.name for s in roce.switches]

    async def main() -> None:
        agents = [await agent_for(model, d, clock, community="c0mmunity") for d in devices * 3]
        try:
            assert len({a.port for a in agents}) == len(agents)
            for agent in agents:
                async with Client(agent.port, community="c0mmunity") as c:
                    err, vbs = await c.get((*O.SYS_NAME, 0))
                    assert err is None and str(vbs[0][1]) == agent.device
            async with Client(agents[0].port) as c:
                from pysnmp.hlapi.v3arch.asyncio import ContextData, ObjectIdentity, ObjectType, bulk_cmd

                c.auth = __import__("pysnmp.hlapi.v3arch.asyncio", fromlist=["CommunityData"]).CommunityData(
                    "c0mmunity"
                )
                ei, es, _ix, vbs = await bulk_cmd(
                    c.engine,
                    c.auth,
                    c.target,
                    ContextData(),
                    0,
                    2000,
                    ObjectType(ObjectIdentity((1, 3))),
                    lookupMib=False,
                )
                assert ei is None and not int(es)
                assert 100 < len(vbs) <= len(agents[0].layout.oids)
        finally:
            for agent in agents:
                agent.close()

    run(main)


def test_v3_time_window_reports_let_the_client_resync(roce: Fabric) -> None:
    model = TrafficModel(roce, seed=1, t0=T0)
    clock = Clock(T0)

    async def main() -> None:
        agent = await agent_for(model, "leaf-r0", clock)
        try:
            async with Client(agent.port, "3") as c:
                assert (await c.get((*O.SYS_NAME, 0)))[0] is None
                agent._t_start -= 1000  # the agent's engine time jumps: the client's notion is stale
                err, vbs = await c.get((*O.SYS_NAME, 0))
                assert err is None and str(vbs[0][1]) == "leaf-r0"
                agent.boots += 1  # an engine reboot
                err, vbs = await c.get((*O.SYS_NAME, 0))
                assert err is None and str(vbs[0][1]) == "leaf-r0"
        finally:
            agent.close()
        unknown_engine, not_in_window = (1, 3, 6, 1, 6, 3, 15, 1, 1, 4, 0), (1, 3, 6, 1, 6, 3, 15, 1, 1, 2, 0)
        assert agent.usm_stats[unknown_engine] == 1 and agent.usm_stats[not_in_window] == 2

    run(main)
