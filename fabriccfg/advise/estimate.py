"""The step-time / MFU / cost estimate of one workload on one fabric (the equation in
:mod:`fabriccfg.advise.model`).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from fabriccfg.advise import sources as src
from fabriccfg.advise.ecmp import derive as derive_ecmp
from fabriccfg.advise.formulas import (
    alltoall,
    blom_max_normal,
    busbw_factor,
    expected_max_delay,
    expected_max_normal,
    flops_per_token,
    p_any,
    ring_allreduce,
    ring_rs_or_ag,
    sharp_allreduce,
    tree_allreduce,
)
from fabriccfg.advise.inputs import (
    Knobs,
    Shape,
    Workload,
    base_efficiency,
    derive_shape,
    gpu_spec,
    resolve_vpp,
    validate,
)
from fabriccfg.advise.sources import FabricProfile
from fabriccfg.advise.telemetry_input import Telemetry


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
    if fab.ecmp_placement is not None and "ecmp_collision_p" not in fab.overrides:
        # issue 18: the slowdown derived from where the job sits (balls into bins on the rail
        # leaves' uplinks), in place of the assumed per-rank probability; --set still wins
        ecmp = derive_ecmp(n, tp=w.tp, pp=w.pp, gpus_per_node=g, placement=fab.ecmp_placement).slowdown
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
