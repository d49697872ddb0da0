"""#15 micro-bursts: the watermark checks (microburst, headroom-near-full, hol-blocking, ecn-threshold).

Three layers: the checks' thresholds on hand-built samples (numbers worked out here from the inventory
and the mlx5 headroom formula, not from the code under test); every scenario through the real traffic
model (fast, no sockets); and end to end through ``verify`` against the mock fabric's SSH/SNMP servers,
SONiC and Cumulus switches, one fresh mock per scenario (a watermark is the peak of its read period, so
a scenario cleared a moment ago still shows in the same period, as on a real switch until it is cleared).
"""

from __future__ import annotations

import math

import pytest

from fabriccfg.mock.fabric import MockFabric
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.render.roce import roce_switch_context
from fabriccfg.targets import load_endpoints
from fabriccfg.telemetry.model import Sample, Snapshot, labels
from fabriccfg.verify import runner
from fabriccfg.verify.engine import Check, Context, Report, evaluate

from .model_snapshot import snapshot

WM_CHECKS = ("microburst", "headroom-near-full", "hol-blocking", "ecn-threshold")
DEV, PORT, P = "leaf-r1", "Ethernet0", 3
KMIN, KMAX = 150_000, 1_500_000  # roce-lab.yaml roce.ecn
LINK_BPS = 400e9
PAUSE_S = 65535 * 512 / LINK_BPS  # one maximal pause frame at 400G (IEEE 802.1Qbb quanta = 512 bit times)
T0 = 1_700_000_000.0


def mlx5_headroom(speed_gbps: float, cable_m: float, mtu: int) -> int:
    """The mlx5 driver's xoff (drivers/net/ethernet/mellanox/mlx5/core/en/port_buffer.c), written out."""
    return math.ceil((301 + 2.16 * cable_m) * max(speed_gbps, 40) + 2.72 * mtu)


HEADROOM = mlx5_headroom(400, 3.0, 9216)  # leaf-r1:Ethernet0 <-> gpu01:mlx5_1, 3 m, switch MTU 9216


@pytest.fixture(scope="module")
def wm_checks(checks) -> list[Check]:
    return [c for c in checks if c.id in WM_CHECKS]


def hand_built(roce, checks, *, queue=20_000, shared=10_000, headroom=0, util=0.2, rx_pause=0.0,
               tx_pause=0.0, marks=20.0) -> Report:
    """Two snapshots 10 s apart of one SONiC-like port: counters growing at the given rates, gauges."""
    snaps = []
    for i, t in enumerate((T0, T0 + 10.0)):
        snap = Snapshot(ts=t)

        def c(metric: str, rate: float, lbl: tuple = (), kind: str = "counter64", i: int = i) -> None:
            snap.add(Sample(DEV, PORT, metric, lbl, int(1_000_000 + rate * 10 * i), kind))

        c("if_out_octets", util * LINK_BPS / 8)
        c("if_out_ucast_pkts", util * LINK_BPS / 8 / 4166)
        c("tc_tx_pkts", 0.9 * util * LINK_BPS / 8 / 4166, labels(tc=P))
        c("ecn_marked", marks, labels(tc=P))
        c("pfc_rx_pause", rx_pause, labels(prio=P))
        c("pfc_tx_pause", tx_pause, labels(prio=P))
        snap.add(Sample(DEV, PORT, "queue_watermark_bytes", labels(tc=P), queue, "gauge"))
        snap.add(Sample(DEV, PORT, "pg_shared_watermark_bytes", labels(prio=P), shared, "gauge"))
        snap.add(Sample(DEV, PORT, "pg_headroom_watermark_bytes", labels(prio=P), headroom, "gauge"))
        snaps.append(snap)
    return evaluate(checks, Context(roce, snaps))


def levels(report: Report) -> dict[str, str]:
    out = {f.check: f.severity for f in report.findings}
    assert all((f.device, f.port, f.priority) == (DEV, PORT, P) for f in report.findings), report.findings
    return out


def test_thresholds_come_from_the_rendered_derivation(roce) -> None:
    ctx = Context(roce, [Snapshot(ts=T0)])
    thr = ctx.buffer_thresholds(DEV, PORT)
    assert thr is not None and (thr.kmin_bytes, thr.kmax_bytes, thr.headroom_bytes) == (KMIN, KMAX, HEADROOM)
    assert HEADROOM == 148_060
    assert ctx.buffer_thresholds("gpu01", "mlx5_1") is None


def test_the_checks_read_what_the_render_writes(roce) -> None:
    """Every switch port: the check's Kmin/Kmax/headroom are the render context's (one derivation)."""
    ctx = Context(roce, [Snapshot(ts=T0)])
    for sw in roce.switches:
        render = roce_switch_context(roce, sw)
        for p in render["ports"]:
            thr = ctx.buffer_thresholds(sw.name, p.name)
            assert thr is not None and thr.headroom_bytes == p.headroom_bytes, (sw.name, p.name)
            assert (thr.kmin_bytes, thr.kmax_bytes) == (render["ecn"].kmin_bytes, render["ecn"].kmax_bytes)


def test_healthy_port_is_clean(roce, wm_checks) -> None:
    assert levels(hand_built(roce, wm_checks)) == {}


@pytest.mark.parametrize(("queue", "util", "rx_pause", "marks", "expected"), [
    (0.6 * KMAX, 0.2, 0.0, 20.0, "warning"),
    (0.49 * KMAX, 0.2, 0.0, 20.0, None),                  # below half of Kmax
    (0.95 * KMAX, 0.2, 0.0, 20.0, "critical"),
    (0.6 * KMAX, 0.7, 0.0, 20.0, None),                   # busy port: the rate explains the queue
    (0.95 * KMAX, 0.2, 0.05 / PAUSE_S, 20.0, None),       # paused 5 % of the time: not a burst
    (1.2 * KMAX, 0.2, 0.0, 0.0, None),                    # above Kmax, no marks: ecn-threshold's
    (1.2 * KMAX, 0.2, 0.0, 20.0, "critical"),             # above Kmax while marking: a big burst
])
def test_microburst_thresholds(roce, wm_checks, queue, util, rx_pause, marks, expected) -> None:
    got = levels(hand_built(roce, wm_checks, queue=int(queue), util=util, rx_pause=rx_pause, marks=marks))
    assert got.get("microburst") == expected, got


@pytest.mark.parametrize(("used", "expected"), [
    (0.79, None), (0.81, "warning"), (0.94, "warning"), (0.96, "critical")])
def test_headroom_near_full_thresholds(roce, wm_checks, used, expected) -> None:
    got = levels(hand_built(roce, wm_checks, headroom=int(used * HEADROOM)))
    assert got.get("headroom-near-full") == expected, got


@pytest.mark.parametrize(("share", "queue", "expected"), [
    (0.2, 20_000, "warning"),         # pauses its peer 20 % of the time, own queue near empty: a victim
    (0.6, 20_000, "critical"),
    (0.04, 20_000, None),             # a few pauses are normal
    (0.2, 0.6 * KMIN, None),          # its own egress is congested: it is not only passing a pause on
])
def test_hol_blocking_thresholds(roce, wm_checks, share, queue, expected) -> None:
    got = levels(hand_built(roce, wm_checks, tx_pause=share / PAUSE_S, queue=int(queue)))
    assert got.get("hol-blocking") == expected, got


@pytest.mark.parametrize(("queue", "marks", "util", "rx_pause", "expected"), [
    (1.3 * KMAX, 0.0, 0.6, 0.0, "warning"),      # above Kmax and nothing marked: thresholds above intent
    (1.3 * KMAX, 500.0, 0.6, 0.0, None),         # marking as it should
    (0.9 * KMAX, 0.0, 0.6, 0.0, None),           # below Kmax: no marks needed
    (1.3 * KMAX, 0.0, 0.6, 0.05 / PAUSE_S, None),  # paused: the queue cannot drain whatever ECN does
    (20_000, 0.02 * 0.9 * 0.6 * LINK_BPS / 8 / 4166, 0.6, 0.0, "warning"),  # 2 % marked, queue < Kmin/2
    (20_000, 0.005 * 0.9 * 0.6 * LINK_BPS / 8 / 4166, 0.6, 0.0, None),     # 0.5 %: under the 1 % bar
])
def test_ecn_threshold_thresholds(roce, wm_checks, queue, marks, util, rx_pause, expected) -> None:
    got = levels(hand_built(roce, wm_checks, queue=int(queue), marks=marks, util=util, rx_pause=rx_pause))
    assert got.get("ecn-threshold") == expected, got


# --------------------------------------------------------------------------- the traffic model
TIMES = (20.0, 22.0, 24.0)


def model_verify(fabric, checks, scenarios) -> Report:
    model = TrafficModel(fabric, scenarios, seed=0, t0=T0)
    return evaluate(checks, Context(fabric, [snapshot(model, T0 + t) for t in TIMES]))


def wm_found(report: Report) -> set[tuple[str, str | None, str | None, int | None]]:
    return {(f.check, f.device, f.port, f.priority) for f in report.findings if f.check in WM_CHECKS}


@pytest.mark.parametrize("target", ["leaf-r1:Ethernet0", "leaf-r0:swp3", "spine2:Ethernet8", "leaf-r0:swp25"])
def test_model_microburst_only_at_its_port(roce, checks, target) -> None:
    report = model_verify(roce, checks, [f"microburst:{target}"])
    dev, port = target.split(":")
    assert wm_found(report) == {("microburst", dev, port, P)}, [f.to_dict() for f in report.findings]
    assert {f.check for f in report.findings} == {"microburst"}


def test_model_microburst_senders_set_the_peak(roce, checks) -> None:
    few = model_verify(roce, checks, ["microburst:leaf-r1:Ethernet0:4"])    # 3 x 128 KiB = 26 % of Kmax
    many = model_verify(roce, checks, ["microburst:leaf-r1:Ethernet0:32"])  # capped at 95 % of Kmax
    assert wm_found(few) == set()
    assert [f.severity for f in many.findings] == ["critical"]


def test_model_pause_storm_headroom_and_hol_on_the_pausing_ports(roce, checks) -> None:
    report = model_verify(roce, checks, ["pause-storm:gpu05"])
    nb = roce.neighbours
    leaf = nb[("gpu05", "mlx5_0")][0]
    spines = {d for d, s in roce.devices.items() if s.kind == "switch" and s.role == "spine"}
    # the storm's leaf pauses the spines on its uplinks; the spines pause every other leaf
    pausing = {(leaf, p) for (d, p), (pd, _) in nb.items() if d == leaf and pd in spines}
    pausing |= {(d, p) for (d, p), (pd, _) in nb.items() if d in spines and pd != leaf
                and roce.devices[pd].kind == "switch"}
    found = wm_found(report)
    assert {(d, p) for c, d, p, _ in found if c == "headroom-near-full"} == pausing
    assert {(d, p) for c, d, p, _ in found if c == "hol-blocking"} == pausing
    assert not {c for c, *_ in found} & {"microburst", "ecn-threshold"}
    assert "pfc-storm-origin" in {f.check for f in report.findings}


def test_model_ecn_misconfig_names_the_switch_ports(roce, checks) -> None:
    report = model_verify(roce, checks, ["ecn-misconfig:leaf-r1"])
    cabled = {p for d, p in roce.neighbours if d == "leaf-r1"}
    assert wm_found(report) == {("ecn-threshold", "leaf-r1", p, P) for p in cabled}
    assert {f.check for f in report.findings} == {"ecn-threshold"}


def test_model_congestion_raises_no_watermark_finding(roce, checks) -> None:
    assert wm_found(model_verify(roce, checks, ["congestion:gpu04"])) == set()


# --------------------------------------------------------------------------- end to end
def live(fabric, tmp_path, checks, scenario: str | None, samples: int = 2) -> Report:
    with MockFabric(fabric, scenarios=[scenario] if scenario else [], workdir=tmp_path / "mock") as mock:
        eps = load_endpoints(mock.endpoints_file)
        return runner.verify(fabric, eps, checks, runner.default_collector(), samples=samples, interval=1.0)


@pytest.mark.timeout(120)
@pytest.mark.parametrize("target", ["leaf-r1:Ethernet0", "leaf-r0:swp3", "leaf-r2:Ethernet1/1"],
                         ids=["sonic", "cumulus", "eos-lanz"])
def test_live_microburst(roce, tmp_path, checks, target) -> None:
    live_checks = [c for c in checks if c.id != "config-drift"]
    report = live(roce, tmp_path, live_checks, f"microburst:{target}")
    dev, port = target.split(":")
    got = [(f.check, f.device, f.port, f.priority) for f in report.findings]
    assert got == [("microburst", dev, port, P)]
    assert report.exit_code == 1


@pytest.mark.timeout(120)
def test_live_ecn_misconfig(roce, tmp_path, checks) -> None:
    live_checks = [c for c in checks if c.id != "config-drift"]
    report = live(roce, tmp_path, live_checks, "ecn-misconfig:leaf-r1", samples=3)
    cabled = {p for d, p in roce.neighbours if d == "leaf-r1"}
    assert {(f.check, f.device, f.port) for f in report.findings} == {
        ("ecn-threshold", "leaf-r1", p) for p in cabled}
    assert report.exit_code == 1


@pytest.mark.timeout(120)
def test_live_pause_storm_headroom_and_hol(roce, tmp_path, checks) -> None:
    live_checks = [c for c in checks if c.id != "config-drift"]
    # three samples: ecn-threshold wants two points, so a spine->leaf hop starting between the pause
    # counters' read and the watermark's read (SNMP and CLI are separate requests) cannot pass for it
    report = live(roce, tmp_path, live_checks, "pause-storm:gpu05", samples=3)
    uplinks = {p for (d, p), (pd, _) in roce.neighbours.items() if d == "leaf-r0" and pd.startswith("spine")}
    found = {(f.check, f.device, f.port) for f in report.findings}
    # leaf-r0 pauses the spines from +1.5 s (HOP_DELAY); the spines pause the other leaves from +3 s
    assert {("headroom-near-full", "leaf-r0", p) for p in uplinks} <= found
    assert {("hol-blocking", "leaf-r0", p) for p in uplinks} <= found
    assert not {c for c, *_ in found} & {"microburst", "ecn-threshold"}
    assert report.exit_code == 2
