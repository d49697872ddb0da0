"""collect() end to end against the mock fabric (SSH CLI + SNMP agents per device)."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Switch
from fabriccfg.telemetry.collect import Collector
from fabriccfg.telemetry.counters import compute_rates

mock_fabric = pytest.importorskip("fabriccfg.mock.fabric")

LINE_RATE_BYTES = 400e9 / 8


WATCHDOG_SILENT_UNTIL_FIRED = {"eos"}
"""EOS lists an interface in ``show priority-flow-control counters watchdog | json`` only once its watchdog
has fired (tests/telemetry/fixtures/eos_pfcwd/SOURCE): a healthy switch reports no watchdog counter."""


@pytest.mark.parametrize("scenarios", [[], ["counter-wrap"]], ids=["healthy", "counter-wrap"])
def test_roce_lab(roce_fabric: Fabric, tmp_path: Path, scenarios: list[str]) -> None:
    with mock_fabric.MockFabric(roce_fabric, scenarios=scenarios, workdir=tmp_path) as mock, \
            Collector(timeout=30) as col:
        s1 = col.collect(roce_fabric, mock.endpoints)
        s2 = col.collect(roce_fabric, mock.endpoints)
        # counter-wrap: counters wrap 2-8 s after the mock starts; a fast round may not have got there
        deadline = time.monotonic() + 20
        while scenarios and time.monotonic() < deadline and \
                not any(r.status == "wrapped" for r in compute_rates(s1, s2).values()):
            s2 = col.collect(roce_fabric, mock.endpoints)
    assert s2.errors == {}
    assert max(Counter(s.key for s in s2).values()) == 1  # one sample per series
    rates = compute_rates(s1, s2)
    statuses = Counter(r.status for r in rates.values())
    assert set(statuses) <= {"ok", "wrapped"}, statuses
    if scenarios:
        assert statuses["wrapped"] > 0
    for key, r in rates.items():  # no wrap mistaken for a 2**64-sized burst
        if key[2] in ("if_in_octets", "if_out_octets"):
            assert r.value_per_s is not None and r.value_per_s < 1.1 * LINE_RATE_BYTES, (key, r)
    by_dev = {d: {s.metric for s in rows} for d, rows in s2.samples.items()}
    for sw in roce_fabric.switches:
        assert sw.name in s2.uptime
        expected = {"if_in_octets", "oper_status", "lldp_neighbor", "pfc_rx_pause", "ecn_marked"}
        if sw.platform not in WATCHDOG_SILENT_UNTIL_FIRED:
            expected.add("pfcwd_storm_detected")
        assert expected <= by_dev[sw.name], (sw.platform, sorted(by_dev[sw.name]))
        cabled = {p for (d, p) in roce_fabric.neighbours if d == sw.name}
        assert {s.port for s in s2.select("if_in_octets", sw.name)} == cabled
    for sw in roce_fabric.switches:  # SNMP counters keep the walk's time; CLI ones carry their command's
        assert (sw.name, "if_in_octets") not in s2.metric_ts
        assert (sw.name, "ecn_marked") in s2.metric_ts, sw.platform
    for s in s2.select("lldp_neighbor"):
        assert roce_fabric.neighbours[(s.device, s.port or "")][0] == s.value
    for host in roce_fabric.hosts:
        assert {"np_cnp_sent", "rp_cnp_handled", "pfc_tx_pause"} <= by_dev[host.name]


def test_ib_lab(ib_fabric: Fabric, tmp_path: Path) -> None:
    with mock_fabric.MockFabric(ib_fabric, workdir=tmp_path) as mock, Collector(timeout=30) as col:
        s1 = col.collect(ib_fabric, mock.endpoints)
        s2 = col.collect(ib_fabric, mock.endpoints)
    assert s2.errors == {}
    assert max(Counter(s.key for s in s2).values()) == 1
    rates = compute_rates(s1, s2)
    assert {r.status for r in rates.values()} <= {"ok", "saturated"}
    # every inventory link shows up in ibnetdiscover under inventory names, from both ends
    seen = {(s.device, s.port): s.value for s in s2.select("ib_link")}
    for (dev, port), (peer, peer_port) in ib_fabric.neighbours.items():
        assert seen.get((dev, port)) == f"{peer}:{peer_port}", (dev, port)
    # the SHARP aggregation node of each switch is visible (not an inventory device: named by GUID)
    ans = [s for s in s2.select("ib_link") if "Aggregation Node" in (s.label("remote_desc") or "")]
    assert {s.device for s in ans} == {sw.name for sw in ib_fabric.switches}
    # in-band counters of the unmanaged switches, through the SM host
    for sw in ib_fabric.switches:
        assert isinstance(sw, Switch) and not catalog.info(sw.platform).has_snmp
        assert s2.select("SymbolErrorCounter", sw.name)
    states = {(s.device, s.value) for s in s2.select("sm_state")}
    assert {("sm1", "master"), ("sm2", "standby")} <= states
