"""Every default the advisor uses, each with its source and evidence tag.

Numbers come from ``shared/reference/analytics.md`` (section numbers below refer to it). Tags follow
that sheet: **V** read in the cited primary source, **S** secondary source quoting the primary,
**R** recalled from the literature (not confirmed), **C** computed for the sheet or here (not
evidence). This module adds **A**: a modelling assumption of this tool with no public source (the
sheet's gap 4: no per-fabric jitter dataset exists); these are the numbers to replace with
measurements (``--from-telemetry``). **U** marks a value the user gave (option, ``--set``, telemetry).

Keeping values and citations together is the point: ``fabriccfg advise --explain`` prints them.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

Tag = Literal["V", "S", "R", "C", "A", "U"]

TAG_MEANING: dict[str, str] = {
    "V": "read in the cited primary source",
    "S": "secondary source quoting the primary",
    "R": "recalled from the literature, not confirmed",
    "C": "computed (not evidence)",
    "A": "modelling assumption of this tool, no public source; calibrate with telemetry",
    "U": "given by the user: a command-line option, --set or --from-telemetry",
}


@dataclass(frozen=True, slots=True)
class Cited:
    """A number with its unit, evidence tag and source, so no default is anonymous."""

    value: float
    unit: str
    source: str
    note: str = ""
    tag: Tag = "V"

    def __float__(self) -> float:
        return float(self.value)

    def label(self) -> str:
        return f"{self.value:g} {self.unit} [{self.tag}]".replace("  ", " ")


# --------------------------------------------------------------------------------------------
# GPUs
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GpuSpec:
    """One accelerator: dense BF16 peak, memory, NVLink and a rental price anchor."""

    name: str
    peak_bf16: Cited  # FLOP/s, dense
    hbm: Cited  # GB
    nvlink: Cited  # GB/s per GPU per direction, effective (used for TP inside a node)
    price: Cited | None  # $ per GPU-hour; None when the sheet gives no anchor
    base_eff: Cited  # fraction of peak reached when no communication is exposed (calibrated)
    gpus_per_node: int = 8


# Base efficiency per GPU generation (issue 18). It was one constant (0.55, the §7 worked example
# [C]); the calibration set showed that A100 runs need more and H100 runs less (H100 kernels reach
# a smaller share of a 3x higher peak). Each value is the least-squares fit of that GPU's *fit*
# entries in advise/calibration.yaml (held-out entries excluded); tests/advise/test_calibration.py
# re-fits and fails when a value here drifts from what the data gives.
A100_BASE_EFF = Cited(
    0.62,
    "of peak",
    "fit to the A100 calibration entries (Korthikanti et al. MLSys'23 Table 5; Narayanan et al. SC'21)",
    "docs/advise.md calibration table; held-out entries not used",
    tag="C",
)
H100_BASE_EFF = Cited(
    0.525,
    "of peak",
    "fit to the H100 calibration entry Llama 3 405B on 8,192 GPUs (Llama 3 paper Table 4)",
    "the 16,384-GPU row is held out; docs/advise.md calibration table",
    tag="C",
)
_NO_CAL_EFF = Cited(
    H100_BASE_EFF.value,
    "of peak",
    "no calibration entry for this GPU: the H100 value is used",
    "add a published run to advise/calibration.yaml to calibrate it",
    tag="A",
)

GPUS: dict[str, GpuSpec] = {
    "a100": GpuSpec(
        name="A100 80GB SXM",
        peak_bf16=Cited(312e12, "FLOP/s", "torchtitan get_peak_flops (analytics §3.1, §5)", tag="V"),
        hbm=Cited(80, "GB", "NVIDIA A100 80GB datasheet", "not in the sheet", tag="R"),
        nvlink=Cited(
            300 * 0.6,
            "GB/s",
            "calculon A100 NVLink 300 GB/s at efficiency 0.6 (analytics §6)",
            "300 GB/s x 0.6",
            tag="V",
        ),
        price=Cited(
            1.90,
            "$/GPU-h",
            "2026 market rates A100 80GB $0.8-3/h (mercatus-ai, pricegpu; analytics §3.3)",
            "midpoint of the quoted range; volatile",
            tag="S",
        ),
        base_eff=A100_BASE_EFF,
    ),
    "h100": GpuSpec(
        name="H100 SXM",
        peak_bf16=Cited(989e12, "FLOP/s", "torchtitan get_peak_flops (analytics §3.1, §5)", tag="V"),
        hbm=Cited(80, "GB", "NVIDIA H100 SXM datasheet", "not in the sheet", tag="R"),
        nvlink=Cited(
            370,
            "GB/s",
            "nccl-tests #212: NVLink 450 GB/s line, ~370 GB/s effective busbw (analytics §1.2, §5)",
            tag="V",
        ),
        price=Cited(
            3.50,
            "$/GPU-h",
            "2026 market rates H100 SXM $1.99-5/h on demand (mercatus-ai, disintermediate.global, "
            "pricegpu; analytics §3.3)",
            "midpoint of the quoted range; reserved is 30-50% cheaper; DeepSeek-V3 assumed $2 for H800",
            tag="S",
        ),
        base_eff=H100_BASE_EFF,
    ),
    "h200": GpuSpec(
        name="H200 SXM",
        peak_bf16=Cited(989e12, "FLOP/s", "torchtitan get_peak_flops (analytics §3.1)", tag="V"),
        hbm=Cited(141, "GB", "NVIDIA H200 datasheet", "not in the sheet", tag="R"),
        nvlink=Cited(
            370, "GB/s", "same NVLink 4 as H100 (nccl-tests #212)", "assumed equal to H100", tag="R"
        ),
        price=None,
        base_eff=_NO_CAL_EFF,
    ),
    "b200": GpuSpec(
        name="B200",
        peak_bf16=Cited(
            2.25e15,
            "FLOP/s",
            "downstream torchtitan copy (analytics §3.1)",
            "one copy returns 4.5e15, the sparse figure; halved to dense",
            tag="S",
        ),
        hbm=Cited(192, "GB", "NVIDIA B200 datasheet", "not in the sheet", tag="R"),
        nvlink=Cited(740, "GB/s", "NVLink 5 is 2x NVLink 4", "2 x the H100 effective value", tag="R"),
        price=None,
        base_eff=_NO_CAL_EFF,
    ),
}


# --------------------------------------------------------------------------------------------
# Fabrics
# --------------------------------------------------------------------------------------------


# Per-rank jitter shapes (analytics §2.1): normal uses E[max] by exact integral or Blom; exponential
# E[max] = H_N / lambda; lognormal exp(mu_ln + sigma_ln z_N). Default normal [A]; telemetry may say.
JITTER_DISTRIBUTIONS = ("normal", "exponential", "lognormal")

SHARP_SHARE = Cited(
    1.0,
    "fraction",
    "assumption: the job gets the switch aggregation trees for all of its DP all-reduce traffic",
    "Quantum HDR firmware: 'SHARP (SAT) is at Beta', later 'supports running 2 flows in parallel' [V] "
    "(analytics §1.4): concurrent jobs/communicators fall back to ring/tree; lower this to model it",
    tag="A",
)


@dataclass(frozen=True, slots=True)
class FabricProfile:
    """Per-NIC bandwidth, latency, SHARP and the tail inputs of one back-end fabric."""

    name: str
    family: Literal["ib", "roce"]
    description: str
    nic_bw: Cited  # GB/s per NIC (one NIC per GPU, rail-optimized)
    wire_eff: Cited  # achievable fraction of line rate for large transfers
    e2e_latency: Cited  # µs, small-message end-to-end across a leaf-spine hop (added to NCCL's alpha)
    sharp: bool
    sharp_traffic: Cited  # all-reduce bytes per NIC, as a multiple of S/g, with in-network reduction
    sharp_eff: Cited  # extra bandwidth factor on the SHARP path
    jitter_cv: Cited  # per-rank coefficient of variation of fabric time per step
    ecmp_collision_p: Cited  # probability, per rank and collective, that its flow shares a link
    ecmp_slowdown: Cited  # transfer-time multiplier for a colliding flow
    pause_fraction: Cited  # fraction of time lossless queues are paused (RoCE PFC; IB credit stalls)
    incident_rate: Cited  # unexpected interruptions per GPU-hour (all causes)
    port_cost: Cited | None = None  # $ per NIC-port-hour incl. its share of switch ports
    sharp_share: Cited = SHARP_SHARE  # fraction of DP all-reduce traffic that gets SHARP trees
    jitter_dist: str = "normal"  # per-rank jitter distribution: normal, exponential or lognormal
    # None: the ECMP term is 1 + (1-(1-p)^n)(slowdown-1) from the two fields above; "contiguous" or
    # "random": derived from the job's placement on rail leaves instead (advise/ecmp.py, issue 18)
    ecmp_placement: str | None = None
    overrides: dict[str, str] = field(default_factory=dict)  # what replaced a default, and from where

    def with_values(self, source: str, **values: float) -> FabricProfile:
        """A copy with some numeric inputs replaced (e.g. from telemetry), remembering the source."""
        changed: dict[str, Cited] = {}
        for key, val in values.items():
            old = getattr(self, key)
            unit = old.unit if isinstance(old, Cited) else "$/port-h"
            changed[key] = Cited(val, unit, source, "measured/overridden", tag="U")
        overrides = dict(self.overrides)
        overrides.update({k: source for k in values})
        return replace(self, overrides=overrides, **changed)  # type: ignore[arg-type]


_LLAMA3_RATE = Cited(
    419 / (54 * 24 * 16384),
    "per GPU-h",
    "Llama 3 405B: 419 unexpected interruptions in 54 days on 16,384 H100 (analytics §2.2)",
    "network switch/cable was 8.4% of them; no source splits IB vs RoCE, so every fabric gets the same rate",
    tag="S",
)
_WIRE_EFF = Cited(
    0.9,
    "of line rate",
    "calculon IB network efficiency 0.9 (analytics §6)",
    "nccl#1368 measured ~95% on 4x400G RoCE (§1.2); 0.9 is used for every fabric for a fair comparison",
    tag="V",
)
_NO_SHARP = Cited(0.0, "x S/g", "no in-network reduction on this fabric", tag="V")
_SHARP_TRAFFIC = Cited(
    1.0,
    "x S/g",
    "calculon SHARP encoding [scalar 1.0, offset 0] vs ring [2.0, -1]; nccl-tests #238 (analytics §1.4)",
    "each NIC sends S/g up once and receives S/g down once, instead of 2(N-1)/N x S/g",
    tag="V",
)
_SHARP_EFF = Cited(
    1.0,
    "x",
    "calculon applies the same network efficiency to SHARP (analytics §1.4)",
    "NCCL's tuner multiplies CollNetDirect busBw by 0.85 on Hopper (§1.3); override to be pessimistic",
    tag="V",
)
_IB_HDR_BW = Cited(25.0, "GB/s", "IB HDR 200 Gb/s per 4x port; ConnectX-6 (analytics §5)", tag="V")
_IB_LAT = Cited(
    3.7,
    "µs",
    "DeepSeek ISCA'25: IB 2.8 us same-leaf / 3.7 us cross-leaf for 64 B (analytics §4.5)",
    "measured on NDR; HDR switch hop ~130 ns [R]",
    tag="R",
)
_ROCE_LAT = Cited(
    5.6,
    "µs",
    "DeepSeek ISCA'25: RoCE 3.6 us same-leaf / 5.6 us cross-leaf for 64 B (analytics §4.5)",
    "Ethernet hop 400-600 ns vs IB <100-150 ns [S]",
    tag="R",
)
_IB_JITTER = Cited(
    0.05,
    "cv",
    "assumption: credit-based lossless links and adaptive routing keep fabric-time variance low",
    "no public per-fabric jitter data (analytics §9 gap 4); replace with --from-telemetry",
    tag="A",
)
_ROCE_JITTER = Cited(
    0.10,
    "cv",
    "untuned RoCE: ECMP hashing, PFC and ECN/DCQCN add variance (analytics §4.1-4.4, §4.6); "
    "--roce-tuning tuned sets the IB value",
    "no public per-fabric jitter data (analytics §9 gap 4); replace with --from-telemetry",
    tag="A",
)
_IB_ECMP = Cited(
    0.0,
    "p",
    "IB adaptive routing by the subnet manager instead of static ECMP (analytics §4.6)",
    tag="A",
)
_ROCE_ECMP = Cited(
    1e-4,
    "p",
    "untuned RoCE: 5-tuple ECMP over few elephant flows collides (Meta SIGCOMM'24 'low flow entropy', "
    "Alibaba HPN hash polarization; analytics §4.1, §4.3)",
    "1 - (1-p)^N gives +5% at 512 and +34% at 4096 ranks; Meta saw up to 40% from fixing ECMP [S]; "
    "--roce-tuning tuned sets 0",
    tag="A",
)
_ECMP_SLOWDOWN = Cited(
    2.0,
    "x",
    "two elephant flows hashed onto one link each get half its bandwidth",
    "Alibaba HPN: few periodic bursty flows -> hash polarization (§4.3)",
    tag="C",
)
_NO_PAUSE = Cited(
    0.0,
    "fraction",
    "Meta: no persistent PFC from production training traffic in 4 years (analytics §4.1)",
    "set from verify/watch telemetry (pause storms, watchdogs)",
    tag="S",
)

_IB_NO_PAUSE = Cited(
    0.0,
    "fraction",
    "IB credit-based lossless links: no PFC pause frames (analytics §4.6)",
    "credit stalls show as PortXmitWait; set from verify/watch telemetry (ib-xmit-wait)",
    tag="S",
)

def _ib(name: str, description: str, nic_bw: Cited, *, sharp: bool) -> FabricProfile:
    """An InfiniBand profile: the IB latency, tail and credit-stall inputs; SHARP on or off."""
    return FabricProfile(
        name=name,
        family="ib",
        description=description,
        nic_bw=nic_bw,
        wire_eff=_WIRE_EFF,
        e2e_latency=_IB_LAT,
        sharp=sharp,
        sharp_traffic=_SHARP_TRAFFIC if sharp else _NO_SHARP,
        sharp_eff=_SHARP_EFF,
        jitter_cv=_IB_JITTER,
        ecmp_collision_p=_IB_ECMP,
        ecmp_slowdown=_ECMP_SLOWDOWN,
        pause_fraction=_IB_NO_PAUSE,
        incident_rate=_LLAMA3_RATE,
    )


def _roce(name: str, description: str, nic_bw: Cited) -> FabricProfile:
    """A RoCE v2 profile (PFC + ECN, ECMP): the RoCE latency and tail inputs, no in-network reduction."""
    return FabricProfile(
        name=name,
        family="roce",
        description=description,
        nic_bw=nic_bw,
        wire_eff=_WIRE_EFF,
        e2e_latency=_ROCE_LAT,
        sharp=False,
        sharp_traffic=_NO_SHARP,
        sharp_eff=_SHARP_EFF,
        jitter_cv=_ROCE_JITTER,
        ecmp_collision_p=_ROCE_ECMP,
        ecmp_slowdown=_ECMP_SLOWDOWN,
        pause_fraction=_NO_PAUSE,
        incident_rate=_LLAMA3_RATE,
    )


FABRICS: dict[str, FabricProfile] = {
    p.name: p
    for p in (
        _ib(
            "ib-hdr-sharp",
            "InfiniBand HDR 200G (Quantum QM87xx, ConnectX-6) with SHARP in-network all-reduce",
            _IB_HDR_BW,
            sharp=True,
        ),
        _ib("ib-hdr", "InfiniBand HDR 200G without SHARP (ring/tree all-reduce)", _IB_HDR_BW, sharp=False),
        _roce(
            "roce-400g",
            "400G RoCE v2 (Spectrum-4 / Tomahawk class), PFC + ECN, ECMP",
            Cited(
                50.0, "GB/s", "400 Gb/s per NIC; nccl#1368 4x400G RoCE ring busbw ~190 GB/s (§1.2)", tag="V"
            ),
        ),
        _roce(
            "roce-200g",
            "200G RoCE v2, PFC + ECN, ECMP (same link speed as HDR)",
            Cited(25.0, "GB/s", "200 Gb/s per NIC", tag="V"),
        ),
        _ib(
            "ib-ndr-sharp",
            "InfiniBand NDR 400G (Quantum-2, ConnectX-7) with SHARPv3",
            Cited(50.0, "GB/s", "IB NDR 400 Gb/s; QM97xx manual, SHARP v3.2 doc (analytics §5)", tag="V"),
            sharp=True,
        ),
    )
}

DEFAULT_FABRICS: tuple[str, ...] = ("ib-hdr-sharp", "ib-hdr", "roce-400g")

# --roce-tuning (issue 18). "untuned": the profiles above (static ECMP collisions, twice IB's
# jitter). "tuned": what Meta did to run Llama 3 405B on RoCE at 16K GPUs - E-ECMP hashing on the
# RoCE QP plus NCCL QP scaling ("up to 40%" better AllReduce than baseline ECMP, SIGCOMM'24 via
# the engineering.fb.com 2024-08-05 post [S]), topology-aware collectives and placement, tuned
# congestion control - after which Meta reports both its 24K RoCE and 24K InfiniBand clusters ran
# GenAI training "without any network bottlenecks" (engineering.fb.com 2024-03-12, "Building
# Meta's GenAI Infrastructure" [S]) and applied the same three optimisations to both to reach
# equivalent performance (engineering.fb.com 2024-06-12, "How Meta trains large language models at
# scale", as summarised by sysdesign-wiki [S]). The advisor encodes that as: no ECMP collisions and
# the same per-rank jitter as IB. Bandwidth, latency and SHARP are unchanged.
ROCE_TUNINGS: tuple[str, ...] = ("untuned", "tuned")
TUNED_ROCE_ECMP = Cited(
    0.0,
    "p",
    "tuned RoCE: E-ECMP on the RoCE QP + NCCL QP scaling, up to 40% better AllReduce than baseline "
    "ECMP (Meta SIGCOMM'24 / engineering.fb.com 2024-08-05; analytics §4.1)",
    tag="S",
)
TUNED_ROCE_JITTER = Cited(
    _IB_JITTER.value,
    "cv",
    "tuned RoCE: Meta ran its 24K RoCE and 24K IB clusters 'without any network bottlenecks' "
    "(engineering.fb.com 2024-03-12) -> the IB jitter assumption",
    "the equality is the assumption [A]; no per-fabric jitter data exists (analytics §9 gap 4)",
    tag="A",
)


def with_roce_tuning(profile: FabricProfile, tuning: str) -> FabricProfile:
    """The profile under ``--roce-tuning``: RoCE profiles lose ECMP collisions and IB-level jitter."""
    if tuning not in ROCE_TUNINGS:
        raise ValueError(f"roce tuning must be one of {', '.join(ROCE_TUNINGS)}, got {tuning!r}")
    if profile.family != "roce" or tuning == "untuned":
        return profile
    changed: dict[str, Cited] = {}
    if "ecmp_collision_p" not in profile.overrides:  # --set / telemetry win over the profile
        changed["ecmp_collision_p"] = TUNED_ROCE_ECMP
    if "jitter_cv" not in profile.overrides:
        changed["jitter_cv"] = TUNED_ROCE_JITTER
    return replace(profile, description=profile.description + "; tuned (E-ECMP + QP scaling)", **changed)  # type: ignore[arg-type]


# --------------------------------------------------------------------------------------------
# Collective-library, workload and operations defaults
# --------------------------------------------------------------------------------------------

NCCL_BASE_LAT = Cited(8.4, "µs", "NCCL tuning.cc Ring/Tree baseLat, Simple (analytics §1.3)", tag="V")
NCCL_RING_NET_LAT = Cited(14.0, "µs", "NCCL tuning.cc Ring hwLat NET, Simple (analytics §1.3)", tag="V")
NCCL_TREE_NET_LAT = Cited(28.0, "µs", "NCCL tuning.cc Tree hwLat NET, Simple (analytics §1.3)", tag="V")
NCCL_COLLNET_NET_LAT = Cited(30.0, "µs", "NCCL tuning.cc CollNetChain NET, Simple (analytics §1.3)", tag="V")
NCCL_NVLINK_LAT = Cited(3.4, "µs", "NCCL tuning.cc Ring hwLat NVLink, Simple (analytics §1.3)", tag="V")
NCCL_TREE_BW_FACTOR = Cited(0.92, "x", "NCCL tuning.cc multiplies tree bus bandwidth by 0.92 (§1.3)", tag="V")

BASE_EFFICIENCY = Cited(
    0.55,
    "of peak",
    "analytics §7 worked example: compute at 55% of peak when communication-free",
    "superseded by the per-GPU calibrated GpuSpec.base_eff (issue 18); kept as the sheet's example",
    tag="C",
)
RECOMPUTE_FACTOR: dict[str, Cited] = {
    "none": Cited(1.0, "x FLOPs", "no activation recomputation", tag="V"),
    "selective": Cited(
        1.0,
        "x FLOPs",
        "Korthikanti et al. MLSys'23 Table 5: selective recomputation + sequence parallelism costs "
        "1-2 points (MFU 56.3% vs HFU 57.0% for 1T)",
        "absorbed in the base efficiency; Megatron's default for large models",
        tag="S",
    ),
    "full": Cited(
        4 / 3,
        "x FLOPs",
        "Narayanan et al. SC'21 eq. 3 counts 4 passes (8 N FLOPs per token instead of 6 N) with full "
        "recomputation",
        "its TFLOP/s and % of peak are therefore HFU; the advisor reports both",
        tag="S",
    ),
}
COMPUTE_JITTER_CV = Cited(
    0.005,
    "cv",
    "assumption: per-rank compute-time variation (clocks, thermals, host noise)",
    "fabric-independent; Hoefler et al. SC'10: noise, not bandwidth, bounds scalability [V]",
    tag="A",
)
SEQ_LEN = Cited(4096, "tokens", "analytics §7 worked example (s=4096)", tag="C")
GLOBAL_BATCH = Cited(
    1024, "sequences", "analytics §7 worked example: 1,024 sequences = 4.19M tokens per step", tag="C"
)
MICRO_BATCH = Cited(1, "sequences", "Megatron default micro-batch for large models", tag="R")
ASPECT_RATIO = Cited(
    128,
    "h/L",
    "analytics §7: 100B dense = L=80, h=10240 (h/L = 128); shape derived from N = 12 L h^2",
    tag="C",
)
GRAD_BYTES = Cited(
    4, "bytes", "Megatron reduces gradients in fp32 unless configured otherwise (analytics §1.5)", tag="R"
)
BUCKET_PARAMS = Cited(
    40e6, "params", "Megatron DDP bucket size default (40M parameters)", "one alpha per bucket", tag="R"
)
OVERLAP_EFF = Cited(
    1.0,
    "x",
    "Megatron overlap_grad_reduce / overlap_param_gather: DP collectives hide under the backward "
    "of the last micro-batch and the forward of the first (Narayanan SC'21 [R])",
    "window = T_comp/m + (v-1)/v x bubble (issue 18: interleaved stages' gradients reduce during the "
    "drain; without it Llama 3 405B at 16K was ~0.5 s/step too slow); the last bucket is always exposed",
    tag="A",
)
PP_INTERLEAVE = Cited(
    0,
    "virtual stages",
    "0 = automatic: L // pp virtual stages (one layer each) when pp > 1 and m >= pp; bubble "
    "(p-1)/(v m) (Narayanan et al. SC'21, §3.1)",
    "NeMo 24.12 performance summary runs GPT-3 175B PP8/VP6, Llama 2 70B PP4/VP20, Nemotron-340B "
    "PP8/VP12 (docs.nvidia.com); vpp = 1 under-predicted Llama 3 405B by 10-18 points (issue 18)",
    tag="V",
)
MOE_TOP_K = Cited(2, "experts/token", "common MoE routing (GShard/Mixtral top-2)", tag="R")
MOE_OVERLAP = Cited(
    0.0,
    "fraction",
    "MoE all-to-all is on the critical path unless hidden (DeepSeek-V3 DualPipe, §1.5)",
    tag="A",
)
RESTART_HOURS = Cited(
    10 / 60,
    "h",
    "assumption: time to detect, replace and restart after an interruption",
    "with CKPT_INTERVAL gives ETTR ~0.9 at 16K GPUs, as Llama 3 reports >90% [S]",
    tag="A",
)
CKPT_INTERVAL_HOURS = Cited(
    0.25, "h", "assumption: checkpoint interval; half of it is lost per interruption on average", tag="A"
)

# nccl-tests busbw factors (analytics §1.2) are formulas, see model.busbw_factor.
