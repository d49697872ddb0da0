"""Step-time, MFU and cost model for comparing training fabrics (plain Python, documented formulas).

The model is split by what each part does: :mod:`.formulas` (textbook formulas), :mod:`.inputs`
(workload, knobs, shape), :mod:`.estimate` (the equation below), :mod:`.recommend` (winner, ties,
sweep) and :mod:`.telemetry_input` (findings, probe and stats as model inputs). This module gathers
their names for callers that use ``advise.model``.

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

from fabriccfg.advise.ecmp import PLACEMENTS, with_placement
from fabriccfg.advise.ecmp import derive as derive_ecmp
from fabriccfg.advise.estimate import (
    Estimate,
    _dp_allreduce,
    _memory_gb,
    _tail_source,
    estimate,
)
from fabriccfg.advise.formulas import (
    _INV_SQRT_2PI,
    _SQRT2,
    alltoall,
    blom_max_normal,
    busbw_factor,
    expected_max_delay,
    expected_max_normal,
    flops_per_token,
    harmonic,
    p_any,
    ring_allreduce,
    ring_rs_or_ag,
    sharp_allreduce,
    tree_allreduce,
)
from fabriccfg.advise.inputs import (
    AdviseError,
    Knobs,
    Shape,
    Workload,
    _suggest,
    base_efficiency,
    derive_shape,
    fabric_profile,
    gpu_spec,
    resolve_vpp,
    validate,
)
from fabriccfg.advise.recommend import (
    FABRIC_FIELDS,
    KNOB_FIELDS,
    TIE_TOLERANCE,
    SweepRow,
    _metric,
    _why,
    apply_overrides,
    band,
    band_summary,
    is_tie,
    paired_text,
    recommend,
    sweep,
    tied_with,
    with_gpus,
    within_spread,
)
from fabriccfg.advise.telemetry_input import (
    _CHECK_FAMILY,
    FINDING_EFFECTS,
    PROBE_Z999,
    VALUE_IS_PAUSE,
    Telemetry,
    _fraction,
    _from_probe,
    _from_stats,
    _from_verify,
    _num,
    _targets,
    load_telemetry,
    probe_sigma_ln,
)

__all__ = [
    "FABRIC_FIELDS",
    "FINDING_EFFECTS",
    "KNOB_FIELDS",
    "PLACEMENTS",
    "PROBE_Z999",
    "TIE_TOLERANCE",
    "VALUE_IS_PAUSE",
    "_CHECK_FAMILY",
    "_INV_SQRT_2PI",
    "_SQRT2",
    "AdviseError",
    "Estimate",
    "Knobs",
    "Shape",
    "SweepRow",
    "Telemetry",
    "Workload",
    "_dp_allreduce",
    "_fraction",
    "_from_probe",
    "_from_stats",
    "_from_verify",
    "_memory_gb",
    "_metric",
    "_num",
    "_suggest",
    "_tail_source",
    "_targets",
    "_why",
    "alltoall",
    "apply_overrides",
    "band",
    "band_summary",
    "base_efficiency",
    "blom_max_normal",
    "busbw_factor",
    "derive_ecmp",
    "derive_shape",
    "estimate",
    "expected_max_delay",
    "expected_max_normal",
    "fabric_profile",
    "flops_per_token",
    "gpu_spec",
    "harmonic",
    "is_tie",
    "load_telemetry",
    "p_any",
    "paired_text",
    "probe_sigma_ln",
    "recommend",
    "resolve_vpp",
    "ring_allreduce",
    "ring_rs_or_ag",
    "sharp_allreduce",
    "sweep",
    "tied_with",
    "tree_allreduce",
    "validate",
    "with_gpus",
    "with_placement",
    "within_spread",
]
