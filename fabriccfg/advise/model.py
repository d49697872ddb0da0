"""Step-time, MFU and cost model for comparing training fabrics (plain Python, documented formulas).

Why this shape: the fabric question is decided by what is left *exposed* after overlap plus the tail
(slowest rank of N), not by link speed alone. Every term is separated so the output can show which
one decides, and every default lives in :mod:`fabriccfg.advise.sources` with its citation.

Per step (one optimizer step, global batch B sequences of s tokens, n GPUs = tp x pp x dp)::

    T_step = T_comp                                   # FLOPs / (n * peak * base_eff)
           + T_bubble                                 # (pp-1)/(v*m) * T_comp        (Narayanan SC'21)
           + T_tp                                     # 4 all-reduces/layer/micro-batch, on the critical path
           + max(T_dp / buckets, T_dp - window)       # DP all-reduce hidden under T_comp/m
           + 2(pp-1) * t_p2p                          # pipeline fill and drain
           + (1 - overlap_moe) * T_a2a                # MoE dispatch/combine
           + mean_jitter + sigma_rank * E[max of n N(0,1)]   # stragglers
           + D * (1 - (1-p)^n)                        # Bernoulli hiccups (e.g. pause bursts)

Collective costs are alpha-beta (Hockney) per rank (analytics §1.1), with NCCL's latency constants
(§1.3): ring all-reduce ``a0 + 2(N-1)a + 2(N-1)/N S/B``, tree ``a0 + 2 log2(N) a + 2 S/(0.92 B)``,
SHARP ``a0 + a_collnet + S/B`` (each NIC sends S once, receives S once: §1.4). NCCL picks the
cheapest per bucket, and so does the model.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from statistics import NormalDist
from typing import Any

from fabriccfg.advise import sources as src
from fabriccfg.advise.sources import FabricProfile, GpuSpec


class AdviseError(ValueError):
    """A user-input problem, reported as one line without a traceback."""


# --------------------------------------------------------------------------------------------
# Textbook formulas
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workload:
    """What is trained, on how many GPUs, split how."""

    params: float
    tokens: float
    gpus: int
    gpu: str = "h100"
    tp: int = 8
    pp: int = 8
    moe_experts: int = 0
    top_k: int = int(src.MOE_TOP_K.value)
    seq_len: int = int(src.SEQ_LEN.value)
    global_batch: int = int(src.GLOBAL_BATCH.value)
    micro_batch: int = int(src.MICRO_BATCH.value)
    layers: int | None = None
    hidden: int | None = None
    grad_bytes: int = int(src.GRAD_BYTES.value)
    # None -> interleaved schedule when pp > 1 and the layers allow (see resolve_vpp); issue 18
    vpp: int | None = None
    # None -> the GPU generation's calibrated base efficiency (sources.GpuSpec.base_eff); issue 18
    base_eff: float | None = None
    price: float | None = None  # $ per GPU-hour; None -> the GPU's anchor
    recompute: str = "selective"  # none | selective | full (activation recomputation)


@dataclass(frozen=True, slots=True)
class Knobs:
    """Model knobs that are not about the workload or the fabric."""

    overlap_eff: float = src.OVERLAP_EFF.value
    moe_overlap: float = src.MOE_OVERLAP.value
    compute_jitter_cv: float = src.COMPUTE_JITTER_CV.value
    bucket_params: float = src.BUCKET_PARAMS.value
    restart_hours: float = src.RESTART_HOURS.value
    ckpt_interval_hours: float = src.CKPT_INTERVAL_HOURS.value
    straggler_method: str = "exact"  # or "blom"


@dataclass(frozen=True, slots=True)
class Shape:
    layers: int
    hidden: int
    active_params: float
    dense_params: float  # parameters replicated over all DP ranks (attention + dense FFN)
    expert_params: float  # parameters sharded over expert-parallel ranks


def gpu_spec(name: str) -> GpuSpec:
    key = name.lower()
    if key not in src.GPUS:
        raise AdviseError(f"unknown gpu {name!r}{_suggest(key, src.GPUS)}; known: {', '.join(src.GPUS)}")
    return src.GPUS[key]


def fabric_profile(name: str) -> FabricProfile:
    key = name.lower()
    if key not in src.FABRICS:
        raise AdviseError(
            f"unknown fabric {name!r}{_suggest(key, src.FABRICS)}; known: {', '.join(src.FABRICS)}"
        )
    return src.FABRICS[key]


def _suggest(word: str, choices: dict[str, Any]) -> str:
    import difflib

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return f" (did you mean {close[0]!r}?)" if close else ""


def derive_shape(w: Workload) -> Shape:
    """Layers and hidden size from N when not given: N = L h^2 (4 + 8E) with h/L = 128 (dense: 12 L h^2)."""
    experts = w.moe_experts
    per_layer = 12.0 if experts <= 1 else 4.0 + 8.0 * experts
    if w.layers and w.hidden:
        layers, hidden = w.layers, w.hidden
    else:
        ratio = src.ASPECT_RATIO.value
        layers = w.layers or max(1, round((w.params * ratio / per_layer) ** (1 / 3) / ratio))
        raw_h = math.sqrt(w.params / (per_layer * layers))
        hidden = w.hidden or max(128, round(raw_h / 128) * 128)
    if experts <= 1:
        return Shape(layers, hidden, w.params, w.params, 0.0)
    attn = 4.0 * layers * hidden**2
    expert_total = max(0.0, w.params - attn)
    per_expert = expert_total / experts
    active = attn + per_expert * min(w.top_k, experts)
    return Shape(layers, hidden, active, attn, expert_total)


def validate(w: Workload) -> None:
    """Raise AdviseError with a one-line reason for inputs the model cannot use."""
    gpu_spec(w.gpu)
    if w.gpus < 1:
        raise AdviseError("--gpus must be >= 1")
    if w.params <= 0 or w.tokens <= 0:
        raise AdviseError("--params and --tokens must be positive")
    for name, val in (
        ("--tp", w.tp),
        ("--pp", w.pp),
        ("--seq-len", w.seq_len),
        ("--global-batch", w.global_batch),
        ("--micro-batch", w.micro_batch),
        ("--vpp", 1 if w.vpp is None else w.vpp),
        ("--grad-bytes", w.grad_bytes),
        ("--top-k", w.top_k),
    ):
        if val < 1:
            raise AdviseError(f"{name} must be >= 1, got {val}")
    if (w.layers is not None and w.layers < 1) or (w.hidden is not None and w.hidden < 1):
        raise AdviseError("--layers and --hidden must be >= 1 (or 0 to derive them)")
    if w.price is not None and w.price < 0:
        raise AdviseError("--price must be >= 0")
    if w.gpus % (w.tp * w.pp):
        raise AdviseError(f"--gpus {w.gpus} is not divisible by tp*pp = {w.tp}*{w.pp} = {w.tp * w.pp}")
    dp = w.gpus // (w.tp * w.pp)
    if w.global_batch < dp * w.micro_batch:
        raise AdviseError(
            f"global batch {w.global_batch} sequences is smaller than dp*micro-batch = {dp * w.micro_batch}; "
            "raise --global-batch or lower --gpus"
        )
    if w.base_eff is not None and not 0 < w.base_eff <= 1:
        raise AdviseError("--base-eff must be in (0, 1]")
    if w.recompute not in src.RECOMPUTE_FACTOR:
        raise AdviseError(
            f"--recompute must be one of {', '.join(src.RECOMPUTE_FACTOR)}, got {w.recompute!r}"
        )
    if w.moe_experts < 0:
        raise AdviseError("--moe-experts must be >= 0")
    shape = derive_shape(w)
    if shape.layers < w.pp:
        raise AdviseError(f"model has {shape.layers} layers, fewer than pp={w.pp}")
    if w.vpp is not None and w.vpp > 1 and shape.layers < w.pp * w.vpp:
        raise AdviseError(
            f"--vpp {w.vpp}: {shape.layers} layers cannot fill pp*vpp = {w.pp * w.vpp} virtual stages"
        )


def base_efficiency(w: Workload) -> float:
    """The user's --base-eff, else the GPU generation's value fitted on the calibration set."""
    return w.base_eff if w.base_eff is not None else gpu_spec(w.gpu).base_eff.value


def resolve_vpp(w: Workload, layers: int, microbatches: float) -> int:
    """Virtual pipeline stages: the user's --vpp, else the interleaved schedule's default.

    Why (issue 18): large Megatron-style runs use the interleaved 1F1B schedule whenever pp > 1
    (Narayanan et al. SC'21 §2.2.2; NeMo's published GPT-3 175B/Llama 2 70B/Nemotron-340B configs run
    VP 6-20), and with vpp = 1 the advisor under-predicted Llama 3 405B by 10-18 MFU points. The
    default takes one layer per virtual stage (v = L // pp, as NeMo's Llama 2 70B PP4/VP20 and
    Nemotron-340B PP8/VP12 do), and only when there are at least pp micro-batches, which
    Megatron's interleaved schedule requires.
    """
    if w.vpp is not None:
        return w.vpp
    if w.pp <= 1 or microbatches < w.pp:
        return 1
    return max(1, layers // w.pp)


# --------------------------------------------------------------------------------------------
# Estimate
# --------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Estimate:
    """One (workload, fabric) result; times in seconds per optimizer step unless named otherwise."""

    fabric: str
    gpus: int
    tp: int
    pp: int
    dp: int
    ep: int
    vpp: int
    base_eff: float
    recompute: str
    microbatches: float
    compute: float
    bubble: float
    tp_comm: float  # exposed tensor-parallel time (NVLink when tp <= GPUs per node)
    dp_comm: float  # total DP collective time (before overlap)
    dp_exposed: float
    dp_algo: str
    pp_exposed: float
    moe_exposed: float
    straggler: float
    hiccup: float
    step: float
    mfu: float
    hfu: float  # hardware FLOPs utilisation: counts recomputed FLOPs (what Narayanan SC'21 reports)
    ettr: float
    days: float
    gpu_hours: float
    cost: float | None
    net_cost: float | None
    dp_bytes_per_nic: float  # bytes each NIC sends for one DP gradient all-reduce
    sigma_rank: float
    emax: float
    tail_source: str = "assumed"  # where the jitter/ECMP/pause inputs came from
    # time every fabric would spend on this workload: compute, bubble, NVLink TP and the compute
    # part of the straggler wait; its error cancels when two fabrics are compared (issue 18)
    common: float = 0.0
    warnings: list[str] = field(default_factory=list)

    @property
    def exposed_comm(self) -> float:
        return self.tp_comm + self.dp_exposed + self.pp_exposed + self.moe_exposed

    @property
    def fabric_exposed(self) -> float:
        return self.dp_exposed + self.pp_exposed + self.moe_exposed

    @property
    def fabric_dependent(self) -> float:
        """Step time that depends on the fabric (step minus the common-mode part)."""
        return max(0.0, self.step - self.common)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["exposed_comm"] = self.exposed_comm
        out["fabric_exposed"] = self.fabric_exposed
        out["fabric_dependent"] = self.fabric_dependent
        return out


def _dp_allreduce(
    *, size: float, nodes: int, fab: FabricProfile, bw: float, buckets: int, ecmp: float
) -> tuple[float, str, float]:
    """Inter-node gradient all-reduce of ``size`` bytes per NIC; returns (time, algorithm, bytes per NIC)."""
    if nodes <= 1 or size <= 0:
        return 0.0, "-", 0.0
    us = 1e-6
    lat = fab.e2e_latency.value
    a0 = src.NCCL_BASE_LAT.value * us
    per_bucket = size / buckets
    options: dict[str, tuple[float, float]] = {
        "ring": (
            ring_allreduce(per_bucket, nodes, (src.NCCL_RING_NET_LAT.value + lat) * us, bw / ecmp, a0),
            busbw_factor("allreduce", nodes) * size,
        ),
        "tree": (
            tree_allreduce(per_bucket, nodes, (src.NCCL_TREE_NET_LAT.value + lat) * us, bw / ecmp, a0),
            2.0 * size,
        ),
    }
    if fab.sharp:
        sharp_bw = bw * fab.sharp_eff.value / ecmp
        options["sharp"] = (
            sharp_allreduce(
                per_bucket,
                nodes,
                a0 + (src.NCCL_COLLNET_NET_LAT.value + 2 * lat) * us,
                sharp_bw,
                fab.sharp_traffic.value,
            ),
            fab.sharp_traffic.value * size,
        )
    algo = min(options, key=lambda k: options[k][0])
    t_bucket, bytes_nic = options[algo]
    share = fab.sharp_share.value if fab.sharp else 0.0
    if algo == "sharp" and share < 1.0:
        # the rest of the traffic falls back to the best ring/tree (limited SHARP resources, §1.4)
        fallback = min((k for k in options if k != "sharp"), key=lambda k: options[k][0])
        t_bucket = share * t_bucket + (1 - share) * options[fallback][0]
        bytes_nic = share * bytes_nic + (1 - share) * options[fallback][1]
        algo = f"sharp {share:.0%}+{fallback}"
    return t_bucket * buckets, algo, bytes_nic


def estimate(
    w: Workload,
    fab: FabricProfile,
    knobs: Knobs | None = None,
    telemetry: Telemetry | None = None,
    port_cost: float | None = None,
) -> Estimate:
    """Estimate one fabric for one workload (see the module docstring for the formula)."""
    knobs = knobs or Knobs()
    validate(w)
    if telemetry is not None and telemetry.fabric_values:
        fab = fab.with_values(telemetry.source, **telemetry.fabric_values)
    gpu = gpu_spec(w.gpu)
    shape = derive_shape(w)
    warnings: list[str] = []
    g = gpu.gpus_per_node
    n = w.gpus
    dp = n // (w.tp * w.pp)
    m = w.global_batch / (dp * w.micro_batch)
    if m < w.pp:
        warnings.append(f"only {m:g} micro-batches for pp={w.pp}: the pipeline bubble dominates")
    us = 1e-6

    # -- compute (PaLM 6N + attention) -------------------------------------------------------
    tokens_step = w.global_batch * w.seq_len
    flops_step = tokens_step * flops_per_token(shape.active_params, shape.layers, shape.hidden, w.seq_len)
    peak = gpu.peak_bf16.value
    base_eff = base_efficiency(w)
    # full recomputation runs the forward twice: 8 instead of 6 FLOPs per parameter and token
    # (Narayanan et al. SC'21 eq. 3 counts 4 passes); MFU still counts the model's 6N only
    recompute = src.RECOMPUTE_FACTOR[w.recompute].value
    t_comp = flops_step * recompute / (n * peak * base_eff)
    vpp = resolve_vpp(w, shape.layers, m)
    bubble = (w.pp - 1) / (vpp * m) * t_comp

    # -- fabric bandwidth after pauses and ECMP collisions --------------------------------------
    pause = fab.pause_fraction.value
    if telemetry and telemetry.pause_fraction is not None:
        pause = telemetry.pause_fraction
    bw = fab.nic_bw.value * 1e9 * fab.wire_eff.value * max(1e-3, 1.0 - pause)
    ecmp = 1.0 + p_any(fab.ecmp_collision_p.value, n) * (fab.ecmp_slowdown.value - 1.0)
    net_alpha = (src.NCCL_RING_NET_LAT.value + fab.e2e_latency.value) * us
    nvl_bw = gpu.nvlink.value * 1e9
    nvl_alpha = src.NCCL_NVLINK_LAT.value * us
    a0 = src.NCCL_BASE_LAT.value * us
    layers_stage = shape.layers / w.pp
    act_bytes = w.micro_batch * w.seq_len * shape.hidden * 2  # bf16 activation of one micro-batch

    # -- tensor parallel: 4 all-reduces per layer per micro-batch (Shoeybi 2019), not overlapped ----
    tp_on_fabric = w.tp > g
    tp_calls = 4 * layers_stage * m
    if tp_on_fabric:
        t_tp = tp_calls * ring_allreduce(act_bytes, w.tp, net_alpha, bw / ecmp, a0)
        warnings.append(f"tp={w.tp} spans nodes ({g} GPUs per node): TP traffic crosses the fabric")
    else:
        t_tp = tp_calls * ring_allreduce(act_bytes, w.tp, nvl_alpha, nvl_bw, a0)

    # -- pipeline parallel p2p: b s h 2 / tp bytes per GPU (scatter/gather) ----------------------
    pp_on_fabric = w.tp * w.pp > g
    p2p_bytes = act_bytes / w.tp
    t_p2p = (
        (a0 + net_alpha + p2p_bytes / (bw / ecmp)) if pp_on_fabric else (a0 + nvl_alpha + p2p_bytes / nvl_bw)
    )
    # interleaving multiplies the p2p transfers by v (Narayanan SC'21 §2.2.2), smaller each
    t_pp_total = 2 * m * vpp * t_p2p if w.pp > 1 else 0.0
    pp_exposed = 2 * (w.pp - 1) * t_p2p if w.pp > 1 else 0.0

    # -- data parallel: hierarchical all-reduce, local NVLink part then per-NIC inter-node -------
    ranks_local = max(1, min(dp, g // (w.tp * w.pp))) if w.tp * w.pp < g else 1
    nodes = math.ceil(dp / ranks_local)
    experts = w.moe_experts if w.moe_experts > 1 else 0
    ep = math.gcd(experts, dp) if experts else 1
    dense_bytes = shape.dense_params / (w.tp * w.pp) * w.grad_bytes
    expert_bytes = shape.expert_params / (w.tp * w.pp * ep) * w.grad_bytes if experts else 0.0
    buckets_dense = max(1, math.ceil(shape.dense_params / (w.tp * w.pp) / knobs.bucket_params))
    t_dp, algo, dp_nic = _dp_allreduce(
        size=dense_bytes / ranks_local, nodes=nodes, fab=fab, bw=bw, buckets=buckets_dense, ecmp=ecmp
    )
    if ranks_local > 1:
        t_dp += 2 * ring_rs_or_ag(dense_bytes, ranks_local, nvl_alpha, nvl_bw)
    buckets = buckets_dense
    if experts and dp // ep > 1:
        eb = max(1, math.ceil(shape.expert_params / (w.tp * w.pp * ep) / knobs.bucket_params))
        t_exp, _, _ = _dp_allreduce(
            size=expert_bytes, nodes=max(1, nodes // ep), fab=fab, bw=bw, buckets=eb, ecmp=ecmp
        )
        t_dp += t_exp
        buckets += eb
    # DP overlap window (issue 18): Megatron's overlap_grad_reduce starts each bucket's reduction
    # during the last micro-batch's backward and overlap_param_gather hides the all-gather under
    # the first forward (T_comp/m). With the interleaved schedule the gradients of the later
    # virtual stages are final while the earlier ones still drain, so (v-1)/v of the pipeline
    # drain (the bubble, when the GPU waits anyway) is also available. Without this the advisor
    # left ~0.5 s/step of DP all-reduce exposed at 16K GPUs where Llama 3 reports 41% MFU.
    window = knobs.overlap_eff * (t_comp / m + (vpp - 1) / vpp * bubble)
    dp_exposed = max(t_dp / buckets, t_dp - window) if t_dp > 0 else 0.0

    # -- MoE all-to-all: dispatch + combine, forward and backward (4 per MoE layer per micro-batch) --
    t_a2a = 0.0
    if experts and ep > 1:
        a2a_bytes = w.micro_batch * w.seq_len * w.top_k * shape.hidden * 2 / w.tp
        ep_on_fabric = w.tp * w.pp * ep > g
        if ep_on_fabric:
            one = a0 + alltoall(a2a_bytes, ep, net_alpha, bw / ecmp)
        else:
            one = a0 + alltoall(a2a_bytes, ep, nvl_alpha, nvl_bw)
        t_a2a = 4 * layers_stage * m * one
    elif experts:
        warnings.append("MoE experts not spread over DP ranks (ep=1): no all-to-all across GPUs")
    moe_exposed = (1.0 - knobs.moe_overlap) * t_a2a

    # -- stragglers: slowest of n ranks, Normal jitter; Bernoulli hiccups --------------------------
    t_fabric = (t_dp if nodes > 1 else 0.0) + (t_pp_total if pp_on_fabric else 0.0)
    t_fabric += t_a2a if experts and w.tp * w.pp * ep > g else 0.0
    t_fabric += t_tp if tp_on_fabric else 0.0
    dist = fab.jitter_dist
    if telemetry and telemetry.step_jitter_std is not None:
        sigma = telemetry.step_jitter_std
        mean_jitter = telemetry.step_jitter_mean or 0.0
        dist = telemetry.distribution or dist
    else:
        sigma = math.hypot(knobs.compute_jitter_cv * t_comp, fab.jitter_cv.value * t_fabric)
        mean_jitter = 0.0
    emax = blom_max_normal(n) if knobs.straggler_method == "blom" else expected_max_normal(n)
    straggler = expected_max_delay(dist, mean_jitter, sigma, n, knobs.straggler_method)
    hiccup = 0.0
    if telemetry and telemetry.hiccup_p:
        hiccup = telemetry.hiccup_delay * p_any(telemetry.hiccup_p, n)

    step = t_comp + bubble + t_tp + dp_exposed + pp_exposed + moe_exposed + straggler + hiccup
    # common mode (issue 18, paired error): what the step would be on any fabric, i.e. the terms
    # whose calibration error cancels between two fabrics: compute, bubble, TP on NVLink, and the
    # straggler wait of the compute jitter alone. A measured spread cannot be split: all of it
    # then counts as fabric-dependent (the conservative side).
    straggler_common = 0.0
    if not (telemetry and telemetry.step_jitter_std is not None):
        sigma_comp = knobs.compute_jitter_cv * t_comp
        straggler_common = expected_max_delay(dist, mean_jitter, sigma_comp, n, knobs.straggler_method)
    common = t_comp + bubble + (0.0 if tp_on_fabric else t_tp) + min(straggler, straggler_common)
    mfu = flops_step / (step * n * peak)
    hfu = mfu * recompute

    # -- reliability, time and cost -----------------------------------------------------------------
    lam = fab.incident_rate.value * n  # interruptions per wall-clock hour
    ettr = 1.0 / (1.0 + lam * (knobs.restart_hours + knobs.ckpt_interval_hours / 2))
    steps = w.tokens / tokens_step
    wall_h = steps * step / ettr / 3600.0
    gpu_hours = wall_h * n
    price = w.price if w.price is not None else (gpu.price.value if gpu.price else None)
    if port_cost is None and fab.port_cost is not None:
        port_cost = fab.port_cost.value
    net_cost = port_cost * n * wall_h if port_cost is not None else None
    cost = None if price is None else gpu_hours * price + (net_cost or 0.0)

    hbm_need = _memory_gb(shape, w, dp)
    if hbm_need > gpu.hbm.value:
        warnings.append(
            f"~{hbm_need:.0f} GB of weights/grads/optimizer per GPU exceeds {gpu.hbm.value:g} GB HBM "
            "(activations not counted): raise tp/pp"
        )
    return Estimate(
        fabric=fab.name,
        gpus=n,
        tp=w.tp,
        pp=w.pp,
        dp=dp,
        ep=ep,
        vpp=vpp,
        base_eff=base_eff,
        recompute=w.recompute,
        microbatches=m,
        compute=t_comp,
        bubble=bubble,
        tp_comm=t_tp,
        dp_comm=t_dp,
        dp_exposed=dp_exposed,
        dp_algo=algo,
        pp_exposed=pp_exposed,
        moe_exposed=moe_exposed,
        straggler=straggler,
        hiccup=hiccup,
        step=step,
        mfu=mfu,
        hfu=hfu,
        ettr=ettr,
        days=wall_h / 24.0,
        gpu_hours=gpu_hours,
        cost=cost,
        net_cost=net_cost,
        dp_bytes_per_nic=dp_nic,
        sigma_rank=sigma,
        emax=emax,
        tail_source=_tail_source(fab, telemetry),
        common=common,
        warnings=warnings,
    )


def _tail_source(fab: FabricProfile, telemetry: Telemetry | None) -> str:
    """'assumed' unless telemetry or --set replaced the tail inputs [A] of this fabric."""
    if telemetry is not None:
        return telemetry.source
    tail = {"jitter_cv", "ecmp_collision_p", "pause_fraction"}
    given = sorted({fab.overrides[k] for k in tail if k in fab.overrides})
    return ", ".join(given) if given else "assumed"


def _memory_gb(shape: Shape, w: Workload, dp: int) -> float:
    """bf16 weights + fp32 grads + Adam fp32 master/m/v sharded over DP (distributed optimizer)."""
    per_gpu = (shape.dense_params + shape.expert_params / max(1, math.gcd(w.moe_experts or 1, dp))) / (
        w.tp * w.pp
    )
    return per_gpu * (2 + w.grad_bytes + 12 / dp) / 1e9


# --------------------------------------------------------------------------------------------
# Recommendation and sweep
# --------------------------------------------------------------------------------------------

TIE_TOLERANCE = 0.01  # relative difference under which two fabrics are called a tie


def is_tie(margin: float) -> bool:
    """Below TIE_TOLERANCE (compared at the 0.01% resolution the output prints)."""
    return round(margin, 4) < TIE_TOLERANCE


def _metric(estimates: list[Estimate]) -> tuple[str, Callable[[Estimate], float]]:
    if all(e.cost is not None for e in estimates):
        return "cost", lambda e: e.cost if e.cost is not None else math.inf
    return "time to train", lambda e: e.days


def within_spread(best: Estimate, other: Estimate, paired_pts: float) -> bool:
    """True when two fabrics' MFU differ by no more than the paired error bar (issue 18).

    ``paired_pts`` is the calibration's error on a *difference* between fabrics on one workload
    (calibration.paired_spread): the compute error is common to both and cancels, so it is not
    the absolute ± on each MFU.
    """
    return abs(best.mfu - other.mfu) * 100.0 <= paired_pts + 1e-9


def paired_text(best: Estimate, other: Estimate, paired_pts: float) -> str:
    """'ib-hdr-sharp ahead by 1.9 ± 2.0 pts (paired)': the gap with the error of a difference."""
    return f"{best.fabric} ahead by {abs(best.mfu - other.mfu) * 100:.1f} ± {paired_pts:.1f} pts (paired)"


def tied_with(estimates: list[Estimate], paired_pts: float = 0.0) -> list[str]:
    """Fabrics tied with the best: within TIE_TOLERANCE on the metric, or within the paired bar."""
    _, key = _metric(estimates)
    ranked = sorted(estimates, key=key)
    return [
        e.fabric
        for e in ranked[1:]
        if is_tie(key(e) / key(ranked[0]) - 1.0) or within_spread(ranked[0], e, paired_pts)
    ]


def recommend(estimates: list[Estimate], paired_pts: float = 0.0) -> tuple[str, list[str]]:
    """Pick the cheapest fabric (or the fastest when no price is known) and say why, term by term.

    ``paired_pts`` is the calibration's error on an MFU difference between two fabrics (compute
    error cancelled): a runner-up whose MFU is within it is a tie, because the model cannot tell
    the two apart (issue 18).
    """
    if not estimates:
        raise AdviseError("nothing to compare")
    metric, key = _metric(estimates)
    ranked = sorted(estimates, key=key)
    best = ranked[0]
    reasons: list[str] = []
    if len(ranked) == 1:
        return best.fabric, [f"only {best.fabric} was compared"]
    runner = ranked[1]
    margin = key(runner) / key(best) - 1.0
    paired = paired_text(best, runner, paired_pts)
    if is_tie(margin):
        reasons.append(
            f"{best.fabric} and {runner.fabric} are within {margin:.2%} on {metric} (tie below "
            f"{TIE_TOLERANCE:.0%}): decide on price per port, operations and reliability, not utilisation"
        )
    elif within_spread(best, runner, paired_pts):
        reasons.append(
            f"tie: {paired} over {runner.fabric} ({margin:.1%} on {metric}); the gap is inside the "
            "error of a fabric difference: the model cannot separate them; decide on price per "
            "port, operations and reliability"
        )
    else:
        reasons.append(f"{best.fabric} is {margin:.1%} better on {metric} than {runner.fabric}: {paired}")
    for other in ranked[1:]:
        reasons.append(_why(best, other))
    tail_terms = ("straggler", "hiccups")
    assumed_tail = [e.fabric for e in ranked[:2] if e.tail_source == "assumed"]
    if assumed_tail and any(t in reasons[1] for t in tail_terms):
        measured = [e.fabric for e in ranked[:2] if e.tail_source != "assumed"]
        reasons.append(
            f"the straggler/ECMP inputs of {', '.join(assumed_tail)} are assumptions [A] "
            "(no public per-fabric jitter data, analytics §9)"
            + (f"; those of {', '.join(measured)} are measured" if measured else "")
            + ": measure with verify/watch or probe and pass --from-telemetry, or vary them with --set"
        )
    if any(e.dp_algo.startswith("sharp") for e in estimates):
        reasons.append(
            "SHARP sends each gradient byte once per NIC instead of 2(N-1)/N times; it does not help "
            "reduce-scatter/all-gather, pipeline p2p or MoE all-to-all"
        )
    return best.fabric, reasons


def _why(best: Estimate, other: Estimate) -> str:
    terms = {
        "DP all-reduce (exposed)": other.dp_exposed - best.dp_exposed,
        "pipeline p2p": other.pp_exposed - best.pp_exposed,
        "MoE all-to-all": other.moe_exposed - best.moe_exposed,
        "straggler (E[max] of jitter)": other.straggler - best.straggler,
        "hiccups": other.hiccup - best.hiccup,
        "TP": other.tp_comm - best.tp_comm,
    }
    top = sorted(terms.items(), key=lambda kv: -abs(kv[1]))[:2]
    parts = [f"{name} {delta * 1e3:+.0f} ms" for name, delta in top if abs(delta) >= 5e-4]
    detail = ", ".join(parts) if parts else "no term differs by 0.5 ms"
    return (
        f"vs {other.fabric}: step {best.step:.2f} s vs {other.step:.2f} s "
        f"(MFU {best.mfu:.1%} vs {other.mfu:.1%}); largest differences ({other.fabric} minus "
        f"{best.fabric}): {detail}"
    )


def band(n: int) -> str:
    """The seed article's scale bands: up to 128, 128-512 (inclusive), above 512."""
    if n <= 128:
        return "<=128"
    if n <= 512:
        return "128-512"
    return "512+"


@dataclass(slots=True)
class SweepRow:
    gpus: int
    band: str
    estimates: list[Estimate]
    winner: str
    margin: float
    metric: str
    tie: bool = False  # margin below TIE_TOLERANCE or MFU gap inside the paired error bar
    gap_pts: float = 0.0  # MFU points between the winner and the runner-up
    paired_pts: float = 0.0  # the error bar the gap was held against (calibration.paired_spread)


def sweep(
    w: Workload,
    fabrics: list[FabricProfile],
    scales: list[int],
    *,
    knobs: Knobs | None = None,
    telemetry: dict[str, Telemetry] | None = None,
    port_costs: dict[str, float] | None = None,
    paired_pts: float = 0.0,
) -> list[SweepRow]:
    """Run the model at each scale; the winner and margin per scale are computed, never tabulated."""
    rows: list[SweepRow] = []
    for n in scales:
        wn = with_gpus(w, n)
        ests = [
            estimate(wn, f, knobs, (telemetry or {}).get(f.name), (port_costs or {}).get(f.name))
            for f in fabrics
        ]
        winner, _ = recommend(ests)
        metric, key = _metric(ests)
        ranked = sorted(ests, key=key)
        margin = key(ranked[1]) / key(ranked[0]) - 1.0 if len(ranked) > 1 else 0.0
        gap = abs(ranked[0].mfu - ranked[1].mfu) * 100.0 if len(ranked) > 1 else 0.0
        tie = len(ranked) > 1 and (is_tie(margin) or within_spread(ranked[0], ranked[1], paired_pts))
        rows.append(
            SweepRow(
                n, band(n), ests, winner, margin, "cost" if metric == "cost" else "days", tie, gap, paired_pts
            )
        )
    return rows


def band_summary(rows: list[SweepRow]) -> dict[str, str]:
    """Per band: which fabric won at which scales (ties named as such)."""
    out: dict[str, str] = {}
    for name in ("<=128", "128-512", "512+"):
        inside = [r for r in rows if r.band == name]
        if not inside:
            continue
        parts = []
        for r in inside:
            gap = f"{r.gap_pts:.1f} ± {r.paired_pts:.1f} pts paired"
            label = f"tie ({r.winner} by {r.margin:.2%}, {gap})" if r.tie else f"{r.winner} ({gap})"
            parts.append(f"{r.gpus}: {label}")
        winners = {r.winner for r in inside if not r.tie}
        head = winners.pop() if len(winners) == 1 else ("mixed" if winners else "tie")
        out[name] = f"{head} — " + "; ".join(parts)
    return out


def with_gpus(w: Workload, n: int) -> Workload:
    """The same workload on n GPUs (the sweep's one changing input)."""
    from dataclasses import replace

    return replace(w, gpus=n)


FABRIC_FIELDS = (
    "nic_bw",
    "wire_eff",
    "e2e_latency",
    "sharp_traffic",
    "sharp_eff",
    "sharp_share",
    "jitter_cv",
    "ecmp_collision_p",
    "ecmp_slowdown",
    "pause_fraction",
    "incident_rate",
    "port_cost",
)
KNOB_FIELDS = (
    "overlap_eff",
    "moe_overlap",
    "compute_jitter_cv",
    "bucket_params",
    "restart_hours",
    "ckpt_interval_hours",
)


def apply_overrides(
    profiles: list[FabricProfile], knobs: Knobs, items: list[str]
) -> tuple[list[FabricProfile], Knobs]:
    """``--set FABRIC.FIELD=V`` (FABRIC a profile, ``ib``, ``roce`` or ``all``) or ``model.KNOB=V``."""
    from dataclasses import replace

    for item in items:
        target, _, rest = item.partition(".")
        key, eq, raw = rest.partition("=")
        try:
            value = float(raw)
        except ValueError:
            eq = ""
        if not eq or not key:
            raise AdviseError(f"--set expects FABRIC.FIELD=NUMBER or model.KNOB=NUMBER, got {item!r}")
        if target == "model":
            if key not in KNOB_FIELDS:
                raise AdviseError(f"--set model.{key}: unknown knob; known: {', '.join(KNOB_FIELDS)}")
            knobs = replace(knobs, **{key: value})  # type: ignore[arg-type]
            continue
        if key not in FABRIC_FIELDS:
            raise AdviseError(f"--set {target}.{key}: unknown field; known: {', '.join(FABRIC_FIELDS)}")
        hit = [i for i, p in enumerate(profiles) if target in ("all", p.name, p.family)]
        if not hit:
            raise AdviseError(f"--set {item!r}: {target!r} is not a compared fabric, 'ib', 'roce' or 'all'")
        for i in hit:
            profiles[i] = profiles[i].with_values(f"--set {item}", **{key: value})
    return profiles, knobs


# --------------------------------------------------------------------------------------------
# Telemetry
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Telemetry:
    """Measured tail inputs for one fabric, replacing the assumed [A] defaults."""

    source: str
    step_jitter_mean: float | None = None  # seconds
    step_jitter_std: float | None = None  # seconds, per-rank step-time standard deviation
    pause_fraction: float | None = None
    hiccup_p: float = 0.0
    hiccup_delay: float = 0.0  # seconds
    distribution: str | None = None  # normal (default), exponential or lognormal
    fabric_values: dict[str, float] = field(default_factory=dict)
    """Measured profile inputs (``fabriccfg probe``): e2e_latency, wire_eff, jitter_cv."""


# verify/watch finding -> effect, by the finding's severity ("warning" / "critical"; "unknown" is
# ignored). The magnitudes are assumptions [A]: they fix the direction and rough size of the effect.
# pause: the fraction of time lossless queues are paused (a link paused f of the time delivers (1-f)
# of its bandwidth and a collective runs at its slowest link); hiccup: (p per rank per step, delay s).
FINDING_EFFECTS: dict[str, dict[str, tuple[float, float, float]]] = {
    # check id: {severity: (pause_fraction, hiccup_p, hiccup_delay_s)}
    "pfc-pause-storm": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 1e-3, 0.1)},
    "pfc-storm-origin": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 1e-3, 0.1)},
    "pfc-watchdog-fired": {"warning": (0.0, 1e-4, 0.1), "critical": (0.0, 1e-3, 0.1)},
    "ecn-congestion": {"warning": (0.005, 0.0, 0.0), "critical": (0.02, 0.0, 0.0)},
    "cnp-rate": {"warning": (0.005, 0.0, 0.0), "critical": (0.02, 0.0, 0.0)},
    "lossless-queue-drops": {"warning": (0.0, 1e-4, 0.05), "critical": (0.0, 1e-3, 0.05)},
    "ib-xmit-wait": {"warning": (0.01, 0.0, 0.0), "critical": (0.05, 0.0, 0.0)},
    "ib-link-downed": {"warning": (0.0, 1e-4, 1.0), "critical": (0.0, 1e-3, 1.0)},
    "ib-symbol-errors": {"warning": (0.0, 1e-5, 0.05), "critical": (0.0, 1e-4, 0.05)},
    "link-errors": {"warning": (0.0, 1e-5, 0.05), "critical": (0.0, 1e-4, 0.05)},
}
# Checks whose finding ``value`` is itself a share of time the link could not send (verify's
# checks/pfc-pause-storm.yaml "of the time paused", checks/ib-xmit-wait.yaml "of the time stalled"):
# that measured value replaces the severity default as the pause fraction.
VALUE_IS_PAUSE = frozenset({"pfc-pause-storm", "ib-xmit-wait"})
_CHECK_FAMILY = {
    "pfc-pause-storm": "roce",
    "pfc-storm-origin": "roce",
    "pfc-watchdog-fired": "roce",
    "ecn-congestion": "roce",
    "cnp-rate": "roce",
    "lossless-queue-drops": "roce",
    "ib-xmit-wait": "ib",
    "ib-link-downed": "ib",
    "ib-symbol-errors": "ib",
}


def load_telemetry(path: Path, fabrics: list[FabricProfile]) -> tuple[dict[str, Telemetry], list[str]]:
    """Read a telemetry JSON (own schema or ``verify --format json``) into per-fabric Telemetry.

    Own schema (all keys optional except one measurement)::

        {"source": "fabriccfg watch", "fabric": "roce-400g" | "roce" | "ib",
         "step_jitter_ms": {"mean": 3.0, "std": 12.0, "distribution": "normal"},
         "pause_fraction": 0.002,
         "hiccup": {"p": 1e-4, "delay_ms": 200}}

    ``fabric`` names a profile or a family; absent, the numbers apply to every compared fabric.
    verify output ``{"status": ..., "findings": [{"check": id, "severity": ...}, ...]}`` is mapped
    through FINDING_EFFECTS (worst severity per check; the largest pause share wins, hiccup
    probabilities add up) onto the fabrics of the check's family (PFC/ECN/CNP -> RoCE, ib-* -> IB,
    others -> all). pfc-pause-storm and ib-xmit-wait carry the measured share in ``value``.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise AdviseError(f"cannot read telemetry file {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise AdviseError(f"telemetry file {path} is not JSON: {exc.msg} at line {exc.lineno}") from None
    if not isinstance(doc, dict):
        raise AdviseError(f"telemetry file {path}: expected a JSON object")
    if doc.get("tool") == "fabriccfg probe":
        return _from_probe(doc, fabrics, path)
    if "findings" in doc:
        return _from_verify(doc, fabrics, path)
    return _from_stats(doc, fabrics, path)


def _num(doc: dict[str, Any], key: str, path: Path, lo: float = 0.0, hi: float = math.inf) -> float | None:
    val = doc.get(key)
    if val is None:
        return None
    if isinstance(val, bool) or not isinstance(val, int | float) or not lo <= val <= hi:
        raise AdviseError(f"telemetry file {path}: {key!r} must be a number in [{lo:g}, {hi:g}], got {val!r}")
    return float(val)


def _targets(spec: str | None, fabrics: list[FabricProfile]) -> list[FabricProfile]:
    if spec is None:
        return list(fabrics)
    return [f for f in fabrics if spec in (f.name, f.family)]


def _from_stats(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    source = str(doc.get("source", "telemetry"))
    jitter = doc.get("step_jitter_ms")
    mean = std = None
    dist = None
    if jitter is not None:
        if not isinstance(jitter, dict):
            raise AdviseError(f"telemetry file {path}: 'step_jitter_ms' must be an object with mean and std")
        mean = _num(jitter, "mean", path)
        std = _num(jitter, "std", path)
        if std is None:
            raise AdviseError(f"telemetry file {path}: 'step_jitter_ms' needs 'std'")
        dist = jitter.get("distribution")
        if dist is not None and dist not in src.JITTER_DISTRIBUTIONS:
            raise AdviseError(
                f"telemetry file {path}: distribution {dist!r} is not one of "
                f"{', '.join(src.JITTER_DISTRIBUTIONS)}"
            )
        if dist == "lognormal" and not mean:
            raise AdviseError(f"telemetry file {path}: a lognormal distribution needs a positive 'mean'")
    pause = _num(doc, "pause_fraction", path, 0.0, 0.99)
    hp = hd = 0.0
    if isinstance(doc.get("hiccup"), dict):
        hp = _num(doc["hiccup"], "p", path, 0.0, 1.0) or 0.0
        hd = (_num(doc["hiccup"], "delay_ms", path) or 0.0) / 1e3
    if std is None and pause is None and not hp:
        raise AdviseError(
            f"telemetry file {path}: no measurement found (expected step_jitter_ms, pause_fraction, "
            "hiccup, or verify's findings)"
        )
    spec = doc.get("fabric")
    targets = _targets(None if spec is None else str(spec), fabrics)
    if not targets:
        raise AdviseError(f"telemetry file {path}: fabric {spec!r} is not among the compared fabrics")
    tel = Telemetry(
        source=source,
        step_jitter_mean=None if mean is None else mean / 1e3,
        step_jitter_std=None if std is None else std / 1e3,
        pause_fraction=pause,
        hiccup_p=hp,
        hiccup_delay=hd,
        distribution=None if dist is None else str(dist),
    )
    names = ", ".join(f.name for f in targets)
    return {f.name: tel for f in targets}, [f"telemetry from {source} applied to {names}"]


def _fraction(value: object) -> float | None:
    """A number in [0, 1], else None (verify values may be null, counts or strings)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0.0 <= value <= 1.0 else None


def _from_verify(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    findings = doc.get("findings")
    if not isinstance(findings, list):
        raise AdviseError(f"telemetry file {path}: 'findings' must be a list")
    worst: dict[str, str] = {}
    measured: dict[str, float] = {}  # check -> largest measured share of time paused/stalled
    rank = {"warning": 1, "critical": 2}
    for item in findings:
        if not isinstance(item, dict):
            continue
        check = str(item.get("check") or item.get("id") or item.get("rule") or "")
        sev = str(item.get("severity", "warning")).lower()
        if check not in FINDING_EFFECTS or sev not in rank:
            continue  # unknown checks, and "unknown"/"ok" severities, carry no penalty
        if rank[sev] > rank.get(worst.get(check, ""), 0):
            worst[check] = sev
        share = _fraction(item.get("value"))
        if check in VALUE_IS_PAUSE and share is not None:
            measured[check] = max(measured.get(check, 0.0), share)
    source = f"fabriccfg verify (status {doc.get('status', '?')})"
    per_fabric: dict[str, list[tuple[float, float, float]]] = {f.name: [] for f in fabrics}
    notes: list[str] = []
    for check, sev in sorted(worst.items()):
        pause, hp, hd = FINDING_EFFECTS[check][sev]
        how = "by severity"
        if check in measured:
            pause, how = measured[check], "measured value"
        effect = (pause, hp, hd)
        family = _CHECK_FAMILY.get(check)
        hit = [f for f in fabrics if family is None or f.family == family]
        for f in hit:
            per_fabric[f.name].append(effect)
        notes.append(
            f"{check} ({sev}) -> pause {pause:g} ({how}), hiccup p {hp:g} x {hd * 1e3:g} ms "
            f"on {', '.join(f.name for f in hit) or 'no compared fabric'}"
        )
    if not worst:
        notes.append(f"{source}: no finding that maps to a penalty; defaults kept")
        return {}, notes
    notes.append(
        "a verify report is a snapshot: the estimate assumes that state lasts the whole run "
        "(pause: the largest share; hiccups add up)"
    )
    out: dict[str, Telemetry] = {}
    for name, effects in per_fabric.items():
        if not effects:
            continue
        pause = min(0.99, max(e[0] for e in effects))  # storm, origin, ECN see the same links
        hp = min(1.0, sum(e[1] for e in effects))
        hd = max((e[2] for e in effects if e[1] > 0), default=0.0)
        out[name] = Telemetry(source=source, pause_fraction=pause, hiccup_p=hp, hiccup_delay=hd)
    return out, notes


PROBE_Z999 = NormalDist().inv_cdf(0.999)
"""Phi^-1(0.999) = 3.090: the 99.9th percentile of N(0,1), for the lognormal fit through p50 and p99.9."""


def probe_sigma_ln(p50: float, p999: float) -> float:
    """Lognormal shape through a median and a 99.9th percentile: ln(p99.9 / p50) / Phi^-1(0.999)."""
    if p50 <= 0 or p999 < p50:
        return 0.0
    return math.log(p999 / p50) / PROBE_Z999


def _from_probe(
    doc: dict[str, Any], fabrics: list[FabricProfile], path: Path
) -> tuple[dict[str, Telemetry], list[str]]:
    """``fabriccfg probe --format json``: measured latency, jitter and busbw for the probed fabric.

    - ``e2e_latency`` (us) := median p50 of the pairs that cross a spine (all pairs when none does);
    - ``wire_eff`` := median over rails of the rail's lowest all_reduce_perf busbw / line rate
      (nccl-tests busbw is comparable to line rate for any rank count, PERFORMANCE.md);
    - ``jitter_cv`` := the per-rank fabric-time CV of the slowest path: per pair a lognormal is fitted
      through p50 and p99.9 (sigma_ln = ln(p99.9/p50) / Phi^-1(0.999)), the largest sigma_ln is
      kept (the step waits for the slowest rank, whose traffic crosses the worst path) and
      cv = sqrt(exp(sigma_ln^2) - 1) (lognormal moments). The straggler term then stays
      E[max of n ranks] of Normal(0, sqrt((cv_c T_comp)^2 + (cv T_fabric)^2)) (analytics §2.1, exact
      or Blom), so the change is attributable to the measured input alone. Treating the per-message
      tail as the per-step tail assumes the slow messages of a step are correlated (pause and queue
      build-up events are): an upper bound.
    """
    tech = str(doc.get("technology", ""))
    family = {"roce": "roce", "infiniband": "ib"}.get(tech)
    targets = [f for f in fabrics if f.family == family]
    if family is None or not targets:
        raise AdviseError(
            f"telemetry file {path}: the probe measured a {tech or 'unknown'} fabric; none of the compared "
            f"fabrics ({', '.join(f.name for f in fabrics)}) is of that family"
        )
    results = doc.get("results")
    if not isinstance(results, list):
        raise AdviseError(f"telemetry file {path}: 'results' must be a list")
    values: dict[str, float] = {}
    measured: list[str] = []
    lat = [r for r in results if isinstance(r, dict) and isinstance(r.get("latency_us"), dict)]
    shapes: list[tuple[float, str]] = []
    for r in lat:
        x = r["latency_us"]
        p50, p999 = x.get("typical"), x.get("p999")
        if isinstance(p50, int | float) and isinstance(p999, int | float):
            shapes.append((probe_sigma_ln(float(p50), float(p999)), str(r.get("pair", "?"))))
    if shapes:
        sigma, worst = max(shapes)
        values["jitter_cv"] = math.sqrt(math.expm1(sigma * sigma))
        crossing = [r for r in lat if r.get("kind") != "same-leaf"] or lat
        values["e2e_latency"] = statistics.median(float(r["latency_us"]["typical"]) for r in crossing)
        measured.append(
            f"jitter cv {values['jitter_cv']:.3f} (lognormal through p50/p99.9 of the slowest path {worst}, "
            f"sigma_ln {sigma:.3f})"
        )
        measured.append(f"e2e latency {values['e2e_latency']:.2f} us (median p50 of {len(crossing)} pairs)")
    rate = doc.get("line_rate_gbytes")
    rails: dict[int, float] = {}
    for r in results:
        bus = r.get("busbw_gbytes") if isinstance(r, dict) else None
        if isinstance(bus, int | float):
            rail = int(r.get("rail", 0))
            rails[rail] = min(rails.get(rail, math.inf), float(bus))
    if rails and isinstance(rate, int | float) and rate > 0:
        values["wire_eff"] = min(1.0, statistics.median(rails.values()) / float(rate))
        measured.append(
            f"wire efficiency {values['wire_eff']:.2f} (busbw/line rate, median of {len(rails)} rails)"
        )
    if not values:
        raise AdviseError(f"telemetry file {path}: the probe document has no latency or busbw result")
    source = f"fabriccfg probe of {doc.get('fabric', '?')} ({doc.get('status', '?')})"
    tel = Telemetry(source=source, fabric_values=values)
    names = ", ".join(f.name for f in targets)
    assumed = "compute jitter cv, ECMP collision probability, pause fraction, incident rate, hiccups"
    notes = [f"measured ({source}) on {names}: " + "; ".join(measured), f"still assumed [A]: {assumed}"]
    return {f.name: tel for f in targets}, notes
