"""collect(): plan per platform TELEMETRY, CLI collectors (fake sessions), IB name mapping, SNMP merge."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from fabriccfg.connect import ConnectError
from fabriccfg.inventory.models import Fabric
from fabriccfg.targets import Endpoint, SnmpAccess
from fabriccfg.telemetry.collect import Collector, _merge, collect, plan
from fabriccfg.telemetry.counters import compute_rates
from fabriccfg.telemetry.model import Sample, Snapshot, label
from fabriccfg.telemetry.shard import shard_of

FIX = Path(__file__).parent / "fixtures"

IBNET = """\
#
# Topology file: generated on Mon Nov 30 00:00:00 2026
#
vendid=0x2c9
devid=0xd2f0
sysimgguid=0xb8599f0300fc0003
switchguid=0xb8599f0300fc0003(b8599f0300fc0003)
Switch\t41 "S-b8599f0300fc0003"\t\t# "MF0;ib-leaf-r0:MQM8790/U1" enhanced port 0 lid 3 lmc 0
[1]\t"H-1070fd0300010000"[1](1070fd0300010000) \t\t# "gpu01 HCA-1" lid 11 4xHDR
[41]\t"H-b8599f0300fc0013"[1](b8599f0300fc0013) \t\t# "Mellanox Technologies Aggregation Node" lid 14 4xHDR

vendid=0x2c9
devid=0x101b
sysimgguid=0x1070fd0300aa0001
caguid=0x1070fd0300aa0001
Ca\t1 "H-1070fd0300aa0001"\t\t# "sm1 HCA-1"
[1](1070fd0300aa0001) \t"S-b8599f0300fc0003"[40]\t\t# lid 2 lmc 0 "MF0;ib-leaf-r0:MQM8790/U1" lid 3 4xHDR
"""
IBQE = """\
Errors for 0xb8599f0300fc0003 "MF0;ib-leaf-r0:MQM8790/U1"
   GUID 0xb8599f0300fc0003 port 1: [SymbolErrorCounter == 5]
## Summary: 7 nodes checked, 1 bad nodes found
##          30 ports checked, 1 ports have errors beyond threshold
## Thresholds:
## Suppressed:
"""
SMINFO = ("sminfo: sm lid 2 sm guid 0x1070fd0300aa0001, activity count 4242 priority 15 state 3 "
          "SMINFO_MASTER\n")
SERVICES = {"opensm": "inactive", "opensmd": "active", "sharp_am": "active"}


class FakeConn:
    def __init__(self, ep: Endpoint, log: list[tuple[str, str]]) -> None:
        self.ep = ep
        self.log = log

    def send_command(self, line: str, **_: Any) -> str:
        self.log.append((self.ep.name, line))
        if line == "ibnetdiscover":
            return IBNET
        if line == "ibqueryerrors":
            return IBQE
        if line.startswith("sminfo"):
            return SMINFO
        if line == "perfquery -x":
            return (FIX / "perfquery" / "treydock_extended.txt").read_text()
        if line.startswith("systemctl is-active "):
            return SERVICES.get(line.split()[-1], "inactive") + "\n"
        return f"bash: {line.split()[0]}: command not found\n"

    def disconnect(self) -> None:
        pass


def _endpoints(fabric: Fabric, down: set[str] = frozenset()) -> dict[str, Endpoint]:  # type: ignore[assignment]
    out = {}
    for dev in fabric.devices.values():
        if getattr(dev, "mgmt", None) is None:
            continue
        out[dev.name] = Endpoint(name=dev.name, platform=dev.platform, device_type="linux", host="127.0.0.1",
                                 ssh_port=22 if dev.name not in down else 1)
    return out


def _connect(log: list[tuple[str, str]]) -> Any:
    def connect(ep: Endpoint, **_: Any) -> FakeConn:
        if ep.ssh_port == 1:
            raise ConnectError("unreachable", f"{ep.name}: cannot reach {ep.host}:1")
        return FakeConn(ep, log)

    return connect


def test_plan_runs_fabric_tools_on_the_preferred_sm_only(ib_fabric: Fabric) -> None:
    p = plan(ib_fabric, _endpoints(ib_fabric))
    assert p.snmp == []  # MQM8790 and hosts have no agent
    lines = {job.endpoint.name: [c[0] for c in job.commands] for job in p.cli}
    assert lines["sm1"][:2] == ["ibnetdiscover", "ibqueryerrors"]
    assert "ibnetdiscover" not in lines["sm2"] and "sminfo" in lines["sm2"]
    assert lines["gpu01"] == ["perfquery -x"]  # ethtool is for RoCE hosts
    assert not any(name.startswith("ib-") for name in lines)  # unmanaged switches: read in-band


def test_shards_together_plan_what_one_unsharded_round_plans(ib_fabric: Fabric, roce_fabric: Fabric) -> None:
    """`watch --shard I/N`: each shard gets its devices' targets only, reports no "no endpoint" error for
    the others, and the shards' plans add up to the unsharded plan (fabric-wide IB tools run once)."""
    for fabric in (ib_fabric, roce_fabric):
        eps = _endpoints(fabric)
        whole = plan(fabric, eps)
        want = sorted((job.endpoint.name, line) for job in whole.cli for line, _, _ in job.commands)
        got: list[tuple[str, str]] = []
        for i in range(3):
            mine = {n: e for n, e in eps.items() if shard_of(n, 3) == i}
            p = plan(fabric, mine, shard=(i, 3))
            assert p.errors == {}, p.errors
            assert {job.endpoint.name for job in p.cli} <= set(mine)
            got += [(job.endpoint.name, line) for job in p.cli for line, _, _ in job.commands]
        assert sorted(got) == want
        assert sum(1 for _, line in got if line == "ibqueryerrors") == (fabric is ib_fabric)


def test_ib_collect_maps_guids_and_ports_to_inventory_names(ib_fabric: Fabric) -> None:
    log: list[tuple[str, str]] = []
    with Collector(connect=_connect(log), workers=4) as col:
        snap = col.collect(ib_fabric, _endpoints(ib_fabric, down={"gpu04"}))
    assert ("sm1", "sminfo 2") in log  # follow-up per SM port found by ibnetdiscover
    assert snap.errors.get("gpu04", [""])[0].startswith("ssh: gpu04: cannot reach")
    links = {(s.device, s.port): s for s in snap.select("ib_link")}
    assert links[("ib-leaf-r0", "1/1")].value == "gpu01:mlx5_0"
    assert links[("ib-leaf-r0", "1/1")].label("speed") == "HDR"
    assert links[("sm1", "mlx5_0")].value == "ib-leaf-r0:1/40"
    assert links[("ib-leaf-r0", "1/41")].label("remote_desc") == "Mellanox Technologies Aggregation Node"
    sym = snap.get("ib-leaf-r0", "1/1", "SymbolErrorCounter")
    assert sym is not None and sym.value == 5 and sym.kind == "sat16"
    zero = snap.get("ib-leaf-r0", "1/1", "PortXmitWait")
    assert zero is not None and zero.value == 0  # zero-filled: ibqueryerrors prints only non-zero
    assert zero.kind == "sat32"
    states = {(s.device, s.value) for s in snap.select("sm_state")}
    assert ("sm1", "master") in states
    svc = {(s.device, s.label("service")): s.value for s in snap.select("service_state")}
    assert svc[("sm1", "opensmd")] == "active" and svc[("sm2", "sharp_am")] == "active"
    pq = snap.get("gpu01", "mlx5_0", "PortXmitWait")
    assert pq is not None and pq.value == 22730501 and pq.kind == "sat64"
    assert "gpu01" in snap.device_ts


def test_roce_collect_merges_snmp_and_cli(roce_fabric: Fabric) -> None:
    mock_snmp = pytest.importorskip("fabriccfg.mock.snmp")
    traffic = pytest.importorskip("fabriccfg.mock.traffic")
    loop = asyncio.new_event_loop()
    model = traffic.TrafficModel(roce_fabric, seed=5)
    switches = [s.name for s in roce_fabric.switches]

    async def start() -> list[Any]:
        return [await mock_snmp.start_agent(model, n) for n in switches]

    agents = loop.run_until_complete(start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        eps = {n: Endpoint(name=n, platform=roce_fabric.devices[n].platform, device_type=None,
                           host="127.0.0.1", ssh_port=None, snmp_port=a.port,
                           snmp=SnmpAccess(version="2c", community="public"))
               for n, a in zip(switches, agents)}
        with Collector(timeout=10) as col:
            s1 = col.collect(roce_fabric, eps)
            s2 = col.collect(roce_fabric, eps)
        assert not s1.errors.get(switches[0])
        assert set(switches) <= set(s2.uptime)
        rates = compute_rates(s1, s2)
        octets = [r for k, r in rates.items() if k[2] == "if_out_octets"]
        assert octets and all(r.status == "ok" for r in octets)
        lldp = s2.select("lldp_neighbor")
        assert lldp and all(s.port is not None and s.value for s in lldp)
        # every LLDP neighbour is the inventory's peer of that port (healthy fabric)
        for s in lldp:
            peer = roce_fabric.neighbours.get((s.device, s.port or ""))
            assert peer is not None and peer[0] == s.value
    finally:
        for a in agents:
            loop.call_soon_threadsafe(a.close)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)


def test_collect_function_reuses_its_collector(ib_fabric: Fabric) -> None:
    log: list[tuple[str, str]] = []
    conn = _connect(log)
    a = collect(ib_fabric, {}, connect=conn)
    b = collect(ib_fabric, {}, connect=conn)
    assert a.samples == {} and b.samples == {}
    assert a.errors  # devices with an address but no endpoint are reported


def test_kept_sessions_are_reused_and_dropped_when_they_break(ib_fabric: Fabric) -> None:
    """watch keeps SSH sessions across rounds: one connect per device for two rounds; a session that
    broke is closed and the device reconnects within the same round."""
    log: list[tuple[str, str]] = []
    opened: list[str] = []
    closed: list[str] = []

    class Conn(FakeConn):
        broken = False

        def send_command(self, line: str, **kw: Any) -> str:
            if self.broken:
                raise OSError("Socket is closed")
            return super().send_command(line, **kw)

        def disconnect(self) -> None:
            closed.append(self.ep.name)

    conns: dict[str, Conn] = {}

    def connect(ep: Endpoint, **_: Any) -> Conn:
        opened.append(ep.name)
        conns[ep.name] = Conn(ep, log)
        return conns[ep.name]

    eps = _endpoints(ib_fabric)
    with Collector(connect=connect, keep_sessions=True) as col:
        first = col.collect(ib_fabric, eps)
        second = col.collect(ib_fabric, eps)
        assert sorted(opened) == sorted(eps) and closed == []  # reused, not reopened
        conns["gpu01"].broken = True
        third = col.collect(ib_fabric, eps)
        assert opened.count("gpu01") == 2 and closed == ["gpu01"]
    assert first.errors == second.errors == third.errors  # the broken session left no error behind
    assert not any("Socket" in m for msgs in third.errors.values() for m in msgs)
    assert sorted(closed) == sorted(["gpu01", *eps])  # Collector.close() closes the kept sessions


def test_a_device_keeps_one_sample_per_key_the_first_source_winning() -> None:
    """The merge of a device's own CLI samples: a key SNMP already gave is not added again, and of two
    commands giving one key the first wins; order is kept. Expected lists written out by hand."""

    def s(port: str, metric: str, value: int, prio: int | None = None) -> Sample:
        lbl = label("prio", prio) if prio is not None else ()
        return Sample("leaf1", port, metric, lbl, value, "counter64")

    snap = Snapshot(ts=0.0)
    _merge(snap, "leaf1", [s("swp1", "a", 1), s("swp2", "a", 2), s("swp1", "b", 3, prio=3)])
    assert snap.samples["leaf1"] == [s("swp1", "a", 1), s("swp2", "a", 2), s("swp1", "b", 3, prio=3)]

    snap = Snapshot(ts=0.0)
    _merge(snap, "leaf1", [s("swp1", "a", 1), s("swp1", "b", 3, prio=3), s("swp1", "a", 9),
                           s("swp1", "b", 9, prio=4)])
    assert snap.samples["leaf1"] == [s("swp1", "a", 1), s("swp1", "b", 3, prio=3), s("swp1", "b", 9, prio=4)]

    snap = Snapshot(ts=0.0)
    snap.add(s("swp1", "a", 100))  # from SNMP
    _merge(snap, "leaf1", [s("swp1", "a", 1), s("swp2", "a", 2)])
    _merge(snap, "leaf1", [s("swp2", "a", 7), s("swp3", "a", 3)])  # a second command of the same device
    assert snap.samples["leaf1"] == [s("swp1", "a", 100), s("swp2", "a", 2), s("swp3", "a", 3)]
