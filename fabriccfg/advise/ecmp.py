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
- Which edges leave a leaf depends on placement. Megatron's rank order tp-cp-ep-dp-pp
  (megatron/core/parallel_state.py, ``order="tp-cp-ep-dp-pp"``) makes the ranks of a DP group
  consecutive nodes, so with consecutive nodes only the edges of groups that straddle a leaf
  boundary leave it. ``aligned``: the job starts on a leaf boundary (topology-aware allocation).
  ``contiguous``: consecutive nodes starting anywhere in a leaf, the mean over the leaf_down
  possible offsets (a scheduler that hands out consecutive nodes without aligning them).
  ``random``: nodes scattered over the fabric (Meta: "fragmented job placements" caused
  uneven uplink load, engineering.fb.com 2024-08-05 [S]); a ring successor is on the same leaf
  with probability (d-1)/(J-1), so a leaf of d job nodes out of J sends d(J-d)/(J-1) edges up
  (the expectation, rounded).
- A link carrying k flows gives each 1/k of its rate (max-min fair); a flow wanting 1/c is slowed
  by max(1, k/c). A ring runs at its slowest edge and the all-reduce ends with its slowest channel
  and group, so the slowdown is E[max over every hashed stage of max(1, K/c)], K the most loaded
  bin. Stages: each leaf hashes the flows that leave it over its uplinks (which spine), and the
  flows that enter a leaf arrive over the spines their sources' hashes chose: per leaf and rail,
  one balls-into-bins throw of its outgoing and one of its incoming flows, each with its own count,
  taken as independent (a Monte Carlo that keeps the up/down correlation agrees within 5%,
  tests/advise/test_ecmp.py).
- P(max load <= k) for m balls in n bins is exact: with Y_i i.i.d. Poisson(m/n), the counts
  conditioned on sum m are multinomial, so P = P(sum of Y_i truncated at k = m) / P(Poisson(m) = m)
  (Poissonisation; e.g. Mitzenmacher & Upfal, "Probability and Computing", §5.4). The expected
  maximum grows like ln n / ln ln n for m = n (Gonnet, J. ACM 1981; Raab & Steger, RANDOM'98).
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, replace
from functools import lru_cache
from operator import mul

from fabriccfg.advise.inputs import AdviseError
from fabriccfg.advise.sources import FabricProfile

PLACEMENTS = ("aligned", "contiguous", "random")
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
    rev = w[::-1]  # g_new[t] = sum_j g[t-j] w[j]: a dot product of g's window with w reversed
    for _ in range(bins):
        g = [sum(map(mul, g[max(0, t - k) : t + 1], rev[max(0, k - t) :])) for t in range(balls + 1)]
    target = math.exp(balls * math.log(balls) - balls - math.lgamma(balls + 1))
    return min(1.0, g[balls] / target)


def expected_slowdown(balls: int, bins: int, per_nic: int = 1, throws: int = 1) -> float:
    """E[max(1, K/per_nic)], K the fullest bin over ``throws`` independent throws of ``balls``."""
    return expected_slowdown_of({balls: throws}, bins, per_nic)


def expected_slowdown_of(throws: dict[int, int], bins: int, per_nic: int = 1) -> float:
    """As :func:`expected_slowdown` for independent throws of different sizes ({balls: how many})."""
    if per_nic < 1 or any(n < 0 for n in throws.values()):
        raise AdviseError("per_nic must be >= 1 and throw counts >= 0")
    live = {b: n for b, n in throws.items() if b > 0 and n > 0}
    if not live:
        return 1.0
    total, prev = 0.0, 0.0
    for k in range(max(live) + 1):
        cdf = math.prod(max_load_cdf(b, bins, k) ** n for b, n in live.items())
        total += (cdf - prev) * max(1.0, k / per_nic)
        prev = cdf
        if cdf >= 1.0 - 1e-9:  # what is left adds < 1e-9 x balls/c; float error ~1e-11
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
    throws: int  # hashed stages with crossing flows (leaf up, spine down), over every rail
    slowdown: float
    offsets: int = 1  # start offsets averaged over (contiguous: every node of a leaf)

    def set_args(self) -> list[str]:
        """The ``--set`` overrides that put this slowdown into ``fabriccfg advise``."""
        return ["--set", "roce.ecmp_collision_p=1", "--set", f"roce.ecmp_slowdown={self.slowdown:.3f}"]


def _contiguous_crossings(nodes: int, dp: int, per_leaf: int, offset: int = 0) -> list[int]:
    """Per leaf, the ring edges that leave it and the ones that enter it (one list, both kinds),
    for DP groups of ``dp`` consecutive nodes, the first node ``offset`` ports into its leaf."""
    out = [0] * math.ceil((nodes + offset) / per_leaf)
    into = [0] * len(out)
    for start in range(0, nodes, dp):
        ring = [offset + i for i in range(start, start + dp)]
        for src, dst in zip(ring, ring[1:] + ring[:1], strict=True):
            if src // per_leaf != dst // per_leaf:
                out[src // per_leaf] += 1
                into[dst // per_leaf] += 1
    return [c for c in out + into if c]


@lru_cache(maxsize=256)
def derive(
    gpus: int,
    *,
    tp: int = 8,
    pp: int = 8,
    gpus_per_node: int = 8,
    placement: str = "aligned",
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
    offsets = range(leaf_down) if placement == "contiguous" else range(1)
    # per start offset: the crossing edges of every hashed stage (leaf up, spine down) of one rail
    stages: list[list[int]] = []
    for offset in offsets:
        if dp <= 1 or (placement == "random" and leaves == 1):
            stages.append([])
        elif placement == "random":
            d = min(leaf_down, nodes)
            stages.append([round(d * (nodes - d) / (nodes - 1))] * (2 * leaves))
        else:
            stages.append(_contiguous_crossings(nodes, dp, leaf_down, offset))
    slowdowns = []
    for crossing_edges in stages:
        throws = Counter(c * flows_per_nic for c in crossing_edges)
        rails = {balls: n * gpus_per_node for balls, n in throws.items()}
        slowdowns.append(expected_slowdown_of(rails, leaf_down, flows_per_nic))
    busiest = max((max(st, default=0), len(st)) for st in stages)
    return EcmpDerivation(
        gpus,
        placement,
        nodes,
        dp,
        leaves,
        busiest[0],
        busiest[0] * flows_per_nic,
        leaf_down,
        max(1, busiest[1] * gpus_per_node),
        math.fsum(slowdowns) / len(slowdowns),
        len(stages),
    )


def with_placement(profile: FabricProfile, placement: str | None) -> FabricProfile:
    """``--roce-placement``: RoCE profiles take the derived ECMP slowdown for this placement."""
    if placement is not None and placement not in PLACEMENTS:
        raise AdviseError(f"--roce-placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    if placement is None or profile.family != "roce":
        return profile
    return replace(profile, ecmp_placement=placement)
