"""What the calibrated model says about the seed's scale bands (issue 18), stated per GPU count.

The seed's acceptance line is "<=128: RoCE sufficient/tie; 128-512: both viable; 512+: IB preferred
for 100B-class training unless the user says RoCE is tuned". These tests pin what the model
computes, not what the seed says: the 100B dense workload on H100 (TP8 PP8, 4M-token batch),
swept over the seed's scales, with ties decided by the calibration's paired error bar (±1.0 pts).
Where the model and the seed disagree the test says so; docs/advise.md "Decision needed" explains
why and what would have to be true for the seed band to hold.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest
from typer.testing import Result

from fabriccfg.advise import calibration as cal
from fabriccfg.advise import ecmp
from fabriccfg.advise import model as m
from fabriccfg.advise import sources as src

W100B = m.Workload(params=100e9, tokens=2e12, gpus=64, gpu="h100", tp=8, pp=8)
SCALES = [64, 128, 256, 512, 1024, 2048, 4096, 8192]
SHARP = "ib-hdr-sharp"
TIE = "tie"

# Outcome per GPU count: the winner when it leads by more than the paired bar, else "tie".
UNTUNED = {64: TIE, 128: TIE, 256: TIE, 512: TIE, 1024: TIE, 2048: SHARP, 4096: SHARP, 8192: SHARP}
TUNED = {64: TIE, 128: TIE, 256: TIE, 512: TIE, 1024: TIE, 2048: TIE, 4096: TIE, 8192: SHARP}
# untuned RoCE, ECMP slowdown derived for scattered nodes (advise/ecmp.py) instead of p = 1e-4
SCATTERED = {64: TIE, 128: TIE, 256: TIE, 512: TIE, 1024: SHARP, 2048: SHARP, 4096: SHARP, 8192: SHARP}


def _rows(tuning: str = "untuned", placement: str | None = None, **roce: float) -> list[m.SweepRow]:
    fabrics = []
    for name in src.DEFAULT_FABRICS:
        prof = m.with_placement(src.with_roce_tuning(src.FABRICS[name], tuning), placement)
        if roce and prof.family == "roce":
            prof = prof.with_values("test", **roce)
        fabrics.append(prof)
    return m.sweep(W100B, fabrics, SCALES, paired_pts=cal.paired_spread().pts)


def _outcome(rows: list[m.SweepRow]) -> dict[int, str]:
    return {r.gpus: TIE if r.tie else r.winner for r in rows}


def _gap(rows: list[m.SweepRow], gpus: int) -> float:
    return next(r.gap_pts for r in rows if r.gpus == gpus)


def _mfu(row: m.SweepRow, fabric: str) -> float:
    return next(e.mfu for e in row.estimates if e.fabric == fabric)


def test_the_paired_bar_decides_every_row() -> None:
    paired = cal.paired_spread().pts
    assert paired == 1.0
    for r in _rows():
        assert r.paired_pts == paired
        assert r.tie == (m.is_tie(r.margin) or r.gap_pts <= paired)


def test_untuned_roce_by_gpu_count() -> None:
    rows = _rows()
    assert _outcome(rows) == UNTUNED
    # <=128 and 128-512 hold as the seed says: nothing separates the fabrics
    assert all(r.gap_pts < 0.25 for r in rows if r.gpus <= 512)
    # 512+: IB+SHARP leads at every scale and the lead grows, but at 1,024 it is 0.55 pts, inside
    # the paired bar: the seed's "IB preferred" starts at 2,048 in this model, not above 512
    big = [r for r in rows if r.band == "512+"]
    assert all(r.winner == SHARP for r in big)
    assert [round(r.gap_pts, 1) for r in big] == [0.6, 1.9, 4.3, 7.8]
    assert m.band_summary(rows)["512+"].startswith(SHARP)


def test_seed_512_line_does_not_hold_literally_at_1024() -> None:
    """The first scale of the 512+ band is a tie under every RoCE assumption the defaults offer."""
    for tuning in src.ROCE_TUNINGS:
        row = next(r for r in _rows(tuning) if r.gpus == 1024)
        assert row.tie, tuning


def test_tuned_roce_by_gpu_count() -> None:
    """Tuned RoCE ties IB+SHARP to 4,096; at 8,192 SHARP's halved all-reduce bytes leave 1.1 pts."""
    untuned, tuned = _rows(), _rows("tuned")
    assert _outcome(tuned) == TUNED
    assert 1.0 < _gap(tuned, 8192) < 1.3
    last = tuned[-1]
    ib = next(e for e in last.estimates if e.fabric == SHARP)
    ro = next(e for e in last.estimates if e.fabric == "roce-400g")
    assert ro.dp_exposed - ib.dp_exposed > abs(ro.straggler - ib.straggler)  # bytes, not the tail
    for a, b in zip(untuned, tuned, strict=True):
        assert _mfu(a, SHARP) == _mfu(b, SHARP)  # the input only touches RoCE profiles
        assert _mfu(b, "roce-400g") >= _mfu(a, "roce-400g")


def test_derived_ecmp_brackets_the_seed_band() -> None:
    """Placement decides (advise/ecmp.py).

    Scattered nodes reproduce the seed band literally (tie to 512, IB+SHARP from 1,024). Consecutive
    nodes from an unaligned start land where the assumed default term does, up to 2,048. Leaf-aligned
    nodes put 1,024 deeper into the tie and 2,048 on the bar itself.
    """
    default, scattered = _rows(), _rows(placement="random")
    contiguous, aligned = _rows(placement="contiguous"), _rows(placement="aligned")
    assert _outcome(scattered) == SCATTERED
    assert _gap(scattered, 1024) > 1.5
    assert _outcome(contiguous) == UNTUNED
    for n in (512, 1024, 2048):  # the assumed p = 1e-4 term, corroborated where the band is decided
        assert abs(_gap(contiguous, n) - _gap(default, n)) < 0.1, n
    assert _gap(contiguous, 8192) < _gap(default, 8192) - 2  # ... and too pessimistic beyond
    assert _outcome(aligned)[1024] == TIE and _gap(aligned, 1024) < _gap(default, 1024)
    assert 0.9 < _gap(aligned, 2048) < 1.2  # on the ±1.0 bar: the model cannot call it
    assert ecmp.derive(1024).slowdown == 1.0
    assert 1.05 < ecmp.derive(1024, placement="contiguous").slowdown < 1.1
    assert 3.0 < ecmp.derive(1024, placement="random").slowdown < 4.0


def _sharp_wins(gpus: int, slowdown: float) -> bool:
    rows = _rows(ecmp_collision_p=1.0, ecmp_slowdown=slowdown)
    row = next(r for r in rows if r.gpus == gpus)
    return not row.tie and row.winner == SHARP


def test_ecmp_slowdown_the_seed_band_needs() -> None:
    """What would have to be true: untuned RoCE's collectives at least ~1.27x slower at 1,024.

    Meta (engineering.fb.com 2024-08-05) reports "up to 40%" better AllReduce from E-ECMP + QP
    scaling: 1.27x lies inside that. At 512 no RoCE slowdown can make IB+SHARP a win, because
    HDR without SHARP stays within the bar of it (the seed's "128-512: both viable" holds).
    """
    assert not _sharp_wins(1024, 1.2)
    assert _sharp_wins(1024, 1.3)
    assert not _sharp_wins(512, 3.0)
    assert next(r for r in _rows(ecmp_collision_p=1.0, ecmp_slowdown=3.0) if r.gpus == 512).tie


def test_jitter_the_seed_band_needs_at_1024() -> None:
    """Alone, RoCE's per-rank jitter would have to exceed about 0.137 (IB 0.05, untuned 0.10)."""

    def tied(cv: float) -> bool:
        return next(r for r in _rows(jitter_cv=cv) if r.gpus == 1024).tie

    assert tied(0.10) and tied(0.12)
    assert not tied(0.15)


def test_ib_profiles_never_see_the_placement() -> None:
    ib = src.FABRICS[SHARP]
    assert m.with_placement(ib, "random") is ib
    w = replace(W100B, gpus=1024)
    assert m.estimate(w, m.with_placement(ib, "random")).mfu == m.estimate(w, ib).mfu


def test_cli_roce_placement(cli: Callable[..., Result]) -> None:
    base = ("--params", "100B", "--tokens", "2T", "--gpu", "h100", "--sweep", "512,1024")
    r = cli(*base, "--roce-placement", "random", "--format", "json")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert doc["roce_placement"] == "random"
    rows = {row["gpus"]: row for row in doc["sweep"]}
    assert rows[1024]["winner"] == SHARP and not rows[1024]["tie"] and rows[512]["tie"]
    plain = json.loads(cli(*base, "--format", "json").stdout)
    assert plain["roce_placement"] is None and next(x for x in plain["sweep"] if x["gpus"] == 1024)["tie"]
    text = cli(*base, "--roce-placement", "contiguous")
    assert text.exit_code == 0 and "ECMP derived for contiguous placement" in text.stdout
    explained = json.loads(cli(*base, "--roce-placement", "random", "--explain", "--format", "json").stdout)
    row = next(a for a in explained["assumptions"] if a["name"] == "ecmp (derived)")
    assert row["value"] == pytest.approx(ecmp.derive(1024, placement="random").slowdown, abs=1e-4)
    assert "48 flows from 24 crossing NICs" in row["source"]


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        (("--roce-placement", "scattered"), "--roce-placement must be one of aligned, contiguous, random"),
        (("--roce-placement", "random", "--roce-tuning", "tuned"), "tuned RoCE has none"),
        (("--roce-placement", "random", "--tp", "4", "--pp", "16"), "assumes tp = GPUs per node"),
    ],
)
def test_cli_roce_placement_errors_are_one_line(
    cli: Callable[..., Result], extra: tuple[str, ...], needle: str
) -> None:
    r = cli("--params", "100B", "--tokens", "2T", "--gpus", "1024", *extra)
    assert r.exit_code == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert "Traceback" not in r.output
