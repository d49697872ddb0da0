"""Textbook values: busbw factors, expected maxima, FLOPs per token, alpha-beta costs."""

from __future__ import annotations

import math

import pytest

from fabriccfg.advise import model as m

# analytics.md §2.1 table: N, sqrt(2 ln N), exact E[max], Blom
SHEET_TABLE = [
    (64, 2.88, 2.34, 2.34),
    (512, 3.53, 3.04, 3.03),
    (1024, 3.72, 3.25, 3.23),
    (4096, 4.08, 3.63, 3.61),
    (16384, 4.41, 3.97, 3.96),
]


@pytest.mark.parametrize("n", [2, 3, 8, 16, 64, 512, 4096])
def test_busbw_factors(n: int) -> None:
    assert m.busbw_factor("allreduce", n) == pytest.approx(2 * (n - 1) / n)
    assert m.busbw_factor("reducescatter", n) == pytest.approx((n - 1) / n)
    assert m.busbw_factor("allgather", n) == pytest.approx((n - 1) / n)
    assert m.busbw_factor("alltoall", n) == pytest.approx((n - 1) / n)
    assert m.busbw_factor("allreduce-innetwork", n) == pytest.approx((n - 1) / (n + 1))
    assert m.busbw_factor("broadcast", n) == 1.0


def test_busbw_rejects_unknown() -> None:
    with pytest.raises(m.AdviseError):
        m.busbw_factor("scan", 4)


@pytest.mark.parametrize(("n", "bound", "exact", "blom"), SHEET_TABLE)
def test_expected_max_against_sheet(n: int, bound: float, exact: float, blom: float) -> None:
    e = m.expected_max_normal(n)
    # the sheet prints two decimals: the exact integral must round to it (within 1e-3 of the half-unit)
    assert abs(e - exact) <= 0.005 + 1e-3
    assert abs(m.blom_max_normal(n) - blom) <= 0.005 + 1e-3
    # Blom is within about 0.02 sigma of exact (§2.1)
    assert abs(m.blom_max_normal(n) - e) <= 0.02
    # sqrt(2 ln N) is the loose bound, 10-25% above for N = 64..16K
    assert math.sqrt(2 * math.log(n)) == pytest.approx(bound, abs=0.006)
    assert 1.10 <= math.sqrt(2 * math.log(n)) / e <= 1.25


def test_expected_max_known_values() -> None:
    assert m.expected_max_normal(1) == 0.0
    assert m.expected_max_normal(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-6)  # closed form
    assert m.expected_max_normal(100) == pytest.approx(2.5076, abs=1e-3)  # quantvault worked example [S]
    assert m.expected_max_normal(3) == pytest.approx(1.5 / math.sqrt(math.pi), abs=1e-6)  # closed form


def test_expected_max_is_increasing() -> None:
    vals = [m.expected_max_normal(n) for n in (2, 4, 16, 256, 4096, 65536)]
    assert vals == sorted(vals)


def test_flops_per_token_is_6n_plus_attention() -> None:
    assert m.flops_per_token(100e9, 80, 10240, 0) == pytest.approx(6 * 100e9)
    full = m.flops_per_token(100e9, 80, 10240, 4096)
    assert full - 6 * 100e9 == pytest.approx(12 * 80 * 10240 * 4096)
    assert full / (6 * 100e9) - 1 == pytest.approx(0.067, abs=0.001)  # "the attention term adds 6.7%" (§7)


def test_derived_shape_matches_worked_example() -> None:
    shape = m.derive_shape(m.Workload(params=100e9, tokens=2e12, gpus=512))
    assert (shape.layers, shape.hidden) == (80, 10240)


def test_ring_and_sharp_costs() -> None:
    s, bw = 3.125e9, 22.5e9
    # §7 worked example, H100 at 512 GPUs (dp = 8), bf16 gradients: 0.25 / 0.14 / 0.12 s
    assert m.ring_allreduce(s, 8, 0.0, bw) == pytest.approx(0.243, abs=0.005)
    assert m.sharp_allreduce(s, 8, 0.0, bw) == pytest.approx(0.139, abs=0.005)
    assert m.ring_allreduce(s, 8, 0.0, 45e9) == pytest.approx(0.1215, abs=0.005)
    assert m.ring_allreduce(s, 1, 1.0, bw) == 0.0
    # alpha term: 2(p-1) messages for the ring, 2 log2 p for the tree
    assert m.ring_allreduce(0.0, 64, 1e-5, bw) == pytest.approx(2 * 63 * 1e-5)
    assert m.tree_allreduce(0.0, 64, 1e-5, bw) == pytest.approx(2 * 6 * 1e-5)


def test_p_any_matches_sheet() -> None:
    assert m.p_any(1e-3, 64) == pytest.approx(0.06, abs=0.005)
    assert m.p_any(1e-3, 1024) == pytest.approx(0.64, abs=0.005)
    assert m.p_any(1e-4, 4096) == pytest.approx(0.34, abs=0.005)


@pytest.mark.parametrize(("n", "h_n"), [(64, 4.74), (512, 6.82), (1024, 7.51), (4096, 8.90), (16384, 10.28)])
def test_harmonic_numbers_against_sheet(n: int, h_n: float) -> None:
    assert m.harmonic(n) == pytest.approx(h_n, abs=0.006)
    assert m.harmonic(n) == pytest.approx(math.log(n) + 0.5772, abs=0.01)


def test_expected_max_delay_by_distribution() -> None:
    n = 1024
    assert m.expected_max_delay("normal", 0.0, 1.0, n) == pytest.approx(m.expected_max_normal(n))
    assert m.expected_max_delay("normal", 0.0, 1.0, n, "blom") == pytest.approx(m.blom_max_normal(n))
    assert m.expected_max_delay("exponential", 2.0, 2.0, n) == pytest.approx(2.0 * m.harmonic(n))
    # lognormal with the same mean and std has a heavier tail than the normal
    logn = m.expected_max_delay("lognormal", 1.0, 1.0, n)
    assert logn > m.expected_max_delay("normal", 1.0, 1.0, n)
    s2 = math.log(2.0)
    assert logn == pytest.approx(math.exp(-s2 / 2 + math.sqrt(s2) * m.expected_max_normal(n)))
    with pytest.raises(m.AdviseError):
        m.expected_max_delay("cauchy", 1.0, 1.0, n)
