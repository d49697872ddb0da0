"""PFC pause-storm detection and origin tracing over the intended topology."""

from __future__ import annotations

from fabriccfg.telemetry.model import Sample
from fabriccfg.verify.engine import Context, evaluate
from fabriccfg.verify.storm import paused_ports, trace

from .conftest import run
from .synth import Synth


def test_storm_origin_and_hop_by_hop_path(roce, checks):
    s = Synth(roce)
    hops = s.pause_storm("gpu03", "mlx5_0", since=5.0, hop_s=1.5)
    assert hops[0] == [("leaf-r0", "swp3")]
    report = run(s, checks, times=(4.0, 9.0, 10.0, 11.0))
    origin = [f for f in report.findings if f.check == "pfc-storm-origin"]
    assert len(origin) == 1, [f.to_dict() for f in origin]
    f = origin[0]
    assert f.origin == "gpu03:mlx5_0" and (f.device, f.port) == ("gpu03", "mlx5_0")
    assert f.severity == "critical" and f.priority == 3
    # hop by hop: NIC -> leaf port it pauses -> a paused leaf uplink's spine -> another leaf -> its host
    assert f.path[:2] == ["gpu03:mlx5_0", "leaf-r0:swp3"]
    devs = f.details["hops"]
    assert devs[0] == "gpu03" and devs[1] == "leaf-r0" and devs[2] in ("spine1", "spine2")
    assert devs[3].startswith("leaf-r") and devs[3] != "leaf-r0" and devs[4].startswith("gpu")
    for a, b in zip(f.path[1::2], f.path[2::2], strict=False):  # consecutive ends on the same device
        assert a.split(":")[0] == b.split(":")[0]
    for a, b in zip(f.path[0::2], f.path[1::2], strict=False):  # each hop is a cabled link
        da, pa = a.split(":")
        assert roce.neighbours[(da, pa)] == tuple(b.split(":"))
    assert "gpu03:mlx5_0" in f.message and "->" in f.message
    storm = [x for x in report.findings if x.check == "pfc-pause-storm"]
    assert ("leaf-r0", "swp3") in {(x.device, x.port) for x in storm}


def test_first_hop_only_still_names_origin(roce, checks):
    s = Synth(roce)
    s.pause_storm("gpu06", "mlx5_2", since=5.0, hop_s=100.0)
    report = run(s, checks, times=(4.0, 6.0, 7.0))
    f = next(f for f in report.findings if f.check == "pfc-storm-origin")
    assert f.origin == "gpu06:mlx5_2"
    assert f.path == ["gpu06:mlx5_2", "leaf-r2:Ethernet6/1"]


def test_origin_found_from_any_victim_with_equal_onsets(roce):
    s = Synth(roce)
    s.pause_storm("gpu05", "mlx5_3", since=0.0, hop_s=0.0)  # everything paused at once
    ctx = Context(roce, [s.snapshot(t) for t in (1.0, 2.0)])
    storms = trace(ctx, paused_ports(ctx, 0.5))
    assert [st.origin for st in storms] == ["gpu05:mlx5_3"]
    assert len(storms[0].affected) > 10


def test_congestion_pause_is_not_a_storm(roce, checks):
    s = Synth(roce)
    s.add_rate("gpu04", "mlx5_0", "pfc_rx_pause", 500, prio=3)
    s.add_rate("gpu04", "mlx5_0", "pfc_rx_pause_duration", 50_000, prio=3)
    report = run(s, checks)
    assert not {"pfc-pause-storm", "pfc-storm-origin"} & {f.check for f in report.findings}


def test_watchdog_fired(roce, checks):
    s = Synth(roce)
    s.add_rate("leaf-r1", "Ethernet0", "pfcwd_storm_detected", 0.5, prio=3)
    report = evaluate(
        [c for c in checks if c.id == "pfc-watchdog-fired"],
        Context(roce, [s.snapshot(t) for t in (10.0, 14.0)]),
    )
    f = report.findings[0]
    assert (f.check, f.device, f.port, f.severity, f.value) == (
        "pfc-watchdog-fired",
        "leaf-r1",
        "Ethernet0",
        "warning",
        2,
    )


def test_pause_loop_is_reported_as_loop(roce):
    s = Synth(roce)
    for dev, port in (
        ("leaf-r0", "swp29"),
        ("spine1", "swp2"),
        ("leaf-r1", "Ethernet232"),
        ("spine2", "Ethernet0"),
    ):
        s.add_rate(dev, port, "pfc_rx_pause_duration", 900_000, prio=3)
    ctx = Context(roce, [s.snapshot(t) for t in (1.0, 2.0)])
    storms = trace(ctx, paused_ports(ctx, 0.5))
    assert len(storms) == 1 and storms[0].origin_kind == "loop"
    assert storms[0].origin_port is None and storms[0].origin in ("leaf-r0", "spine1", "leaf-r1", "spine2")
    assert len(storms[0].affected) == 4


def _eos_port_totals(snap, device):
    """What an EOS switch reports over CLI: PFC frames per port, no priority, no pause duration."""
    totals: dict[tuple[str | None, str], int] = {}
    keep = []
    for s in snap.samples.get(device, []):
        if s.metric in ("pfc_rx_pause", "pfc_tx_pause"):
            totals[(s.port, s.metric)] = (totals.get((s.port, s.metric), 0) + int(s.value)) % (1 << 64)
        elif s.metric not in ("pfc_rx_pause_duration", "pfc_tx_pause_duration"):
            keep.append(s)
    keep += [Sample(device, port, metric, (), v, "counter64") for (port, metric), v in totals.items()]
    snap.samples[device] = keep
    return snap


def test_origin_traced_through_a_switch_with_port_total_pfc_counters(roce):
    """leaf-r2 is EOS, whose PFC counters are port totals without a priority (ANTA's test vectors)."""
    s = Synth(roce)
    s.pause_storm("gpu06", "mlx5_2", since=5.0, hop_s=1.0)
    snaps = [_eos_port_totals(s.snapshot(t), "leaf-r2") for t in (4.0, 7.0, 8.0, 9.0)]
    assert not any(x.label("prio") for x in snaps[-1].samples["leaf-r2"] if x.metric == "pfc_rx_pause")
    ctx = Context(roce, snaps)
    paused = paused_ports(ctx, 0.5)
    assert any(d == "leaf-r2" for d, _p in paused), sorted(paused)
    storms = trace(ctx, paused)
    assert [st.origin for st in storms] == ["gpu06:mlx5_2"]
    assert storms[0].path[:2] == ["gpu06:mlx5_2", "leaf-r2:Ethernet6/1"]
