"""Traffic model: link consistency, determinism, monotonicity and each scenario's counter signature."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock.scenarios import ScenarioError, parse
from fabriccfg.mock.traffic import IB_ERROR_BITS, TrafficModel

INV = Path(__file__).resolve().parents[2] / "inventories"
T0 = 1_750_000_000.0
P = 3  # lossless priority of the example inventories


@pytest.fixture(scope="module")
def roce() -> Fabric:
    return load_fabric(INV / "roce-lab.yaml")


@pytest.fixture(scope="module")
def ib() -> Fabric:
    return load_fabric(INV / "ib-lab-mqm8790.yaml")


@pytest.fixture(scope="module")
def ib8700() -> Fabric:
    return load_fabric(INV / "ib-lab-mqm8700.yaml")


def rate(m: TrafficModel, dev: str, port: str, name: str, t1: float, t2: float) -> float:
    a = m.port_counters(dev, port, t1)[name]
    b = m.port_counters(dev, port, t2)[name]
    return (b - a) / (t2 - t1)


MIRRORS = [("if_out_octets", "if_in_octets"), ("if_out_ucast_pkts", "if_in_ucast_pkts")] + [
    (f"pfc_tx_pause{s}.{q}", f"pfc_rx_pause{s}.{q}") for q in range(8) for s in ("", "_duration")
]

ROCE_SCENARIOS = [
    [],
    ["congestion:gpu02"],
    ["pause-storm:gpu03"],
    ["link-flap:leaf-r0:swp29"],
    ["lossless-drop:leaf-r1:Ethernet8"],
    ["microburst:leaf-r0:swp3", "ecn-misconfig:leaf-r0@3"],
    ["counter-wrap", "pause-storm:gpu01@2"],
]


@pytest.mark.parametrize("specs", ROCE_SCENARIOS, ids=lambda s: ",".join(s) or "healthy")
def test_both_ends_of_every_link_agree(roce: Fabric, specs: list[str]) -> None:
    m = TrafficModel(roce, specs, seed=7, t0=T0)
    for t in (T0, T0 + 0.7, T0 + 3.3, T0 + 61.0):
        for link in roce.links:
            (a, pa), (b, pb) = link.ends
            ca, cb = m.port_counters(a, pa, t), m.port_counters(b, pb, t)
            for out_name, in_name in MIRRORS:
                assert ca[out_name] == cb[in_name], (link.a, out_name, t)
                assert cb[out_name] == ca[in_name], (link.b, out_name, t)
            assert ca["oper_status"] == cb["oper_status"]
            assert ca["speed_mbps"] == cb["speed_mbps"] == 400_000
            for sw, host in (((a, pa), (b, pb)), ((b, pb), (a, pa))):
                if sw[0].startswith("leaf") and host[0].startswith("gpu"):
                    cs, ch = m.port_counters(*sw, t), m.port_counters(*host, t)
                    assert cs[f"ecn_marked.{P}"] == ch["np_ecn_marked_roce_packets"]


def test_ib_links_agree_and_data_is_octets_over_4(ib: Fabric) -> None:
    m = TrafficModel(ib, ["link-flap:ib-leaf-r0:1/31"], seed=3, t0=T0)
    for t in (T0 + 1, T0 + 4.2, T0 + 30):
        for link in ib.links:
            (a, pa), (b, pb) = link.ends
            ca, cb = m.port_counters(a, pa, t), m.port_counters(b, pb, t)
            assert ca["PortXmitData"] == cb["PortRcvData"] == ca["if_out_octets"] // 4
            assert ca["PortXmitPkts"] == cb["PortRcvPkts"]
            assert ca["PortUnicastXmitPkts"] + ca["PortMulticastXmitPkts"] == ca["PortXmitPkts"]
            assert ca["oper_status"] == cb["oper_status"]


def test_deterministic_across_instances_and_seeds(roce: Fabric) -> None:
    specs = ["pause-storm:gpu03", "congestion:gpu05"]
    a = TrafficModel(roce, specs, seed=1, t0=T0)
    b = TrafficModel(roce, [parse(s, roce) for s in specs], seed=1, t0=T0)
    c = TrafficModel(roce, specs, seed=2, t0=T0)
    for dev, port in (("leaf-r0", "swp3"), ("gpu05", "mlx5_2"), ("spine2", "Ethernet8")):
        assert a.port_counters(dev, port, T0 + 12.5) == b.port_counters(dev, port, T0 + 12.5)
        assert a.port_counters(dev, port, T0 + 12.5) != c.port_counters(dev, port, T0 + 12.5)
    assert a.device_state("leaf-r0", T0 + 5) == b.device_state("leaf-r0", T0 + 5)


@pytest.mark.parametrize("specs", ROCE_SCENARIOS[:-1], ids=lambda s: ",".join(s) or "healthy")
def test_counters_are_monotonic(roce: Fabric, specs: list[str]) -> None:
    m = TrafficModel(roce, specs, seed=5, t0=T0)
    for dev, port in (("leaf-r0", "swp1"), ("leaf-r0", "swp29"), ("gpu03", "mlx5_0"), ("spine1", "swp2")):
        prev = m.port_counters(dev, port, T0 - 5)
        for i in range(1, 120):
            cur = m.port_counters(dev, port, T0 - 5 + i * 0.37)
            for k, v in cur.items():
                if k not in ("oper_status", "speed_mbps"):
                    assert v >= prev[k], (dev, port, k, i)
            prev = cur


def test_ports_in_ifindex_order(roce: Fabric, ib8700: Fabric) -> None:
    m = TrafficModel(roce, t0=T0)
    assert m.ports("leaf-r0") == [f"swp{i}" for i in (*range(1, 9), *range(25, 33))]
    assert [m.if_index("leaf-r0", p) for p in m.ports("leaf-r0")] == [*range(1, 9), *range(25, 33)]
    assert m.ports("leaf-r1")[:2] == ["Ethernet0", "Ethernet8"]
    assert m.ports("gpu01") == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    mi = TrafficModel(ib8700, t0=T0)
    idx = [mi.if_index("ib8700-leaf2", p) for p in mi.ports("ib8700-leaf2")]
    assert idx == sorted(idx)


def test_realistic_magnitudes(roce: Fabric, ib: Fabric) -> None:
    m = TrafficModel(roce, seed=9, t0=T0)
    line = 400e9 / 8
    for dev, port in (("leaf-r0", "swp1"), ("gpu01", "mlx5_0"), ("spine1", "swp3")):
        r = rate(m, dev, port, "if_out_octets", T0, T0 + 10)
        assert 0.15 * line < r < 0.8 * line
        pk = rate(m, dev, port, "if_out_ucast_pkts", T0, T0 + 10)
        assert 3000 < r / pk < 5000
        c = m.port_counters(dev, port, T0)
        assert c["if_out_octets"] > 2**32  # 64-bit counters carry 64-bit values
    mi = TrafficModel(ib, seed=9, t0=T0)
    r = rate(mi, "ib-leaf-r0", "1/1", "PortXmitData", T0, T0 + 10) * 4
    assert 0.15 * 200e9 / 8 < r < 0.8 * 200e9 / 8
    assert rate(mi, "ib-leaf-r0", "1/1", "PortXmitWait", T0, T0 + 10) < 0.001 * 200e9 / 64


def test_healthy_has_no_errors_storms_or_drops(roce: Fabric) -> None:
    m = TrafficModel(roce, ["healthy"], seed=1, t0=T0)
    for dev in roce.devices:
        for port in m.ports(dev):
            c = m.port_counters(dev, port, T0 + 100)
            bad = {
                k: v
                for k, v in c.items()
                if v
                and k.startswith(("if_in_err", "if_out_err", "if_in_disc", "if_out_disc", "tc_", "pfcwd_"))
                and not k.startswith("tc_tx_")
            }
            assert not bad, (dev, port, bad)
            assert c["oper_status"] == 1
            # background pause is micro-bursts only
            assert rate(m, dev, port, f"pfc_rx_pause.{P}", T0, T0 + 10) < 50


def test_congestion_signature(roce: Fabric) -> None:
    m = TrafficModel(roce, ["congestion:gpu02"], seed=1, t0=T0)
    healthy = TrafficModel(roce, seed=1, t0=T0)
    leaf_port = roce.neighbours[("gpu02", "mlx5_0")]
    marks = rate(m, *leaf_port, f"ecn_marked.{P}", T0, T0 + 10)
    tx = rate(m, *leaf_port, "if_out_ucast_pkts", T0, T0 + 10)
    assert marks / tx > 0.01
    assert rate(healthy, *leaf_port, f"ecn_marked.{P}", T0, T0 + 10) / tx < 1e-4
    assert rate(m, *leaf_port, "if_out_octets", T0, T0 + 10) > 0.75 * 400e9 / 8
    for nic in ("mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"):
        assert rate(m, "gpu02", nic, "np_cnp_sent", T0, T0 + 10) > 1000
        assert rate(m, "gpu02", nic, f"pfc_tx_pause.{P}", T0, T0 + 10) > 100
    assert rate(m, "gpu05", "mlx5_0", "rp_cnp_handled", T0, T0 + 10) > 10 * rate(
        healthy, "gpu05", "mlx5_0", "rp_cnp_handled", T0, T0 + 10
    )
    assert m.port_counters(*leaf_port, T0 + 60)[f"pfcwd_storm_detected.{P}"] == 0
    assert rate(m, "leaf-r0", "swp29", f"pfc_tx_pause.{P}", T0, T0 + 10) > 10


def test_pause_storm_signature_and_hop_onsets(roce: Fabric) -> None:
    m = TrafficModel(roce, ["pause-storm:gpu03"], seed=1, t0=T0)
    leaf, lp = roce.neighbours[("gpu03", "mlx5_0")]
    assert (leaf, lp) == ("leaf-r0", "swp3")
    # hop 0: continuous pause from the NIC; the leaf port receives it and its egress stalls
    assert rate(m, "gpu03", "mlx5_0", f"tx_prio{P}_pause", T0, T0 + 1) > 10_000
    assert rate(m, leaf, lp, f"pfc_rx_pause.{P}", T0, T0 + 1) > 10_000
    assert rate(m, leaf, lp, f"pfc_rx_pause_duration.{P}", T0, T0 + 1) > 0.9e6  # us paused per second
    assert rate(m, leaf, lp, "if_out_octets", T0, T0 + 10) < 0.01 * 400e9 / 8
    assert rate(m, "gpu03", "mlx5_1", f"tx_prio{P}_pause", T0, T0 + 1) < 50  # other rails untouched
    # watchdog on the first hop only
    c = m.port_counters(leaf, lp, T0 + 5)
    assert c[f"pfcwd_storm_detected.{P}"] >= 1 and c[f"pfcwd_tx_drop.{P}"] > 0
    for dev in ("spine1", "spine2", "leaf-r1"):
        for port in m.ports(dev):
            assert m.port_counters(dev, port, T0 + 30)[f"pfcwd_storm_detected.{P}"] == 0

    def onset(dev: str, port: str, name: str) -> float:
        """First 0.1 s step at which ``name`` grows faster than background."""
        for i in range(100):
            t = T0 + i * 0.1
            if rate(m, dev, port, name, t, t + 0.1) > 500:
                return i * 0.1
        return 99.0

    hop0 = onset(leaf, lp, f"pfc_rx_pause.{P}")
    hop1 = onset("leaf-r0", "swp29", f"pfc_tx_pause.{P}")  # leaf uplink -> spine1
    hop1b = onset("spine1", "swp1", f"pfc_rx_pause.{P}")
    hop2 = onset("spine1", "swp2", f"pfc_tx_pause.{P}")  # spine1 -> leaf-r1
    hop2b = onset("leaf-r1", "Ethernet224", f"pfc_rx_pause.{P}")
    assert hop0 < hop1 == hop1b < hop2 == hop2b < 99
    # the pause goes upstream only: spines do not pause the origin leaf, hosts of other leaves see none
    assert rate(m, "spine1", "swp1", f"pfc_tx_pause.{P}", T0 + 5, T0 + 10) < 50
    assert rate(m, "gpu01", "mlx5_1", f"rx_prio{P}_pause", T0 + 5, T0 + 10) < 50
    # egress towards the paused neighbour slows at each hop
    assert rate(m, "spine1", "swp1", "if_out_octets", T0 + 5, T0 + 15) < rate(
        TrafficModel(roce, seed=1, t0=T0), "spine1", "swp1", "if_out_octets", T0 + 5, T0 + 15
    )


def test_lossless_drop_signature(roce: Fabric) -> None:
    m = TrafficModel(roce, ["lossless-drop:leaf-r1:Ethernet8"], seed=1, t0=T0)
    assert rate(m, "leaf-r1", "Ethernet8", f"tc_nobuffer_discard.{P}", T0, T0 + 10) > 100
    assert rate(m, "leaf-r1", "Ethernet8", "if_out_discards", T0, T0 + 10) > 100
    assert m.port_counters("leaf-r1", "Ethernet0", T0 + 10)[f"tc_nobuffer_discard.{P}"] == 0


def test_link_flap_signature_both_ends(roce: Fabric, ib: Fabric) -> None:
    m = TrafficModel(roce, ["link-flap:leaf-r0:swp29"], seed=1, t0=T0)
    states = [m.port_counters("leaf-r0", "swp29", T0 + i * 0.5)["oper_status"] for i in range(40)]
    assert 1 in states and 2 in states
    assert [m.port_counters("spine1", "swp1", T0 + i * 0.5)["oper_status"] for i in range(40)] == states
    for dev, port in (("leaf-r0", "swp29"), ("spine1", "swp1")):
        c1, c2 = m.port_counters(dev, port, T0 + 0.5), m.port_counters(dev, port, T0 + 25)
        assert c2["link_down_events"] - c1["link_down_events"] == 3
        assert c2["if_in_errors"] > c1["if_in_errors"]
    # no traffic while down
    down_t = T0 + 1.5
    assert m.port_counters("leaf-r0", "swp29", down_t)["oper_status"] == 2
    assert rate(m, "leaf-r0", "swp29", "if_out_octets", T0 + 1.2, T0 + 2.8) == 0
    mi = TrafficModel(ib, ["link-flap:ib-leaf-r0:1/31"], seed=1, t0=T0)
    for dev, port in (("ib-leaf-r0", "1/31"), ("ib-spine1", "1/1")):
        c = mi.port_counters(dev, port, T0 + 35)
        assert c["LinkDownedCounter"] == 4 and c["LinkErrorRecoveryCounter"] == 4
        assert c["SymbolErrorCounter"] > 0 and c["PortRcvErrors"] > 0


def test_ib_congestion_and_symbol_errors(ib: Fabric) -> None:
    m = TrafficModel(ib, ["ib-congestion:ib-leaf-r0:1/1", "ib-symbol-errors:ib-leaf-r1:1/2"], seed=1, t0=T0)
    ticks = 200e9 / 64  # PortXmitWait ticks/s when fully stalled at HDR (8 bytes per tick)
    assert rate(m, "ib-leaf-r0", "1/1", "PortXmitWait", T0, T0 + 10) > 0.2 * ticks
    assert rate(m, "ib-leaf-r0", "1/2", "PortXmitWait", T0, T0 + 10) < 0.001 * ticks
    assert 15 < rate(m, "ib-leaf-r1", "1/2", "SymbolErrorCounter", T0, T0 + 10) < 25
    assert m.port_counters("ib-leaf-r1", "1/3", T0 + 10)["SymbolErrorCounter"] == 0
    # 16-bit saturation after ~55 minutes at 20/s
    assert m.port_counters("ib-leaf-r1", "1/2", T0 + 4000)["SymbolErrorCounter"] == 2**16 - 1
    for name, bits in IB_ERROR_BITS.items():
        assert m.port_counters("ib-leaf-r1", "1/2", T0 + 10**7)[name] <= 2**bits - 1


def test_counter_wrap(roce: Fabric) -> None:
    m = TrafficModel(roce, ["counter-wrap"], seed=1, t0=T0)
    plain = TrafficModel(roce, seed=1, t0=T0)
    for dev, port in (("leaf-r0", "swp1"), ("gpu01", "mlx5_0")):
        a, b = m.port_counters(dev, port, T0), m.port_counters(dev, port, T0 + 10)
        pa, pb = plain.port_counters(dev, port, T0), plain.port_counters(dev, port, T0 + 10)
        for name in (
            "if_out_octets",
            "if_in_octets",
            "if_out_ucast_pkts",
            f"pfc_rx_pause.{P}",
            f"pfc_tx_pause.{P}",
        ):
            if pb[name] == pa[name]:
                continue
            assert a[name] > 2**64 - 2**62, name  # starts just below 2**64 ...
            assert b[name] < a[name], name  # ... and wraps within 10 s
            assert (b[name] - a[name]) % 2**64 == pb[name] - pa[name]  # same delta modulo 2**64
            assert (b[name] % 2**32) < (a[name] % 2**32) or (b[name] - a[name]) % 2**64 >= 2**32
    host = m.port_counters("gpu01", "mlx5_0", T0)
    assert 2**32 - host[f"pfc_tx_pause.{P}"] % 2**32 < 200  # Counter32 views wrap within seconds too


def test_reboot_resets_uptime_and_counters(roce: Fabric) -> None:
    m = TrafficModel(roce, ["reboot:leaf-r2@5"], seed=1, t0=T0)
    before = m.device_state("leaf-r2", T0 + 14)
    after = m.device_state("leaf-r2", T0 + 16)
    assert before["sys_uptime_ticks"] > 100 * 86400
    assert after["sys_uptime_ticks"] == 100  # rebooted at t0 + 5 + 10
    c = m.port_counters("leaf-r2", "Ethernet1/1", T0 + 16)
    assert 0 < c["if_out_octets"] < 400e9 / 8 * 1.01
    assert m.port_counters("leaf-r2", "Ethernet1/1", T0 + 14)["if_out_octets"] > c["if_out_octets"]
    # the peer keeps counting
    assert m.port_counters("gpu01", "mlx5_2", T0 + 16)["if_in_octets"] > 10**12
    assert m.device_state("leaf-r1", T0 + 16)["sys_uptime_ticks"] > 100 * 86400


def test_cabling_swap_neighbours(roce: Fabric) -> None:
    m = TrafficModel(roce, ["cabling-swap:leaf-r0:swp1,leaf-r0:swp2@10"], seed=1, t0=T0)
    assert m.neighbour("leaf-r0", "swp1", T0 + 1) == ("gpu01", "mlx5_0")
    assert m.neighbour("leaf-r0", "swp1", T0 + 11) == ("gpu02", "mlx5_0")
    assert m.neighbour("leaf-r0", "swp2", T0 + 11) == ("gpu01", "mlx5_0")
    assert m.neighbour("gpu01", "mlx5_0", T0 + 11) == ("leaf-r0", "swp2")
    assert m.neighbour("gpu02", "mlx5_0", T0 + 11) == ("leaf-r0", "swp1")
    assert m.neighbour("leaf-r0", "swp3", T0 + 11) == ("gpu03", "mlx5_0")


def test_runtime_inject_and_clear_stay_monotonic(roce: Fabric) -> None:
    m = TrafficModel(roce, seed=1, t0=T0)
    before = m.port_counters("leaf-r0", "swp3", T0 + 10)
    m.inject("pause-storm:gpu03", t=T0 + 10)
    assert m.port_counters("leaf-r0", "swp3", T0 + 10) == before  # the past does not change
    assert rate(m, "leaf-r0", "swp3", f"pfc_rx_pause.{P}", T0 + 10, T0 + 11) > 10_000
    mid = m.port_counters("leaf-r0", "swp3", T0 + 20)
    m.clear(t=T0 + 20)
    assert m.port_counters("leaf-r0", "swp3", T0 + 20) == mid
    assert rate(m, "leaf-r0", "swp3", f"pfc_rx_pause.{P}", T0 + 21, T0 + 31) < 50
    with pytest.raises(ScenarioError, match="only be chosen at start"):
        m.inject("counter-wrap")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "empty scenario"),
        ("pause-storms:gpu01", "unknown scenario 'pause-storms'"),
        ("congestion", "write congestion:HOST"),
        ("link-flap:leaf-r0", "DEVICE:PORT"),
        ("link-flap:leaf-r0:swp20", "not a cabled port"),
        ("congestion:leaf-r0", "not a GPU host"),
        ("pause-storm:gpu01:mlx5_9", "has no NIC 'mlx5_9'"),
        ("reboot:nosuch", "unknown device 'nosuch'"),
        ("cabling-swap:leaf-r0:swp1", "cabling-swap:DEVICE:PORT,DEVICE:PORT"),
        ("healthy:x", "takes no arguments"),
        ("ib-congestion:leaf-r0:swp1", "needs an InfiniBand fabric"),
        ("pause-storm:gpu01@soon", "not a number"),
        ("microburst:leaf-r0", "DEVICE:PORT"),
        ("microburst:gpu01:mlx5_0", "not a switch"),
        ("microburst:leaf-r0:swp20", "not a cabled port"),
        ("microburst:leaf-r0:swp3:1", "SENDERS must be 2-1024"),
        ("microburst:leaf-r0:swp3:5000", "SENDERS must be 2-1024"),
    ],
)
def test_scenario_parse_errors(roce: Fabric, spec: str, message: str) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse(spec, roce)


def test_scenario_parse_forms() -> None:
    sc = parse("pause-storm:gpu01:mlx5_1@2.5")
    assert (sc.name, sc.device, sc.port, sc.onset) == ("pause-storm", "gpu01", "mlx5_1", 2.5)
    sc = parse("cabling-swap:a:1/1, b:1/2")
    assert (sc.device, sc.port, sc.other) == ("a", "1/1", ("b", "1/2"))
    assert str(parse("link-flap:leaf-r0:swp1")) == "link-flap:leaf-r0:swp1"
    sc = parse("microburst:leaf-r0:swp3:16@4")
    assert (sc.name, sc.device, sc.port, sc.count, sc.onset) == ("microburst", "leaf-r0", "swp3", 16, 4.0)
    sc = parse("microburst:leaf-r0:swp3")
    assert (sc.device, sc.port, sc.count) == ("leaf-r0", "swp3", None)


def test_ib_congestion_by_host_and_xmit_discards(ib: Fabric) -> None:
    m = TrafficModel(ib, ["congestion:gpu04", "lossless-drop:ib-spine2:1/3"], seed=1, t0=T0)
    ticks = 200e9 / 64
    for nic in ("mlx5_0", "mlx5_3"):
        leaf = ib.neighbours[("gpu04", nic)]
        assert rate(m, *leaf, "PortXmitWait", T0, T0 + 10) > 0.15 * ticks
        assert "ecn_marked.3" not in m.port_counters(*leaf, T0)
    assert rate(m, "ib-spine2", "1/3", "PortXmitDiscards", T0, T0 + 10) > 100


def test_watermarks_are_switch_gauges_of_the_busy_queues(roce: Fabric, ib: Fabric) -> None:
    """The watermark contract (#15): switch ports carry the three gauges; hosts and IB none."""
    m = TrafficModel(roce, seed=1, t0=T0)
    pairs = [(d, p) for d in roce.devices for p in m.ports(d)]
    switch_ports = [(d, p) for d, p in pairs if m.watermarks(d, p, T0 + 5)]
    host_ports = [(d, p) for d, p in pairs if not m.watermarks(d, p, T0 + 5)]
    assert switch_ports and host_ports
    wm = m.watermarks(*switch_ports[0], T0 + 5)
    assert set(wm) == {f"{n}.{q}" for n in ("queue_watermark_bytes", "pg_shared_watermark_bytes",
                                             "pg_headroom_watermark_bytes") for q in range(8)}
    assert wm[f"queue_watermark_bytes.{P}"] >= 2 * 4166 and wm["queue_watermark_bytes.5"] == 0
    assert all(v >= 0 for v in wm.values())
    mi = TrafficModel(ib, seed=1, t0=T0)
    assert all(not mi.watermarks(d, p, T0 + 5) for d in ib.devices for p in mi.ports(d))


def test_microburst_watermarks_peak_while_the_rate_stays_low(roce: Fabric) -> None:
    """Incast of 8 into leaf-r1:Ethernet0 from +5 s: its lossless queue peaks at 7 x 128 KiB (the
    per-period jitter keeps it within 92-100 %) from the onset's read period on; the feeding PGs share
    it; the port's mean rate falls to 20 % of line rate; deterministic in (t, seed)."""
    key = ("leaf-r1", "Ethernet0")
    m = TrafficModel(roce, ["microburst:leaf-r1:Ethernet0@5"], seed=3, t0=T0)
    before = m.watermarks(*key, T0 + 4)  # onset at +5 falls in the next read period (T0 is a multiple of 10)
    assert before[f"queue_watermark_bytes.{P}"] < 10 * 4166
    peak = 7 * 128 * 1024
    for t in (T0 + 15, T0 + 25, T0 + 95):
        q = m.watermarks(*key, t)[f"queue_watermark_bytes.{P}"]
        assert 0.92 * peak <= q <= peak, (t, q)
        assert q == TrafficModel(roce, ["microburst:leaf-r1:Ethernet0@5"], seed=3, t0=T0).watermarks(*key, t)[
            f"queue_watermark_bytes.{P}"]
    shared = [m.watermarks("leaf-r1", p, T0 + 25)[f"pg_shared_watermark_bytes.{P}"]
              for p in m.ports("leaf-r1") if p != key[1]]
    fed = [v for v in shared if v > 10 * 4166]
    assert len(fed) == 8 and 0.9 * peak / 8 <= min(fed) and max(fed) <= peak / 8
    util = rate(m, *key, "if_out_octets", T0 + 10, T0 + 20) * 8 / 400e9
    assert 0.15 < util < 0.25, util
    marks = rate(m, *key, f"ecn_marked.{P}", T0 + 10, T0 + 20)
    pkts = rate(m, *key, f"tc_tx_pkts.{P}", T0 + 10, T0 + 20)
    assert 0 < marks / pkts < 0.01


def test_ecn_misconfig_stops_marking_and_queues_pass_kmax(roce: Fabric) -> None:
    m = TrafficModel(roce, ["ecn-misconfig:leaf-r0@10"], seed=0, t0=T0)
    host_port = m.fabric.neighbours[("gpu01", "mlx5_0")]
    assert host_port[0] == "leaf-r0"
    assert rate(m, *host_port, f"ecn_marked.{P}", T0, T0 + 10) > 0  # background marks before
    assert rate(m, *host_port, f"ecn_marked.{P}", T0 + 10, T0 + 20) == 0
    assert rate(m, "gpu01", "mlx5_0", "np_ecn_marked_roce_packets", T0 + 10, T0 + 20) == 0
    assert all(m.watermarks("leaf-r0", p, T0 + 25)[f"queue_watermark_bytes.{P}"] > 1_500_000
               for p in m.ports("leaf-r0"))
    m.clear(T0 + 30)
    assert rate(m, *host_port, f"ecn_marked.{P}", T0 + 30, T0 + 40) > 0
    assert m.watermarks("leaf-r0", host_port[1], T0 + 45)[f"queue_watermark_bytes.{P}"] < 10 * 4166
