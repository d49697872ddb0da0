"""ECMP collisions of the DP all-reduce's RDMA flows on rail-leaf uplinks, derived (issue 18).

Why this exists: the advisor's untuned-RoCE collision term (``sources._ROCE_ECMP``: p = 1e-4 per rank,
factor 1 + (1-(1-p)^n)) is an assumption [A] whose growth with n has no derivation. This module
derives the slowdown from the mechanism instead, so the "512+: IB preferred" question can be asked
of the physics rather than of a constant. It enters an estimate only when the user names the
placement (``--roce-placement``, ``with_placement``; or a fixed value via ``set_args``), because its
answer hinges on an input nobody has measured for the user's cluster: where the job's nodes sit
(docs/advise.md, "Decision needed"). The estimate applies it to every fabric bandwidth term, as it
does the assumed term; the derivation itself is for the DP ring, which dominates them.

Derivation (all flows of one collective start together and last its whole duration):

- Topology: the advisor's rail-optimised two-tier Clos (docs/advise.md "The model"): NIC r of every
  node goes to rail-r leaf switches; a leaf has ``leaf_down`` node ports and as many uplinks, one
  to each spine (non-blocking). 64 x 400G leaves (Tomahawk 4, Spectrum-4 SN5400; analytics §5) give
  32 + 32.
- Flows: TP fills the node (tp = 8 GPUs per node), so every DP ring has one rank per node and every
  ring edge is one NIC-to-NIC connection on one rail. NCCL duplicates its ring channels
  (src/graph/connect.cc, "Duplicate channels") and opens NCCL_IB_QPS_PER_CONNECTION QPs (default 1)
  per channel connection, so each edge is ``flows_per_nic`` >= 2 RoCE flows, each wanting
  1/flows_per_nic of the link. RoCE v2 carries a per-QP UDP source port, so plain 5-tuple ECMP
  hashes each flow to an uplink independently and uniformly: balls into bins.
- Which edges leave a leaf depends on placement. ``contiguous``: Megatron's rank order
  tp-cp-ep-dp-pp (megatron/core/parallel_state.py, ``order="tp-cp-ep-dp-pp"``) makes the ranks of a
  DP group consecutive nodes; with nodes allocated in leaf order only group-boundary edges leave a
  leaf. ``random``: nodes scattered over the fabric (Meta: "fragmented job placements" caused
  uneven uplink load, engineering.fb.com 2024-08-05 [S]); a ring successor is on the same leaf
  with probability (d-1)/(J-1), so a leaf of d job nodes out of J sends d(J-d)/(J-1) edges up
  (the expectation, rounded).
- A link carrying k flows gives each 1/k of its rate (max-min fair); a flow wanting 1/c is slowed
  by max(1, k/c). A ring runs at its slowest edge and the all-reduce ends with its slowest channel
  and group, so the slowdown is E[max over every hashed stage of max(1, K/c)], K the most loaded
  bin. Stages: each leaf with crossing flows hashes them over its uplinks (which spine), and each
  receiving leaf sees the same number of flows arrive over the spines, each spine chosen by an
  independent source hash: two balls-into-bins throws per leaf and rail.
- P(max load <= k) for m balls in n bins is exact: with Y_i i.i.d. Poisson(m/n), the counts
  conditioned on sum m are multinomial, so P = P(sum of Y_i truncated at k = m) / P(Poisson(m) = m)
  (Poissonisation; e.g. Mitzenmacher & Upfal, "Probability and Computing", §5.4). The expected
  maximum grows like ln n / ln ln n for m = n (Gonnet, J. ACM 1981; Raab & Steger, RANDOM'98).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from fabriccfg.advise.inputs import AdviseError
from fabriccfg.advise.sources import FabricProfile

PLACEMENTS = ("contiguous", "random")
LEAF_DOWN = 32  # 64 x 400G leaf (TH4 / SN5400, analytics §5): 32 node ports + 32 uplinks
FLOWS_PER_NIC = 2  # NCCL ring channels duplicated (connect.cc) x NCCL_IB_QPS_PER_CONNECTION 1
MAX_BALLS = 4096  # bounded input: the exact sum is O(bins x balls x k)


@lru_cache(maxsize=4096)
def max_load_cdf(balls: int, bins: int, k: int) -> float:
    """P(no bin holds more than k) when ``balls`` fall uniformly and independently into ``bins``."""
    if balls < 0 or bins < 1 or k < 0:
        raise AdviseError("balls >= 0, bins >= 1 and k >= 0 are required")
    if balls > MAX_BALLS:
        raise AdviseError(f"{balls} flows is more than this calculator handles ({MAX_BALLS})")
    if balls == 0 or k >= balls:
        return 1.0
    if balls > bins * k:
        return 0.0
    lam = balls / bins
    # Poisson(lam) pmf truncated at k, then its bins-fold convolution evaluated at `balls`
    w = [math.exp(j * math.log(lam) - lam - math.lgamma(j + 1)) for j in range(k + 1)]
    g = [1.0] + [0.0] * balls
    for _ in range(bins):
        g = [math.fsum(g[t - j] * w[j] for j in range(min(k, t) + 1)) for t in range(balls + 1)]
    target = math.exp(balls * math.log(balls) - balls - math.lgamma(balls + 1))
    return min(1.0, g[balls] / target)


def expected_slowdown(balls: int, bins: int, per_nic: int = 1, throws: int = 1) -> float:
    """E[max(1, K/per_nic)], K the fullest bin over ``throws`` independent throws of ``balls``."""
    if per_nic < 1 or throws < 1:
        raise AdviseError("per_nic and throws must be >= 1")
    if balls == 0:
        return 1.0
    total, prev = 0.0, 0.0
    for k in range(balls + 1):
        cdf = max_load_cdf(balls, bins, k) ** throws
        total += (cdf - prev) * max(1.0, k / per_nic)
        prev = cdf
        if cdf >= 1.0 - 1e-12:
            break
    return total


@dataclass(frozen=True, slots=True)
class EcmpDerivation:
    """The inputs and the derived DP all-reduce slowdown for one cluster size and placement."""

    gpus: int
    placement: str
    nodes: int
    dp: int
    leaves_per_rail: int
    crossing_per_leaf: int  # NICs of the busiest leaf whose ring edge leaves (or enters) it
    flows: int  # balls per throw: crossing NICs x flows per NIC
    uplinks: int  # bins
    throws: int  # hashed stages: 2 per leaf with crossing flows, on every rail
    slowdown: float

    def set_args(self) -> list[str]:
        """The ``--set`` overrides that put this slowdown into ``fabriccfg advise``."""
        return ["--set", "roce.ecmp_collision_p=1", "--set", f"roce.ecmp_slowdown={self.slowdown:.3f}"]


def _contiguous_crossings(nodes: int, dp: int, per_leaf: int) -> tuple[int, int]:
    """(busiest leaf's crossing edges, leaves with any) for DP groups of ``dp`` consecutive nodes."""
    out = [0] * math.ceil(nodes / per_leaf)
    into = [0] * len(out)
    for start in range(0, nodes, dp):
        ring = list(range(start, start + dp))
        for src, dst in zip(ring, ring[1:] + ring[:1], strict=True):
            if src // per_leaf != dst // per_leaf:
                out[src // per_leaf] += 1
                into[dst // per_leaf] += 1
    busiest = max(*out, *into)
    return busiest, sum(1 for a, b in zip(out, into, strict=True) if a or b)


@lru_cache(maxsize=256)
def derive(
    gpus: int,
    *,
    tp: int = 8,
    pp: int = 8,
    gpus_per_node: int = 8,
    placement: str = "contiguous",
    leaf_down: int = LEAF_DOWN,
    flows_per_nic: int = FLOWS_PER_NIC,
) -> EcmpDerivation:
    """The DP all-reduce's ECMP slowdown on a rail-optimised 2-tier Clos (see the module docstring)."""
    if placement not in PLACEMENTS:
        raise AdviseError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if tp != gpus_per_node:
        raise AdviseError(
            f"--roce-placement: the ECMP derivation assumes tp = GPUs per node = {gpus_per_node} "
            f"(one DP rank per node and rail), got tp={tp}"
        )
    if gpus % (tp * pp) or leaf_down < 1 or flows_per_nic < 1:
        raise AdviseError("gpus must be a multiple of tp*pp; leaf_down and flows_per_nic >= 1")
    nodes = gpus // gpus_per_node
    dp = gpus // (tp * pp)
    leaves = math.ceil(nodes / leaf_down)
    if dp <= 1 or leaves == 1:
        crossing, hot = 0, 0
    elif placement == "contiguous":
        crossing, hot = _contiguous_crossings(nodes, dp, leaf_down)
    else:
        d = min(leaf_down, nodes)
        crossing, hot = round(d * (nodes - d) / (nodes - 1)), leaves
    flows = crossing * flows_per_nic
    throws = max(1, 2 * hot * gpus_per_node)
    slowdown = expected_slowdown(flows, leaf_down, flows_per_nic, throws)
    return EcmpDerivation(gpus, placement, nodes, dp, leaves, crossing, flows, leaf_down, throws, slowdown)


def with_placement(profile: FabricProfile, placement: str | None) -> FabricProfile:
    """``--roce-placement``: RoCE profiles take the derived ECMP slowdown for this placement."""
    if placement is not None and placement not in PLACEMENTS:
        raise AdviseError(f"--roce-placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if placement is None or profile.family != "roce":
        return profile
    return replace(profile, ecmp_placement=placement)
