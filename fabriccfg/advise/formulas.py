"""Textbook formulas of the advise model: collective costs (alpha-beta, NCCL's constants), FLOPs per
token, expected maxima of rank delays. Pure functions of numbers; see :mod:`fabriccfg.advise.model` for the
step-time equation they feed.
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist

from fabriccfg.advise import sources as src
from fabriccfg.advise.inputs import AdviseError


def busbw_factor(op: str, n: int) -> float:
    """nccl-tests busbw = algbw x factor (PERFORMANCE.md, analytics §1.2)."""
    if n < 1:
        raise AdviseError("rank count must be >= 1")
    factors = {
        "allreduce": 2 * (n - 1) / n,
        "allreduce-innetwork": (n - 1) / (n + 1),
        "reducescatter": (n - 1) / n,
        "allgather": (n - 1) / n,
        "alltoall": (n - 1) / n,
        "broadcast": 1.0,
        "reduce": 1.0,
    }
    if op not in factors:
        raise AdviseError(f"unknown collective {op!r}")
    return factors[op]


def flops_per_token(active_params: float, layers: int, hidden: int, seq_len: int) -> float:
    """PaLM App. B / torchtitan: 6N + 12 L H Q T, with H*Q = hidden (analytics §3.1)."""
    return 6.0 * active_params + 12.0 * layers * hidden * seq_len


_SQRT2 = math.sqrt(2.0)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


@lru_cache(maxsize=4096)
def expected_max_normal(n: int, steps: int = 4800) -> float:
    """Exact E[max of n i.i.d. N(0,1)] = ∫ x n φ(x) Φ(x)^(n-1) dx, by Simpson's rule on [-12, 12]."""
    if n < 1:
        raise AdviseError("rank count must be >= 1")
    if n == 1:
        return 0.0
    lo, hi = -12.0, 12.0
    h = (hi - lo) / steps
    total = 0.0
    for i in range(steps + 1):
        x = lo + i * h
        cdf = 0.5 * math.erfc(-x / _SQRT2)
        if cdf <= 0.0:
            continue
        fx = x * n * _INV_SQRT_2PI * math.exp(-0.5 * x * x + (n - 1) * math.log(cdf))
        weight = 1 if i in (0, steps) else (4 if i % 2 else 2)
        total += weight * fx
    return total * h / 3.0


def blom_max_normal(n: int) -> float:
    """Blom's approximation Φ⁻¹((n - 0.375)/(n + 0.25)); within ~0.02σ of exact (analytics §2.1)."""
    if n < 1:
        raise AdviseError("rank count must be >= 1")
    if n == 1:
        return 0.0
    return NormalDist().inv_cdf((n - 0.375) / (n + 0.25))


def harmonic(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n: E[max of n Exponential(1)] (standard order statistics, §2.1)."""
    if n < 1:
        return 0.0
    if n < 10_000:
        return math.fsum(1.0 / k for k in range(1, n + 1))
    return math.log(n) + 0.5772156649015329 + 1 / (2 * n) - 1 / (12 * n * n)


def expected_max_delay(dist: str, mean: float, std: float, n: int, method: str = "exact") -> float:
    """Expected per-step delay of the slowest of n ranks whose extra time has this mean and std.

    normal: mean + std E[max Z] (exact or Blom); exponential: H_n x mean (std = mean for an
    exponential; the larger of the two is used); lognormal with that mean and std:
    exp(mu_ln + sigma_ln z_n), z_n the normal expected maximum (analytics §2.1).
    """
    z = blom_max_normal(n) if method == "blom" else expected_max_normal(n)
    if dist == "normal":
        return mean + std * z
    if dist == "exponential":
        return harmonic(n) * max(mean, std)
    if dist == "lognormal":
        if mean <= 0:
            raise AdviseError("a lognormal jitter needs a positive mean")
        s2 = math.log(1 + (std / mean) ** 2)
        return math.exp(math.log(mean) - s2 / 2 + math.sqrt(s2) * z)
    raise AdviseError(f"unknown jitter distribution {dist!r}; known: {', '.join(src.JITTER_DISTRIBUTIONS)}")


def p_any(p: float, n: int) -> float:
    """Probability that at least one of n ranks is hit: 1 - (1-p)^n (Dean & Barroso; §2.1)."""
    return 1.0 - (1.0 - p) ** n


def ring_allreduce(size: float, ranks: int, alpha: float, bw: float, alpha0: float = 0.0) -> float:
    """Ring all-reduce (= reduce-scatter + all-gather): a0 + 2(p-1)a + 2(p-1)/p S/B."""
    if ranks <= 1:
        return 0.0
    return alpha0 + 2 * (ranks - 1) * alpha + 2 * (ranks - 1) / ranks * size / bw


def tree_allreduce(size: float, ranks: int, alpha: float, bw: float, alpha0: float = 0.0) -> float:
    """Pipelined double-binary tree: a0 + 2 log2(p) a + 2 S / (0.92 B) (§1.1, NCCL 0.92 tree factor)."""
    if ranks <= 1:
        return 0.0
    return alpha0 + 2 * math.log2(ranks) * alpha + 2 * size / (bw * src.NCCL_TREE_BW_FACTOR.value)


def sharp_allreduce(size: float, ranks: int, alpha: float, bw: float, traffic: float = 1.0) -> float:
    """In-network all-reduce: a (constant in node count) + traffic x S/B; traffic = 1 (calculon, §1.4)."""
    if ranks <= 1:
        return 0.0
    return alpha + traffic * size / bw


def ring_rs_or_ag(size: float, ranks: int, alpha: float, bw: float) -> float:
    """Ring reduce-scatter or all-gather: (p-1)a + (p-1)/p S/B."""
    if ranks <= 1:
        return 0.0
    return (ranks - 1) * alpha + (ranks - 1) / ranks * size / bw


def alltoall(size: float, ranks: int, alpha: float, bw: float) -> float:
    """Pairwise-exchange all-to-all, S = a rank's send buffer: (p-1)a + (p-1)/p S/B."""
    return ring_rs_or_ag(size, ranks, alpha, bw)
