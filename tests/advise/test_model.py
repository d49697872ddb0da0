"""Monotone behaviour, SHARP traffic, the sweep and the recommendation of the advise model."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fabriccfg.advise import model as m
from fabriccfg.advise import sources as src

W100B = m.Workload(params=100e9, tokens=2e12, gpus=1024, gpu="h100", tp=8, pp=8)
SCALES = [64, 128, 256, 512, 1024, 2048, 4096]


def fab(name: str) -> src.FabricProfile:
    return src.FABRICS[name]


def test_every_default_is_cited() -> None:
    for gpu in src.GPUS.values():
        for c in (gpu.peak_bf16, gpu.hbm, gpu.nvlink):
            assert c.source and c.tag in src.TAG_MEANING
    for f in src.FABRICS.values():
        for key in m.FABRIC_FIELDS:
            c = getattr(f, key)
            assert c is None or (c.source and c.tag in src.TAG_MEANING), (f.name, key)
    for name in dir(src):
        obj = getattr(src, name)
        if isinstance(obj, src.Cited):
            assert obj.source and obj.unit, name


def test_compute_time_matches_worked_example() -> None:
    # §7 assumes 55% of peak; since issue 18 the default is the GPU's calibrated value, so pass it
    e = m.estimate(replace(W100B, gpus=512, base_eff=0.55), fab("ib-hdr-sharp"))
    assert e.compute == pytest.approx(9.7, abs=0.1)  # §7: H100, n = 512, T_comp 9.7 s
    e = m.estimate(replace(W100B, gpus=4096, base_eff=0.55), fab("ib-hdr-sharp"))
    assert e.compute == pytest.approx(1.21, abs=0.02)


def test_sharp_halves_dp_traffic_per_nic() -> None:
    for n in (256, 1024, 4096):
        w = replace(W100B, gpus=n)
        sharp = m.estimate(w, fab("ib-hdr-sharp"))
        ring = m.estimate(w, fab("ib-hdr"))
        dp = n // 64
        assert sharp.dp_algo == "sharp"
        ratio = ring.dp_bytes_per_nic / sharp.dp_bytes_per_nic
        assert 2 * (dp - 1) / dp - 1e-9 <= ratio <= 2.0 + 1e-9
        assert sharp.dp_comm < ring.dp_comm


def test_sharp_on_hdr_close_to_roce_400_ring() -> None:
    """§1.4: 200G SHARP ~ 400G ring for the DP all-reduce at large N (bandwidth term)."""
    s = 6.25e9
    sharp = m.sharp_allreduce(s, 64, 0.0, 22.5e9)
    ring = m.ring_allreduce(s, 64, 0.0, 45e9)
    assert sharp == pytest.approx(ring, rel=0.02)


def test_more_jitter_lowers_mfu() -> None:
    base = fab("roce-400g")
    mfus = [m.estimate(W100B, base.with_values("test", jitter_cv=cv)).mfu for cv in (0.0, 0.05, 0.1, 0.3)]
    assert mfus == sorted(mfus, reverse=True)
    assert mfus[0] > mfus[-1]
    knobs = [m.Knobs(compute_jitter_cv=cv) for cv in (0.0, 0.01, 0.05)]
    mfus = [m.estimate(W100B, base, k).mfu for k in knobs]
    assert mfus == sorted(mfus, reverse=True)


def test_more_bandwidth_less_exposed_comm() -> None:
    for name in ("ib-hdr", "roce-400g", "ib-hdr-sharp"):
        base = fab(name)
        exposed = [
            m.estimate(replace(W100B, gpus=4096), base.with_values("test", nic_bw=bw)).fabric_exposed
            for bw in (12.5, 25, 50, 100)
        ]
        assert exposed == sorted(exposed, reverse=True), name
        assert exposed[0] > exposed[-1]


def test_pauses_and_ecmp_cost_time() -> None:
    roce = fab("roce-400g")
    clean = m.estimate(W100B, roce.with_values("t", ecmp_collision_p=0.0, pause_fraction=0.0))
    paused = m.estimate(W100B, roce.with_values("t", ecmp_collision_p=0.0, pause_fraction=0.05))
    hashed = m.estimate(W100B, roce.with_values("t", ecmp_collision_p=1e-3, pause_fraction=0.0))
    assert paused.step > clean.step
    assert hashed.dp_comm > clean.dp_comm


def test_straggler_uses_expected_max_not_sqrt_2ln() -> None:
    e = m.estimate(W100B, fab("roce-400g"))
    assert e.emax == pytest.approx(m.expected_max_normal(1024))
    assert e.straggler == pytest.approx(e.sigma_rank * e.emax)
    b = m.estimate(W100B, fab("roce-400g"), m.Knobs(straggler_method="blom"))
    assert b.emax == pytest.approx(m.blom_max_normal(1024))


def test_step_time_split_adds_up_and_mfu_cost_consistent() -> None:
    e = m.estimate(W100B, fab("ib-hdr-sharp"))
    parts = e.compute + e.bubble + e.exposed_comm + e.straggler + e.hiccup
    assert e.step == pytest.approx(parts)
    flops = 1024 * 4096 * m.flops_per_token(100e9, 80, 10240, 4096)
    assert e.mfu == pytest.approx(flops / (e.step * 1024 * 989e12))
    assert e.mfu < e.base_eff == src.GPUS["h100"].base_eff.value
    steps = 2e12 / (1024 * 4096)
    assert e.days == pytest.approx(steps * e.step / e.ettr / 86400)
    assert e.cost == pytest.approx(e.gpu_hours * 3.50)
    with_ports = m.estimate(W100B, fab("ib-hdr-sharp"), port_cost=0.5)
    assert with_ports.cost == pytest.approx(with_ports.gpu_hours * 3.50 + with_ports.gpu_hours * 0.5)


def test_no_price_means_no_cost_and_time_decides() -> None:
    w = replace(W100B, gpu="b200")
    ests = [m.estimate(w, fab(n)) for n in src.DEFAULT_FABRICS]
    assert all(e.cost is None for e in ests)
    winner, reasons = m.recommend(ests)
    assert winner == min(ests, key=lambda e: e.days).fabric
    assert "time to train" in reasons[0]


def test_ettr_near_llama3() -> None:
    e = m.estimate(replace(W100B, gpus=16384, global_batch=4096), fab("roce-400g"))
    assert 0.88 <= e.ettr <= 0.95  # Llama 3: > 90% effective training time at 16K


def test_moe_all_to_all_only_without_sharp_help() -> None:
    w = replace(W100B, params=400e9, moe_experts=16, gpus=1024)
    sharp = m.estimate(w, fab("ib-hdr-sharp"))
    roce = m.estimate(w, fab("roce-400g"))
    assert sharp.moe_exposed > 0 and roce.moe_exposed > 0
    assert roce.moe_exposed < sharp.moe_exposed  # 2x bandwidth, SHARP does not help all-to-all
    dense = m.estimate(replace(w, moe_experts=0), fab("roce-400g"))
    assert dense.moe_exposed == 0


def _winners(rows: list[m.SweepRow]) -> list[str]:
    return ["tie" if m.is_tie(r.margin) else r.winner for r in rows]


def test_sweep_100b_dense_shows_where_each_fabric_wins() -> None:
    fabrics = [fab(n) for n in src.DEFAULT_FABRICS]
    rows = m.sweep(W100B, fabrics, SCALES)
    assert [r.gpus for r in rows] == SCALES
    assert [r.band for r in rows] == ["<=128", "<=128", "128-512", "128-512", "512+", "512+", "512+"]
    # the decision is computed: the margin grows with scale (strong scaling, fixed global batch)
    margins = [r.margin for r in rows]
    assert margins[-1] > margins[0]
    # small scale: the fabric barely matters for a dense model with TP inside the node (§7 takeaway c)
    assert m.is_tie(rows[0].margin)
    # ib-hdr without SHARP never wins: HDR ring loses to both SHARP and 400G
    assert all(r.winner != "ib-hdr" for r in rows)
    summary = m.band_summary(rows)
    assert set(summary) == {"<=128", "128-512", "512+"}
    # under the default inputs, HDR + SHARP is ahead beyond the tie band at the largest scale
    assert rows[-1].winner == "ib-hdr-sharp" and not m.is_tie(rows[-1].margin)


def test_moe_across_nodes_favours_400g() -> None:
    """§8: HDR-200+SHARP vs RoCE-400 favours 400G for all-to-all, which SHARP does not help."""
    fabrics = [fab(n) for n in src.DEFAULT_FABRICS]
    rows = m.sweep(replace(W100B, params=400e9, moe_experts=16), fabrics, [256, 512, 1024])
    assert all(r.winner == "roce-400g" and not m.is_tie(r.margin) for r in rows)


def test_sweep_changes_when_an_input_changes() -> None:
    fabrics = [fab(n) for n in src.DEFAULT_FABRICS]
    base = _winners(m.sweep(W100B, fabrics, SCALES))
    # RoCE as quiet as IB (same jitter, no ECMP collisions) and bf16 gradients
    quiet = [
        f.with_values("t", jitter_cv=0.05, ecmp_collision_p=0.0) if f.family == "roce" else f for f in fabrics
    ]
    changed = _winners(m.sweep(replace(W100B, grad_bytes=2), quiet, SCALES))
    assert changed != base
    # with 400G SHARP in the race it wins the large scales
    ndr = _winners(m.sweep(W100B, [*fabrics, fab("ib-ndr-sharp")], SCALES))
    assert ndr[-1] == "ib-ndr-sharp"
    # the GPU changes the answer too: A100 has 3x longer compute, so communication hides better
    a100 = m.sweep(replace(W100B, gpu="a100"), fabrics, SCALES)
    h100 = m.sweep(W100B, fabrics, SCALES)
    assert a100[-1].margin < h100[-1].margin


def test_recommend_reasons_and_ties() -> None:
    ests = [m.estimate(replace(W100B, gpus=64), fab(n)) for n in src.DEFAULT_FABRICS]
    winner, reasons = m.recommend(ests)
    assert "tie" in reasons[0]
    assert set(m.tied_with(ests)) == set(src.DEFAULT_FABRICS) - {winner}
    ests = [m.estimate(replace(W100B, gpus=4096), fab(n)) for n in src.DEFAULT_FABRICS]
    winner, reasons = m.recommend(ests)
    assert winner in src.DEFAULT_FABRICS
    assert any(winner in r for r in reasons)
    assert any("vs ib-hdr:" in r or "vs roce-400g:" in r for r in reasons)


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"gpus": 1000}, "not divisible"),
        ({"gpu": "h1000"}, "did you mean 'h100'"),
        ({"gpus": 64 * 2048}, "global batch"),
        ({"params": -1.0}, "positive"),
        ({"base_eff": 1.5}, "base-eff"),
    ],
)
def test_validation_errors(kwargs: dict[str, object], needle: str) -> None:
    with pytest.raises(m.AdviseError, match=needle):
        m.validate(replace(W100B, **kwargs))  # type: ignore[arg-type]


def test_overrides() -> None:
    profiles, knobs = m.apply_overrides(
        [fab("roce-400g"), fab("ib-hdr")], m.Knobs(), ["roce.jitter_cv=0.2", "model.overlap_eff=0.5"]
    )
    assert profiles[0].jitter_cv.value == 0.2
    assert profiles[1].jitter_cv.value == fab("ib-hdr").jitter_cv.value
    assert knobs.overlap_eff == 0.5
    assert "jitter_cv" in profiles[0].overrides
    for bad in ("roce.nope=1", "model.nope=1", "roce.jitter_cv=x", "mars.jitter_cv=1"):
        with pytest.raises(m.AdviseError):
            m.apply_overrides([fab("roce-400g")], m.Knobs(), [bad])


def test_sharp_share_falls_back_to_ring_or_tree() -> None:
    w = replace(W100B, gpus=4096)
    full = m.estimate(w, fab("ib-hdr-sharp"))
    half = m.estimate(w, fab("ib-hdr-sharp").with_values("t", sharp_share=0.5))
    none = m.estimate(w, fab("ib-hdr"))
    assert full.dp_comm < half.dp_comm < none.dp_comm
    assert half.dp_algo.startswith("sharp 50%+")


@settings(max_examples=40, deadline=None)
@given(
    nodes64=st.sampled_from([1, 2, 4, 8, 16, 64]),
    params=st.sampled_from([30e9, 100e9, 300e9]),
    bw=st.floats(5.0, 100.0),
    cv=st.floats(0.0, 0.5),
    name=st.sampled_from(list(src.FABRICS)),
)
def test_monotone_properties(nodes64: int, params: float, bw: float, cv: float, name: str) -> None:
    w = replace(W100B, gpus=64 * nodes64, params=params)
    f = fab(name)
    slow = m.estimate(w, f.with_values("t", nic_bw=bw, jitter_cv=cv))
    fast = m.estimate(w, f.with_values("t", nic_bw=bw * 2, jitter_cv=cv))
    noisy = m.estimate(w, f.with_values("t", nic_bw=bw, jitter_cv=cv + 0.1))
    assert fast.fabric_exposed <= slow.fabric_exposed + 1e-12
    assert noisy.mfu <= slow.mfu + 1e-12
    assert 0 < slow.mfu < slow.base_eff


@settings(max_examples=60, deadline=None)
@given(
    gpus=st.integers(1, 20000),
    tp=st.sampled_from([1, 2, 4, 8, 16]),
    pp=st.sampled_from([1, 2, 4, 8, 16]),
    experts=st.sampled_from([0, 8, 64]),
    params=st.floats(1e9, 2e12),
    gpu=st.sampled_from(list(src.GPUS)),
    name=st.sampled_from(list(src.FABRICS)),
    batch=st.sampled_from([64, 1024, 8192]),
)
def test_any_input_gives_an_estimate_or_a_clear_error(
    gpus: int, tp: int, pp: int, experts: int, params: float, gpu: str, name: str, batch: int
) -> None:
    import math as _math

    w = m.Workload(
        params=params, tokens=1e12, gpus=gpus, gpu=gpu, tp=tp, pp=pp, moe_experts=experts, global_batch=batch
    )
    try:
        e = m.estimate(w, fab(name))
    except m.AdviseError:
        return
    for val in (e.step, e.mfu, e.days, e.gpu_hours, e.straggler):
        assert _math.isfinite(val) and val >= 0
    assert 0 < e.mfu <= e.base_eff + 1e-12
