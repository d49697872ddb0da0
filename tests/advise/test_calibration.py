"""The advisor against published training runs (issue 18).

The judge here is the published figure in ``fabriccfg/advise/calibration.yaml`` (paper, table and
evidence tag beside each), never the model itself: every entry must land inside its allowed error
with the run's own settings, the per-GPU base efficiencies must be what the fit entries give, held-out
entries must stay inside the band when fitted without them, and the seed's scale bands must still
come out of a sweep once the calibration spread decides what is a tie.
"""

from __future__ import annotations

import json
import math
import re
import shlex
from collections.abc import Callable
from dataclasses import replace

import pytest
from typer.testing import Result

from fabriccfg.advise import calibration as cal
from fabriccfg.advise import model as m
from fabriccfg.advise import sources as src

ENTRIES = cal.load()
ISSUE_RUNS = ("llama3-405b-8k", "llama3-405b-16k", "megatron-1t-3072")
# the issue's runs plus the one whose command carries a model knob (--set model.overlap_eff=0)
COMMAND_RUNS = (*ISSUE_RUNS, "megatron-sp-530b-2240")
Cli = Callable[..., Result]
# the seed's 100B dense workload on H100, swept over the seed's scales
W100B = m.Workload(params=100e9, tokens=2e12, gpus=64, gpu="h100", tp=8, pp=8)


@pytest.mark.parametrize("entry", ENTRIES, ids=[e.id for e in ENTRIES])
def test_every_published_run_within_its_band(entry: cal.Entry) -> None:
    r = cal.run(entry)
    assert r.within, (
        f"{entry.id}: published {entry.metric} {entry.published:.1%}, advisor {r.predicted:.1%} "
        f"({r.error_pts:+.1f} pts, allowed ±{entry.tolerance_pts:g}); reproduce: {entry.command()}"
    )


def test_issue_runs_within_three_points_with_published_settings() -> None:
    by_id = {e.id: e for e in ENTRIES}
    for name in ISSUE_RUNS:
        e = by_id[name]
        assert e.vpp is None  # the automatic schedule, not a tuned knob, reproduces them
        assert e.tolerance_pts <= 3
        assert abs(cal.run(e).error_pts) <= 3.0, name
    # the published settings are the paper's: Llama 3 Table 4 and Narayanan Table 1
    l16 = by_id["llama3-405b-16k"]
    assert (l16.gpus, l16.tp, l16.pp, l16.gpus // (l16.tp * l16.pp)) == (16384, 8, 16, 128)
    assert l16.global_batch * l16.seq_len == 2048 * 8192  # 16M tokens per batch
    t1 = by_id["megatron-1t-3072"]
    assert (t1.gpus, t1.tp, t1.pp, t1.global_batch, t1.hidden, t1.layers) == (3072, 8, 64, 3072, 25600, 128)


def test_default_interleaving_is_what_closes_the_llama_gap() -> None:
    """Issue 18 measured 23.4% at 16K with vpp=1; the automatic schedule is what fixes it."""
    e = next(x for x in ENTRIES if x.id == "llama3-405b-16k")
    flat = m.estimate(replace(e.workload(), vpp=1), e.profile())
    auto = cal.run(e)
    assert auto.estimate.vpp > 1
    assert auto.predicted - flat.mfu > 0.05


def test_base_efficiencies_are_the_fit_of_the_fit_entries() -> None:
    fitted = cal.refit(ENTRIES)
    assert fitted["a100"] == pytest.approx(src.A100_BASE_EFF.value, abs=1e-9)
    assert fitted["h100"] == pytest.approx(src.H100_BASE_EFF.value, abs=1e-9)
    assert src.GPUS["a100"].base_eff is src.A100_BASE_EFF
    assert src.GPUS["h100"].base_eff is src.H100_BASE_EFF


def test_held_out_runs_are_not_used_and_stay_in_band() -> None:
    fit_only = [e for e in ENTRIES if e.role == "fit"]
    assert cal.refit(fit_only) == cal.refit(ENTRIES)  # hold-outs do not move the fit
    held = cal.holdout_check(ENTRIES)
    assert {r.entry.id for r in held} >= {"llama3-405b-16k", "megatron-sp-530b-2240"}
    for r in held:
        assert r.within, (r.entry.id, r.error_pts)


def test_every_entry_carries_its_provenance() -> None:
    for e in ENTRIES:
        assert re.search(r"Table \d|abstract", e.source), e.id
        assert e.evidence[0] in "VSRCA", e.id
        assert e.hardware and e.network
        if e.role == "limit":
            assert e.why, e.id


def test_spread_is_the_largest_in_scope_error() -> None:
    bar = cal.spread()
    scoped = [r for r in cal.results() if r.entry.role != "limit"]
    assert bar.entries == len(scoped)
    assert all(abs(r.error_pts) <= bar.pts for r in scoped)
    assert bar.pts - max(abs(r.error_pts) for r in scoped) < 0.5
    assert bar.pts * 2 == int(bar.pts * 2)
    lo, hi = bar.step_range(10.0, 0.40)
    assert lo < 10.0 < hi
    assert hi == pytest.approx(10.0 * 0.40 / (0.40 - bar.pts / 100))


@pytest.mark.parametrize("name", COMMAND_RUNS)
def test_the_entry_command_reproduces_it(cli: Cli, name: str) -> None:
    """The command printed in docs/advise.md gives the same figure through the real CLI."""
    e = next(x for x in ENTRIES if x.id == name)
    args = shlex.split(e.command())
    assert args[:2] == ["fabriccfg", "advise"]
    r = cli(*args[2:], "--format", "json")
    assert r.exit_code == 0, r.output
    est = json.loads(r.stdout)["estimates"][0]
    assert est[e.metric] == pytest.approx(cal.run(e).predicted)
    assert abs(est[e.metric] - e.published) * 100 <= e.tolerance_pts


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("entries: [", "calibration.yaml:"),
        ("entries:\n  - id: x\n", "entries.0.title: Field required"),
        ("{}", "entries: Field required"),
    ],
)
def test_bad_calibration_file_is_one_line(text: str, needle: str) -> None:
    with pytest.raises(cal.CalibrationError, match=re.escape(needle)):
        cal.load(text)


def test_bad_entry_named_by_id() -> None:
    one = ENTRIES[0].model_dump()  # JSON is YAML: a small file built from a good entry
    doc = {"entries": [one, one]}
    with pytest.raises(cal.CalibrationError, match="duplicate entry id"):
        cal.load(json.dumps(doc))
    bad = {**one, "fabric": "roce-401g"}
    with pytest.raises(cal.CalibrationError, match=r"entry llama3-405b-8k: unknown fabric"):
        cal.load(json.dumps({"entries": [bad]}))
    bad = {**one, "pp": 7}
    with pytest.raises(cal.CalibrationError, match="not divisible"):
        cal.load(json.dumps({"entries": [bad]}))


# --------------------------------------------------------------------------------------------
# The paired error bar: what a difference between two fabrics on one workload is held against
# --------------------------------------------------------------------------------------------

# The papers' own numbers (not the YAML): Llama 3 Table 4 gives 43% at 8,192 and 41% at 16,384 GPUs
# with the same model, TP8 PP16 and 16M-token batch; Korthikanti et al. give 56.0% MFU for 530B on
# 280 GPUs (Table 5) and 54.2% on 2,240 (abstract), TP8 PP35 both.
PAPER_PAIRS = {
    ("llama3-405b-8k", "llama3-405b-16k"): 43.0 - 41.0,
    ("megatron-sp-530b-280", "megatron-sp-530b-2240"): 56.0 - 54.2,
}


def test_paired_error_derived_from_scale_pairs() -> None:
    """Recomputed here from the entries: pairs by hand, predictions straight from model.estimate."""
    by_id = {e.id: e for e in ENTRIES}
    same = ("gpu", "params", "layers", "hidden", "tp", "pp", "vpp", "seq_len", "micro_batch")
    same += ("recompute", "metric", "fabric", "roce_tuning")
    scoped = [e for e in ENTRIES if e.role != "limit"]
    found = {
        (a.id, b.id)
        for a in scoped
        for b in scoped
        if a.gpus < b.gpus and all(getattr(a, k) == getattr(b, k) for k in same)
    }
    assert found == set(PAPER_PAIRS)
    # megatron-sp-1t-512 (selective, MFU) and megatron-1t-3072 (full recompute, HFU) run different
    # compute, so their base-efficiency error does not cancel: not a pair
    assert ("megatron-sp-1t-512", "megatron-1t-3072") not in found

    # §6.3: "we do not use any overlapping of gradient all-reduces with back-propagation"
    assert not by_id["megatron-sp-530b-2240"].dp_overlap

    def predicted_pts(e: cal.Entry) -> float:
        knobs = m.Knobs() if e.dp_overlap else m.Knobs(overlap_eff=0.0)
        est = m.estimate(e.workload(), e.profile(), knobs)
        return (est.hfu if e.metric == "hfu" else est.mfu) * 100

    errors = {}
    for (small, large), drop in PAPER_PAIRS.items():
        a, b = by_id[small], by_id[large]
        assert (a.published - b.published) * 100 == pytest.approx(drop)  # the YAML matches the papers
        errors[small, large] = (predicted_pts(a) - predicted_pts(b)) - drop
    worst = max(errors, key=lambda k: abs(errors[k]))
    expected = max(0.5, math.ceil(abs(errors[worst]) * 2 - 1e-9) / 2)

    bar = cal.paired_spread()
    assert bar.pts == expected
    assert bar.entries == len(PAPER_PAIRS)
    assert bar.worst == f"{worst[0]} -> {worst[1]}"
    assert bar.pts < cal.spread().pts  # the compute error has cancelled
    for p in cal.pairs():
        assert p.error_pts == pytest.approx(-errors[p.small.entry.id, p.large.entry.id])


def test_without_pairs_the_paired_bar_falls_back_to_the_absolute_one() -> None:
    rows = tuple(r for r in cal.results() if r.entry.id not in {"llama3-405b-16k", "megatron-sp-530b-2240"})
    assert cal.pairs(rows) == []
    assert cal.paired_spread(rows) == cal.spread(rows)


def test_single_runs_cannot_bound_the_fabric_part() -> None:
    """error x phi is ~0 because no published run spends much of its step on the fabric.

    phi is recomputed here: 1 - (compute + bubble + NVLink TP + straggler of compute jitter alone)
    / step, the straggler part being cv_comp x T_comp x E[max of n N(0,1)].
    """
    for r in cal.results():
        est = r.estimate
        common_strag = src.COMPUTE_JITTER_CV.value * est.compute * m.expected_max_normal(est.gpus)
        phi = 1 - (est.compute + est.bubble + est.tp_comm + common_strag) / est.step
        assert r.fabric_share == pytest.approx(phi, abs=1e-9), r.entry.id
        if r.entry.role != "limit":
            assert r.fabric_share < 0.02, r.entry.id
            assert abs(r.fabric_pts) < 0.05, r.entry.id


def test_common_mode_time_is_shared_by_every_fabric() -> None:
    w = replace(W100B, gpus=2048)
    ests = [m.estimate(w, src.FABRICS[n]) for n in src.DEFAULT_FABRICS]
    assert len({round(e.common, 12) for e in ests}) == 1
    assert len({round(e.fabric_dependent, 6) for e in ests}) == len(ests)
    for e in ests:
        assert e.common + e.fabric_dependent == pytest.approx(e.step)


def test_decision_uses_the_paired_bar_not_the_absolute_one() -> None:
    """At 2,048 GPUs IB+SHARP leads untuned RoCE by 1.9 pts: inside ±3 (absolute), outside ±1 (paired)."""
    w = replace(W100B, gpus=2048)
    ests = [m.estimate(w, src.with_roce_tuning(src.FABRICS[n], "untuned")) for n in src.DEFAULT_FABRICS]
    paired, absolute = cal.paired_spread().pts, cal.spread().pts
    mfu = {e.fabric: e.mfu * 100 for e in ests}
    gap = mfu["ib-hdr-sharp"] - mfu["roce-400g"]
    assert paired < gap <= absolute
    winner, reasons = m.recommend(ests, paired)
    assert winner == "ib-hdr-sharp" and not m.tied_with(ests, paired)
    assert f"ahead by {gap:.1f} ± {paired:.1f} pts (paired)" in reasons[0]
    assert "roce-400g" in m.tied_with(ests, absolute)


# --------------------------------------------------------------------------------------------
# The seed's bands per GPU count, untuned and tuned: tests/advise/test_sweep_bands.py
# --------------------------------------------------------------------------------------------


def test_tuning_input_is_explicit_and_cited() -> None:
    roce = src.with_roce_tuning(src.FABRICS["roce-400g"], "tuned")
    assert roce.ecmp_collision_p is src.TUNED_ROCE_ECMP
    assert roce.jitter_cv.value == src.FABRICS["ib-hdr-sharp"].jitter_cv.value
    assert "40%" in src.TUNED_ROCE_ECMP.source
    assert "network bottlenecks" in src.TUNED_ROCE_JITTER.source
    assert src.with_roce_tuning(src.FABRICS["ib-hdr"], "tuned") is src.FABRICS["ib-hdr"]
    with pytest.raises(ValueError, match="roce tuning"):
        src.with_roce_tuning(roce, "perfect")
