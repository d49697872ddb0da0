"""Published training runs as a calibration set: load, reproduce, measure the advisor's error.

Why: the advisor's absolute numbers (MFU, step time, cost) mean little until they are held against
real runs. ``calibration.yaml`` lists each run with its source, the settings that reproduce it and
the allowed error; this module runs the model on them, fits the per-GPU base efficiency on the
``fit`` entries only, and turns the residuals into the error bar every printed number carries.
"""

from __future__ import annotations

import itertools
import math
import shlex
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabriccfg.advise import model as mdl
from fabriccfg.advise import sources as src

Role = Literal["fit", "holdout", "limit"]


class CalibrationError(ValueError):
    """A calibration file that cannot be used, named by file and entry."""


class Entry(BaseModel):
    """One published run and how to reproduce it with the advisor."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    title: str
    source: str
    evidence: str
    hardware: str
    network: str
    fabric: str
    roce_tuning: Literal["untuned", "tuned"] = "untuned"
    gpu: str
    gpus: int = Field(gt=0)
    params: float = Field(gt=0)
    layers: int = Field(gt=0)
    hidden: int = Field(gt=0)
    tp: int = Field(gt=0)
    pp: int = Field(gt=0)
    vpp: int | None = Field(default=None, gt=0)
    seq_len: int = Field(gt=0)
    global_batch: int = Field(gt=0)
    micro_batch: int = Field(default=1, gt=0)
    recompute: Literal["none", "selective", "full"] = "selective"
    # False when the source says DP gradient all-reduces were not overlapped with the backward
    # pass (Korthikanti et al. §6.3): the advisor then runs with --set model.overlap_eff=0
    dp_overlap: bool = True
    metric: Literal["mfu", "hfu"]
    published: float = Field(gt=0, le=1)
    tflops: float | None = None
    tolerance_pts: float = Field(gt=0)
    role: Role
    why: str | None = None

    def workload(self, base_eff: float | None = None) -> mdl.Workload:
        """The advisor workload of this run (tokens do not affect MFU; 1T is a placeholder)."""
        return mdl.Workload(
            params=self.params,
            tokens=1e12,
            gpus=self.gpus,
            gpu=self.gpu,
            tp=self.tp,
            pp=self.pp,
            seq_len=self.seq_len,
            global_batch=self.global_batch,
            micro_batch=self.micro_batch,
            layers=self.layers,
            hidden=self.hidden,
            vpp=self.vpp,
            recompute=self.recompute,
            base_eff=base_eff,
        )

    def knobs(self) -> mdl.Knobs:
        """Model knobs of this run: the defaults, or no DP overlap when the run had none."""
        return mdl.Knobs() if self.dp_overlap else mdl.Knobs(overlap_eff=0.0)

    def profile(self) -> src.FabricProfile:
        return src.with_roce_tuning(mdl.fabric_profile(self.fabric), self.roce_tuning)

    def command(self) -> str:
        """The ``fabriccfg advise`` command that reproduces this entry (its defaults left out)."""
        args = [
            "fabriccfg", "advise",
            "--gpus", str(self.gpus), "--gpu", self.gpu,
            "--params", f"{self.params:g}", "--tokens", "1e12",
            "--layers", str(self.layers), "--hidden", str(self.hidden),
            "--tp", str(self.tp), "--pp", str(self.pp),
            "--seq-len", str(self.seq_len), "--global-batch", str(self.global_batch),
        ]  # fmt: skip
        if self.micro_batch != 1:
            args += ["--micro-batch", str(self.micro_batch)]
        if self.vpp is not None:
            args += ["--vpp", str(self.vpp)]
        if self.recompute != "selective":
            args += ["--recompute", self.recompute]
        args += ["--fabrics", self.fabric]
        if self.roce_tuning != "untuned":
            args += ["--roce-tuning", self.roce_tuning]
        if not self.dp_overlap:
            args += ["--set", "model.overlap_eff=0"]
        return shlex.join(args)


class CalibrationFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    entries: list[Entry]


def load(text: str | None = None, name: str = "calibration.yaml") -> list[Entry]:
    """Parse the calibration set (the packaged file unless ``text`` is given); one-line errors."""
    if text is None:
        text = resources.files("fabriccfg.advise").joinpath("calibration.yaml").read_text(encoding="utf-8")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "not valid YAML"
        raise CalibrationError(f"{name}{where}: {problem}") from None
    try:
        entries = CalibrationFile.model_validate(doc).entries
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(x) for x in err["loc"])
        raise CalibrationError(f"{name}: {loc}: {err['msg']}") from None
    seen: set[str] = set()
    for e in entries:
        if e.id in seen:
            raise CalibrationError(f"{name}: duplicate entry id {e.id!r}")
        seen.add(e.id)
        try:
            mdl.validate(e.workload())
            e.profile()
        except mdl.AdviseError as exc:
            raise CalibrationError(f"{name}: entry {e.id}: {exc}") from None
    return entries


@dataclass(frozen=True, slots=True)
class Result:
    """The advisor's figure for one entry, next to the published one."""

    entry: Entry
    predicted: float  # same metric as entry.published, as a fraction
    estimate: mdl.Estimate

    @property
    def error_pts(self) -> float:
        return (self.predicted - self.entry.published) * 100.0

    @property
    def within(self) -> bool:
        return abs(self.error_pts) <= self.entry.tolerance_pts

    @property
    def fabric_share(self) -> float:
        """Share of the predicted step that depends on the fabric (phi = fabric_dependent / step)."""
        return self.estimate.fabric_dependent / self.estimate.step

    @property
    def fabric_pts(self) -> float:
        """The part of the error the fabric-dependent terms would carry if every term were off by
        the same relative amount: error x phi (the rest, error x (1 - phi), is common mode)."""
        return self.error_pts * self.fabric_share


def run(entry: Entry, base_eff: float | None = None) -> Result:
    """Reproduce one entry with the advisor (the GPU's calibrated base efficiency unless given)."""
    est = mdl.estimate(entry.workload(base_eff), entry.profile(), entry.knobs())
    value = est.hfu if entry.metric == "hfu" else est.mfu
    return Result(entry, value, est)


def fit_base_eff(entries: list[Entry], gpu: str, lo: float = 0.2, hi: float = 1.0) -> float:
    """Base efficiency at which the GPU's ``fit`` entries have zero mean error (bisection).

    The mean error rises monotonically with the base efficiency (compute shrinks, communication does
    not), so bisection finds the unique root; rounded to 0.005 as the constants in sources.py are.
    """
    chosen = [e for e in entries if e.gpu == gpu and e.role == "fit"]
    if not chosen:
        raise CalibrationError(f"no fit entry for gpu {gpu!r}")

    def mean_err(eff: float) -> float:
        return math.fsum(run(e, eff).error_pts for e in chosen) / len(chosen)

    for _ in range(40):
        mid = (lo + hi) / 2
        if mean_err(mid) > 0:
            hi = mid
        else:
            lo = mid
    return round((lo + hi) / 2 / 0.005) * 0.005


@dataclass(frozen=True, slots=True)
class Spread:
    """A calibration error bar in MFU points: the largest |error| of the in-scope entries
    (spread), or of the scale pairs' differences (paired_spread; entries then counts pairs)."""

    pts: float
    rms_pts: float
    entries: int
    worst: str

    def label(self) -> str:
        return f"±{self.pts:.1f} pts"

    def step_range(self, step: float, mfu: float) -> tuple[float, float]:
        """Step time (or cost, which scales with it) when MFU is off by ±pts: step x MFU/(MFU±pts)."""
        up = mfu + self.pts / 100
        down = max(1e-6, mfu - self.pts / 100)
        return step * mfu / up, step * mfu / down


@lru_cache(maxsize=1)
def results() -> tuple[Result, ...]:
    """Every packaged entry reproduced with the current defaults (cached: the file is package data)."""
    return tuple(run(e) for e in load())


def spread(rows: tuple[Result, ...] | None = None) -> Spread:
    """Largest absolute error over the fit and held-out entries ('limit' entries are reported apart)."""
    rows = results() if rows is None else rows
    scoped = [r for r in rows if r.entry.role != "limit"]
    if not scoped:
        return Spread(0.0, 0.0, 0, "-")
    worst = max(scoped, key=lambda r: abs(r.error_pts))
    rms = math.sqrt(math.fsum(r.error_pts**2 for r in scoped) / len(scoped))
    # rounded up to 0.5 points: the bar is a statement about the data, not a fitted decimal
    return Spread(_bar(worst.error_pts), rms, len(scoped), worst.entry.id)


def _bar(worst_pts: float) -> float:
    """|worst error| rounded up to 0.5 points, at least 0.5: the same rule for both error bars."""
    return max(0.5, math.ceil(abs(worst_pts) * 2 - 1e-9) / 2)


# Settings that must be equal for two entries to form a scale pair: everything that sets the
# per-GPU compute (and so the base-efficiency error) except the GPU count and the data-parallel size.
PAIR_KEY = (
    "gpu", "params", "layers", "hidden", "tp", "pp", "vpp", "seq_len", "micro_batch",
    "recompute", "metric", "fabric", "roce_tuning",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Pair:
    """Two published runs of one model, GPU, parallelism and fabric at two scales (issue 18).

    Their compute error is common to both - the same as between two fabrics on one workload - so
    the error of the *difference* (published drop minus predicted drop) measures the model on what
    changes with scale: the DP all-reduce, pipeline p2p and straggler terms.
    """

    small: Result
    large: Result

    @property
    def published_drop_pts(self) -> float:
        return (self.small.entry.published - self.large.entry.published) * 100.0

    @property
    def predicted_drop_pts(self) -> float:
        return (self.small.predicted - self.large.predicted) * 100.0

    @property
    def error_pts(self) -> float:
        """Error of the difference: large.error - small.error (the common part cancels)."""
        return self.large.error_pts - self.small.error_pts

    @property
    def name(self) -> str:
        return f"{self.small.entry.id} -> {self.large.entry.id}"


def pairs(rows: tuple[Result, ...] | None = None) -> list[Pair]:
    """Scale pairs among the in-scope entries: equal PAIR_KEY, different GPU counts (adjacent sizes)."""
    rows = results() if rows is None else rows
    groups: dict[tuple[object, ...], list[Result]] = {}
    for r in rows:
        if r.entry.role == "limit":
            continue
        groups.setdefault(tuple(getattr(r.entry, k) for k in PAIR_KEY), []).append(r)
    out: list[Pair] = []
    for members in groups.values():
        members.sort(key=lambda r: r.entry.gpus)
        out += [Pair(a, b) for a, b in itertools.pairwise(members) if a.entry.gpus != b.entry.gpus]
    return sorted(out, key=lambda p: p.name)


def paired_spread(rows: tuple[Result, ...] | None = None) -> Spread:
    """The error bar of an MFU *difference* between two fabrics on one workload (issue 18).

    The largest |error of the difference| over the scale pairs, rounded as the absolute spread is.
    Single runs cannot give it: no calibration run spends more than ~2% of its step in
    fabric-dependent time, so error x phi (Result.fabric_pts) is ~0 for want of evidence, not
    for accuracy. Without any pair, the absolute spread is returned (the conservative side).
    """
    rows = results() if rows is None else rows
    found = pairs(rows)
    if not found:
        return spread(rows)
    worst = max(found, key=lambda p: abs(p.error_pts))
    rms = math.sqrt(math.fsum(p.error_pts**2 for p in found) / len(found))
    return Spread(_bar(worst.error_pts), rms, len(found), worst.name)


def with_spread(est: mdl.Estimate, bar: Spread) -> dict[str, object]:
    """The error-bar fields the CLI adds to an estimate (JSON and table share them)."""
    lo, hi = bar.step_range(est.step, est.mfu)
    out: dict[str, object] = {
        "mfu_spread_pts": bar.pts,
        "mfu_range": [max(0.0, est.mfu - bar.pts / 100), est.mfu + bar.pts / 100],
        "step_range": [lo, hi],
        "days_range": [est.days * lo / est.step, est.days * hi / est.step],
    }
    if est.cost is not None:
        out["cost_range"] = [est.cost * lo / est.step, est.cost * hi / est.step]
    return out


def refit(entries: list[Entry]) -> dict[str, float]:
    """Base efficiency per GPU with calibration entries, as fit_base_eff gives it (for the test/docs)."""
    return {gpu: fit_base_eff(entries, gpu) for gpu in sorted({e.gpu for e in entries if e.role == "fit"})}


def holdout_check(entries: list[Entry]) -> list[Result]:
    """Held-out entries run with base efficiencies fitted without them (leave-some-out)."""
    fitted = refit(entries)
    return [run(e, fitted.get(e.gpu)) for e in entries if e.role == "holdout"]


__all__ = [
    "PAIR_KEY",
    "CalibrationError",
    "Entry",
    "Pair",
    "Result",
    "Spread",
    "fit_base_eff",
    "holdout_check",
    "load",
    "paired_spread",
    "pairs",
    "refit",
    "results",
    "run",
    "spread",
    "with_spread",
]
