"""`fabriccfg advise`: which training fabric maximises GPU utilisation, by scale, with its evidence.

The model lives in :mod:`fabriccfg.advise.model`, its defaults and citations in
:mod:`fabriccfg.advise.sources`; this module only parses options and prints. User mistakes print one
line and exit 2 (the usage-error code typer uses as well).
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from fabriccfg.advise.calibration import Spread
    from fabriccfg.advise.model import Estimate, Knobs, SweepRow, Telemetry, Workload
    from fabriccfg.advise.sources import FabricProfile

EXIT_USAGE = 2
DEFAULT_SWEEP = (64, 128, 256, 512, 1024, 2048, 4096)
_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}


def parse_quantity(text: str, what: str) -> float:
    """``100e9``, ``100B``, ``2T``, ``1.5e12`` -> float (the suffixes are decimal)."""
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)\s*([kmbgt]?)\s*", text.lower())
    if not m:
        raise typer.BadParameter(f"{what}: {text!r} is not a number (e.g. 100e9 or 100B)")
    return float(m.group(1)) * _SUFFIX.get(m.group(2), 1.0)


def _fail(msg: str) -> typer.Exit:
    typer.echo(f"error: {msg}", err=True)
    return typer.Exit(EXIT_USAGE)


def _int_list(text: str, what: str) -> list[int]:
    try:
        vals = [int(parse_quantity(x, what)) for x in text.split(",") if x.strip()]
    except typer.BadParameter as exc:
        raise _fail(str(exc)) from None
    if not vals or any(v < 1 for v in vals):
        raise _fail(f"{what} must be a comma-separated list of positive integers")
    return sorted(set(vals))


def _port_costs(text: str | None) -> dict[str, float]:
    out: dict[str, float] = {}
    for part in (text or "").split(","):
        if not part.strip():
            continue
        name, sep, val = part.partition("=")
        try:
            out[name.strip().lower()] = float(val)
        except ValueError:
            sep = ""
        if not sep:
            raise _fail(f"--port-cost expects FABRIC=USD_PER_PORT_HOUR[,..], got {part!r}")
    return out


def _boms(inventories: list[Path], prices: Path | None) -> list[Any]:
    """The priced BOM of each ``--inventory``; one-line errors, exit 2."""
    if not inventories and prices is None:
        return []
    if not inventories or prices is None:
        raise _fail("--inventory and --prices go together (fabriccfg ships no vendor prices)")
    from fabriccfg.advise.bom import BomError, build, load_prices
    from fabriccfg.inventory.load import InventoryError, load_fabric

    out = []
    try:
        table = load_prices(prices)
    except BomError as exc:
        raise _fail(str(exc)) from None
    for inventory in inventories:
        try:
            fabric = load_fabric(inventory)
        except InventoryError as exc:
            first = str(exc).splitlines()[0] if str(exc) else "invalid inventory"
            raise _fail(f"{inventory}: {first}") from None
        except OSError as exc:
            raise _fail(f"{inventory}: {exc.strerror or exc}") from None
        try:
            out.append(build(fabric, table, str(prices)))
        except BomError as exc:
            raise _fail(str(exc)) from None
    return out


def _print_bom(bom: Any) -> None:
    from rich.table import Table

    con = _console()
    table = Table(title=f"bill of materials: {bom.fabric} ({bom.technology}), from the inventory's topology")
    for col in ("item", "qty", f"unit ({bom.currency})", f"total ({bom.currency})"):
        table.add_column(col, justify="left" if col == "item" else "right")
    for line in bom.lines:
        table.add_row(line.item, f"{line.qty:g}", f"{line.unit_price:,.2f}", f"{line.total:,.0f}")
    con.print(table)
    con.print(
        f"capex {bom.capex:,.0f} {bom.currency}: {sum(bom.switches.values())} switches, "
        f"{bom.ports_used} switch ports used, {bom.nic_ports} NIC ports, {bom.dac_links} DAC and "
        f"{bom.optical_links} optical links "
        f"({bom.fiber_m:,.0f} m fibre); amortised over {bom.amortisation_years:g} years = "
        f"{bom.per_nic_port_hour:.4f} {bom.currency} per NIC-port-hour, added to the GPU-time cost",
        markup=False,
    )


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""

    @app.command("advise")
    def advise(  # noqa: PLR0917 - one parameter per CLI option is how typer works
        params: Annotated[str, typer.Option("--params", help="Total parameters, e.g. 100e9 or 100B.")],
        tokens: Annotated[str, typer.Option("--tokens", help="Training tokens, e.g. 2e12 or 2T.")],
        gpus: Annotated[int, typer.Option("--gpus", help="GPU count (required unless --sweep).")] = 0,
        gpu: Annotated[str, typer.Option("--gpu", help="a100, h100, h200 or b200.")] = "h100",
        tp: Annotated[int, typer.Option("--tp", help="Tensor-parallel degree.")] = 8,
        pp: Annotated[int, typer.Option("--pp", help="Pipeline-parallel degree.")] = 8,
        moe_experts: Annotated[
            int, typer.Option("--moe-experts", help="MoE experts per layer (0 = dense).")
        ] = 0,
        top_k: Annotated[int, typer.Option("--top-k", help="MoE experts per token.")] = 2,
        fabrics: Annotated[
            str, typer.Option("--fabrics", help="Comma-separated fabric profiles.")
        ] = "ib-hdr-sharp,ib-hdr,roce-400g",
        fmt: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
        sweep: Annotated[
            str | None, typer.Option("--sweep", help="GPU counts, e.g. 64,128,256,512,1024,4096.")
        ] = None,
        telemetry: Annotated[
            Path | None,
            typer.Option(
                "--from-telemetry", help="JSON of measured jitter/pause statistics, or verify's JSON."
            ),
        ] = None,
        explain: Annotated[
            bool, typer.Option("--explain", help="List every assumption and its source.")
        ] = False,
        plot: Annotated[
            Path | None, typer.Option("--plot", help="Draw MFU and cost against scale (matplotlib).")
        ] = None,
        seq_len: Annotated[int, typer.Option("--seq-len", help="Sequence length in tokens.")] = 4096,
        global_batch: Annotated[
            int, typer.Option("--global-batch", help="Global batch in sequences.")
        ] = 1024,
        micro_batch: Annotated[int, typer.Option("--micro-batch", help="Micro-batch in sequences.")] = 1,
        layers: Annotated[int, typer.Option("--layers", help="Layers (0 = derive from --params).")] = 0,
        hidden: Annotated[int, typer.Option("--hidden", help="Hidden size (0 = derive from --params).")] = 0,
        grad_bytes: Annotated[
            int, typer.Option("--grad-bytes", help="Bytes per reduced gradient (4 fp32, 2 bf16).")
        ] = 4,
        vpp: Annotated[
            int,
            typer.Option("--vpp", help="Interleaved virtual pipeline stages (0 = automatic: L // pp)."),
        ] = 0,
        base_eff: Annotated[
            float,
            typer.Option(
                "--base-eff",
                help="Fraction of peak when communication-free (0 = the GPU's calibrated value).",
            ),
        ] = 0.0,
        recompute: Annotated[
            str, typer.Option("--recompute", help="Activation recomputation: none, selective or full.")
        ] = "selective",
        roce_tuning: Annotated[
            str,
            typer.Option(
                "--roce-tuning",
                help="untuned (ECMP collisions, 2x IB jitter) or tuned (E-ECMP + QP scaling, IB jitter).",
            ),
        ] = "untuned",
        roce_placement: Annotated[
            str | None,
            typer.Option(
                "--roce-placement",
                help="aligned, contiguous or random: derive untuned RoCE's ECMP slowdown from where the "
                "job's nodes sit on the rail leaves (balls into bins) instead of the assumed collision rate.",
            ),
        ] = None,
        price: Annotated[
            float | None, typer.Option("--price", help="$ per GPU-hour (default: the GPU's anchor).")
        ] = None,
        port_cost: Annotated[
            str | None,
            typer.Option(
                "--port-cost", help="FABRIC=$ per NIC-port-hour incl. switch share, e.g. roce-400g=0.2."
            ),
        ] = None,
        straggler: Annotated[
            str, typer.Option("--straggler", help="exact or blom (expected maximum).")
        ] = "exact",
        inventory: Annotated[
            list[Path] | None,
            typer.Option(
                "--inventory",
                help="Derive the fabric's BOM from this inventory and add its amortised capex to the "
                "fabrics of its technology (repeatable, e.g. an IB and a RoCE design; needs --prices).",
            ),
        ] = None,
        prices: Annotated[
            Path | None,
            typer.Option("--prices", help="Your price file (YAML; no vendor prices ship with fabriccfg)."),
        ] = None,
        overrides: Annotated[
            list[str] | None,
            typer.Option(
                "--set",
                help="Override an input: FABRIC.FIELD=V (FABRIC: name, ib, roce, all) or model.KNOB=V.",
            ),
        ] = None,
    ) -> None:
        """Compare training fabrics: step time (compute, exposed comm, straggler), MFU, days and cost."""
        from fabriccfg.advise import calibration as cal
        from fabriccfg.advise import model as mdl
        from fabriccfg.advise import sources as src

        if fmt not in ("table", "json"):
            raise _fail(f"--format must be table or json, got {fmt!r}")
        if straggler not in ("exact", "blom"):
            raise _fail(f"--straggler must be exact or blom, got {straggler!r}")
        if roce_tuning not in src.ROCE_TUNINGS:
            raise _fail(f"--roce-tuning must be one of {', '.join(src.ROCE_TUNINGS)}, got {roce_tuning!r}")
        if roce_placement is not None and roce_placement not in mdl.PLACEMENTS:
            raise _fail(
                f"--roce-placement must be one of {', '.join(mdl.PLACEMENTS)}, got {roce_placement!r}"
            )
        if roce_placement is not None and roce_tuning == "tuned":
            raise _fail(
                "--roce-placement describes untuned RoCE's ECMP collisions; tuned RoCE has none "
                "(E-ECMP + QP scaling + topology-aware placement): drop one of the two"
            )
        if vpp < 0 or base_eff < 0:
            raise _fail("--vpp and --base-eff must be >= 0 (0 = automatic)")
        try:
            n_params = parse_quantity(params, "--params")
            n_tokens = parse_quantity(tokens, "--tokens")
        except typer.BadParameter as exc:
            raise _fail(str(exc)) from None
        if tp < 1 or pp < 1:
            raise _fail(f"--tp and --pp must be >= 1, got tp={tp} pp={pp}")
        plt = _pyplot() if plot is not None else None
        scales = _int_list(sweep, "--sweep") if sweep else None
        if plot is not None and scales is None:
            scales = [s for s in DEFAULT_SWEEP if s % (tp * pp) == 0] or [tp * pp]
        if not scales and gpus < 1:
            raise _fail("--gpus is required (or give --sweep)")
        costs = _port_costs(port_cost)
        boms = _boms(inventory or [], prices)
        try:
            names = dict.fromkeys(x.strip().lower() for x in fabrics.split(",") if x.strip())
            profiles = [
                mdl.with_placement(src.with_roce_tuning(mdl.fabric_profile(x), roce_tuning), roce_placement)
                for x in names
            ]
            if not profiles:
                raise mdl.AdviseError("--fabrics is empty")
            for name in costs:
                mdl.fabric_profile(name)
            for bom in boms:  # an inventory's capex for the compared fabrics of its family
                family = "ib" if bom.technology == "infiniband" else "roce"
                if sum(1 for b in boms if b.technology == bom.technology) > 1:
                    raise mdl.AdviseError(
                        f"two --inventory files are {bom.technology}: give one per technology"
                    )
                for f in profiles:
                    if f.family == family:
                        costs.setdefault(f.name, bom.per_nic_port_hour)
            work = mdl.Workload(
                params=n_params,
                tokens=n_tokens,
                gpus=gpus or (scales or [1])[-1],
                gpu=gpu.lower(),
                tp=tp,
                pp=pp,
                moe_experts=moe_experts,
                top_k=top_k,
                seq_len=seq_len,
                global_batch=global_batch,
                micro_batch=micro_batch,
                layers=layers or None,
                hidden=hidden or None,
                grad_bytes=grad_bytes,
                vpp=vpp or None,
                base_eff=base_eff or None,
                price=price,
                recompute=recompute,
            )
            knobs = mdl.Knobs(straggler_method=straggler)
            profiles, knobs = mdl.apply_overrides(profiles, knobs, overrides or [])
            tel: dict[str, Telemetry] = {}
            tel_notes: list[str] = []
            if telemetry is not None:
                tel, tel_notes = mdl.load_telemetry(telemetry, profiles)
            bar = cal.spread()
            pbar = cal.paired_spread()  # decides win/tie: the compute error cancels in a pair
            if gpus:
                mdl.validate(work)
            for s in scales or []:
                if s % (tp * pp):
                    raise mdl.AdviseError(f"--sweep value {s} is not divisible by tp*pp = {tp * pp}")
                mdl.validate(mdl.with_gpus(work, s))
            single = (
                [mdl.estimate(work, f, knobs, tel.get(f.name), costs.get(f.name)) for f in profiles]
                if gpus
                else []
            )
            rows = (
                mdl.sweep(
                    work, profiles, scales, knobs=knobs, telemetry=tel, port_costs=costs, paired_pts=pbar.pts
                )
                if scales
                else []
            )
            decided = _decided_by(
                work, profiles, roce_tuning, names, overrides or [], knobs, tel, costs, single, rows, pbar
            )
            for est in single:
                if est.fabric in tel:  # say what the measurement changed (issue 15 §3)
                    prof = next(f for f in profiles if f.name == est.fabric)
                    before = mdl.estimate(work, prof, knobs, None, costs.get(prof.name))
                    tel_notes.append(
                        f"{est.fabric}: straggler term {before.straggler:.3f} s with the assumed inputs -> "
                        f"{est.straggler:.3f} s measured (step {before.step:.3f} -> {est.step:.3f} s)"
                    )
        except (mdl.AdviseError, cal.CalibrationError) as exc:
            raise _fail(str(exc)) from None

        doc = _document(
            work=work,
            knobs=knobs,
            profiles=profiles,
            single=single,
            rows=rows,
            tel_notes=tel_notes,
            explain=explain,
            bar=bar,
            pbar=pbar,
            roce_tuning=roce_tuning,
            decided=decided,
        )
        doc["roce_placement"] = roce_placement
        if not gpus:
            doc["inputs"]["gpus"] = None  # sweep only
        if boms:
            doc["bom"] = [b.as_dict() for b in boms]
        if fmt == "json":
            sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        else:
            for bom in boms:
                _print_bom(bom)
            _print_tables(doc, single, rows, profiles, explain)
        if plot is not None:
            _plot(plt, rows, profiles, plot)


def _outcome(winner: str, tie: bool) -> str:
    return f"tie ({winner} ahead)" if tie else winner


def _decision(winner: str, tie: bool) -> str:
    """What the user is told to do: a tie is a tie whichever fabric is nominally ahead."""
    return "tie" if tie else winner


def _decided_by(  # noqa: PLR0917 - the run's whole context, passed positionally once
    work: Workload,
    profiles: list[FabricProfile],
    tuning: str,
    names: dict[str, None],
    overrides: list[str],
    knobs: Knobs,
    tel: dict[str, Telemetry],
    costs: dict[str, float],
    single: list[Estimate],
    rows: list[SweepRow],
    pbar: Spread,
) -> dict[str, Any] | None:
    """Which assumption drove the winner: rerun under the other --roce-tuning and compare (issue 18).

    Only meaningful when RoCE is compared with another family; None otherwise.
    """
    from fabriccfg.advise import model as mdl
    from fabriccfg.advise import sources as src

    families = {p.family for p in profiles}
    if "roce" not in families or len(families) < 2:
        return None
    alt = "tuned" if tuning == "untuned" else "untuned"
    alt_profiles = [src.with_roce_tuning(mdl.fabric_profile(x), alt) for x in names]
    alt_profiles, _ = mdl.apply_overrides(alt_profiles, mdl.Knobs(), overrides)
    out: dict[str, Any] = {"assumption": "roce-tuning", "value": tuning, "alternative": alt}
    if single:
        here = mdl.recommend(single, pbar.pts)[0], bool(mdl.tied_with(single, pbar.pts))
        other = [mdl.estimate(work, f, knobs, tel.get(f.name), costs.get(f.name)) for f in alt_profiles]
        there = mdl.recommend(other, pbar.pts)[0], bool(mdl.tied_with(other, pbar.pts))
        out["single"] = {
            "this": _outcome(*here),
            "alternative": _outcome(*there),
            "changes": _decision(*here) != _decision(*there),
        }
    if rows:
        alt_rows = mdl.sweep(
            work,
            alt_profiles,
            [r.gpus for r in rows],
            knobs=knobs,
            telemetry=tel,
            port_costs=costs,
            paired_pts=pbar.pts,
        )
        out["sweep"] = {
            str(r.gpus): {
                "this": _outcome(r.winner, r.tie),
                "alternative": _outcome(a.winner, a.tie),
                "changes": _decision(r.winner, r.tie) != _decision(a.winner, a.tie),
            }
            for r, a in zip(rows, alt_rows, strict=True)
        }
    return out


def _decided_text(decided: dict[str, Any] | None, key: dict[str, Any] | None) -> str:
    """One phrase: whether the RoCE-tuning assumption decides this outcome."""
    if decided is None or key is None:
        return "-"
    if key["changes"]:
        return f"roce-tuning={decided['value']} (with {decided['alternative']}: {key['alternative']})"
    return f"robust to roce-tuning (same with {decided['alternative']})"


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def _document(
    *,
    work: Workload,
    knobs: Knobs,
    profiles: list[FabricProfile],
    single: list[Estimate],
    rows: list[SweepRow],
    tel_notes: list[str],
    explain: bool,
    bar: Spread,
    pbar: Spread,
    roce_tuning: str,
    decided: dict[str, Any] | None,
) -> dict[str, Any]:
    from fabriccfg.advise import calibration as cal
    from fabriccfg.advise import model as mdl

    shape = mdl.derive_shape(work)
    doc: dict[str, Any] = {
        "inputs": {f.name: getattr(work, f.name) for f in fields(work)},
        "knobs": {f.name: getattr(knobs, f.name) for f in fields(knobs)},
        "shape": {f.name: getattr(shape, f.name) for f in fields(shape)},
        "fabrics": [p.name for p in profiles],
        "roce_tuning": roce_tuning,
        "telemetry": tel_notes,
        "calibration": {
            "spread_pts": bar.pts,
            "rms_pts": round(bar.rms_pts, 3),
            "entries": bar.entries,
            "worst": bar.worst,
            "meaning": "largest |published - predicted| MFU/HFU error over the calibration runs "
            "(docs/advise.md); every MFU is ± this, step time, days and cost move with it",
            "paired_spread_pts": pbar.pts,
            "paired_rms_pts": round(pbar.rms_pts, 3),
            "pairs": [
                {
                    "pair": p.name,
                    "published_drop_pts": round(p.published_drop_pts, 3),
                    "predicted_drop_pts": round(p.predicted_drop_pts, 3),
                    "error_pts": round(p.error_pts, 3),
                }
                for p in cal.pairs()
            ],
            "paired_meaning": "error of an MFU difference between two fabrics on one workload: the "
            "compute error is common to both and cancels; the largest error of the difference over "
            "pairs of published runs at two scales (docs/advise.md); decides win or tie",
        },
    }

    def est(e: Estimate) -> dict[str, Any]:
        return {**e.as_dict(), **cal.with_spread(e, bar)}

    if single:
        winner, reasons = mdl.recommend(single, pbar.pts)
        doc["estimates"] = [est(e) for e in single]
        doc["recommendation"] = {
            "winner": winner,
            "tie_with": mdl.tied_with(single, pbar.pts),
            "spread_pts": bar.pts,
            "paired_pts": pbar.pts,
            "decided_by": _decided_text(decided, (decided or {}).get("single")),
            "reasons": reasons,
        }
    if rows:
        sweep_decided = (decided or {}).get("sweep", {})
        doc["sweep"] = [
            {
                "gpus": r.gpus,
                "band": r.band,
                "winner": r.winner,
                "tie": r.tie,
                "margin": r.margin,
                "gap_pts": r.gap_pts,
                "paired_pts": r.paired_pts,
                "metric": r.metric,
                "decided_by": _decided_text(decided, sweep_decided.get(str(r.gpus))),
                "estimates": [est(e) for e in r.estimates],
            }
            for r in rows
        ]
        doc["bands"] = mdl.band_summary(rows)
    if decided is not None:
        doc["assumption_check"] = decided
    if explain:
        doc["assumptions"] = assumptions(work, profiles, knobs) + calibration_rows(bar, pbar)
    return doc


def calibration_rows(bar: Spread, pbar: Spread) -> list[dict[str, Any]]:
    """--explain: the calibration spread and every entry's published vs predicted figure."""
    from fabriccfg.advise import calibration as cal

    out: list[dict[str, Any]] = [
        {
            "scope": "calibration",
            "name": "spread",
            "value": bar.pts,
            "unit": "MFU pts",
            "tag": "C",
            "source": f"largest |error| over {bar.entries} published runs (worst: {bar.worst}); "
            f"RMS {bar.rms_pts:.1f} pts; advise/calibration.yaml, docs/advise.md",
            "note": "every MFU, step time, days and cost printed carries it (compute error, "
            "common to all fabrics)",
        },
        {
            "scope": "calibration",
            "name": "paired spread",
            "value": pbar.pts,
            "unit": "MFU pts",
            "tag": "C",
            "source": f"largest |error of the difference| over {pbar.entries} scale pairs of published "
            f"runs (worst: {pbar.worst}); RMS {pbar.rms_pts:.1f} pts; docs/advise.md",
            "note": "error of a difference between two fabrics on one workload; fabrics closer than "
            "it tie",
        },
    ]
    for p in cal.pairs():
        out.append(
            {
                "scope": "calibration pair",
                "name": p.name,
                "value": round(p.error_pts, 2),
                "unit": "pts error of the difference",
                "tag": "C",
                "source": f"published drop {p.published_drop_pts:.1f} pts, predicted "
                f"{p.predicted_drop_pts:.1f} pts",
                "note": "",
            }
        )
    for r in cal.results():
        e = r.entry
        out.append(
            {
                "scope": f"calibration {e.role}",
                "name": e.id,
                "value": round(r.error_pts, 2),
                "unit": "pts error",
                "tag": "C",
                "source": f"published {e.metric.upper()} {e.published:.1%}, predicted {r.predicted:.1%} "
                f"(allowed ±{e.tolerance_pts:g}); {e.source}",
                "note": e.why or "",
            }
        )
    return out


def assumptions(
    work: Workload, profiles: list[FabricProfile], knobs: Knobs | None = None
) -> list[dict[str, Any]]:
    """Every cited number the estimate used, for --explain."""
    from fabriccfg.advise import model as mdl
    from fabriccfg.advise import sources as src
    from fabriccfg.advise.sources import Cited

    out: list[dict[str, Any]] = []

    def add(scope: str, name: str, c: Cited | None) -> None:
        if c is None:
            out.append(
                {
                    "scope": scope,
                    "name": name,
                    "value": None,
                    "unit": "",
                    "tag": "-",
                    "source": "the reference sheet gives no value",
                    "note": "",
                }
            )
            return
        out.append(
            {
                "scope": scope,
                "name": name,
                "value": c.value,
                "unit": c.unit,
                "tag": c.tag,
                "source": c.source,
                "note": c.note,
            }
        )

    spec = mdl.gpu_spec(work.gpu)
    add(f"gpu {work.gpu}", "peak_bf16", spec.peak_bf16)
    add(f"gpu {work.gpu}", "hbm", spec.hbm)
    add(f"gpu {work.gpu}", "nvlink", spec.nvlink)
    if work.base_eff is not None:
        add(f"gpu {work.gpu}", "base_eff", Cited(work.base_eff, "of peak", "--base-eff", tag="U"))
    else:
        add(f"gpu {work.gpu}", "base_eff", spec.base_eff)
    add("model", f"recompute {work.recompute}", src.RECOMPUTE_FACTOR[work.recompute])
    if work.price is not None:
        add(f"gpu {work.gpu}", "price", Cited(work.price, "$/GPU-h", "--price", tag="U"))
    else:
        add(f"gpu {work.gpu}", "price", spec.price)
    for p in profiles:
        for key in mdl.FABRIC_FIELDS:
            val = getattr(p, key)
            if key.startswith("sharp_") and not p.sharp:
                continue
            add(f"fabric {p.name}", key, val)
        out.append(
            {
                "scope": f"fabric {p.name}",
                "name": "jitter_dist",
                "value": None,
                "unit": "",
                "tag": "A",
                "source": f"{p.jitter_dist}: per-rank jitter shape (analytics §2.1); telemetry may set "
                "exponential or lognormal",
                "note": "",
            }
        )
        if p.ecmp_placement is not None and "ecmp_collision_p" not in p.overrides:
            d = mdl.derive_ecmp(
                work.gpus,
                tp=work.tp,
                pp=work.pp,
                gpus_per_node=spec.gpus_per_node,
                placement=p.ecmp_placement,
            )
            out.append(
                {
                    "scope": f"fabric {p.name}",
                    "name": "ecmp (derived)",
                    "value": round(d.slowdown, 4),
                    "unit": "x",
                    "tag": "C",
                    "source": f"--roce-placement {d.placement} at {d.gpus} GPUs: {d.flows} flows from "
                    f"{d.crossing_per_leaf} crossing NICs of the busiest leaf over {d.uplinks} uplinks, "
                    f"{d.throws} hashed stages, E[max] balls into bins (advise/ecmp.py; docs/advise.md)",
                    "note": "replaces the ecmp_collision_p / ecmp_slowdown term above",
                }
            )
    actual: dict[str, float | None] = {
        "SEQ_LEN": work.seq_len,
        "GLOBAL_BATCH": work.global_batch,
        "MICRO_BATCH": work.micro_batch,
        "GRAD_BYTES": work.grad_bytes,
        "PP_INTERLEAVE": src.PP_INTERLEAVE.value if work.vpp is None else work.vpp,
        "MOE_TOP_K": work.top_k,
        "ASPECT_RATIO": None if work.layers and work.hidden else src.ASPECT_RATIO.value,
    }
    if knobs is not None:
        actual.update(
            {
                "COMPUTE_JITTER_CV": knobs.compute_jitter_cv,
                "OVERLAP_EFF": knobs.overlap_eff,
                "MOE_OVERLAP": knobs.moe_overlap,
                "BUCKET_PARAMS": knobs.bucket_params,
                "RESTART_HOURS": knobs.restart_hours,
                "CKPT_INTERVAL_HOURS": knobs.ckpt_interval_hours,
            }
        )
    for name in (
        "NCCL_BASE_LAT",
        "NCCL_RING_NET_LAT",
        "NCCL_TREE_NET_LAT",
        "NCCL_COLLNET_NET_LAT",
        "NCCL_NVLINK_LAT",
        "NCCL_TREE_BW_FACTOR",
        "COMPUTE_JITTER_CV",
        "SEQ_LEN",
        "GLOBAL_BATCH",
        "MICRO_BATCH",
        "ASPECT_RATIO",
        "GRAD_BYTES",
        "BUCKET_PARAMS",
        "OVERLAP_EFF",
        "PP_INTERLEAVE",
        "MOE_TOP_K",
        "MOE_OVERLAP",
        "RESTART_HOURS",
        "CKPT_INTERVAL_HOURS",
    ):
        cited = getattr(src, name)
        if name in actual and actual[name] is None:
            continue
        if name in actual and actual[name] != cited.value:
            cited = Cited(float(actual[name] or 0), cited.unit, "command line (--set or option)", tag="U")
        add("model", name.lower(), cited)
    formulas = [
        (
            "compute",
            "FLOPs/token = 6N + 12 L h s (PaLM App. B; torchtitan) [V]; "
            "T = FLOPs x recompute/(n peak base_eff), base_eff per GPU fitted on the calibration set",
        ),
        ("busbw", "all-reduce busbw = algbw x 2(n-1)/n; RS/AG/A2A (n-1)/n (nccl-tests PERFORMANCE.md) [V]"),
        ("ring", "a0 + 2(p-1)a + 2(p-1)/p S/B (Thakur et al. 2005) [R]"),
        ("tree", "a0 + 2 log2(p) a + 2S/(0.92B) (NCCL tuning.cc) [V]"),
        ("sharp", "a0 + a_collnet + S/B: each NIC sends S/g once (calculon, nccl-tests #238) [V]"),
        ("bubble", "(pp-1)/(v m) x T_comp, v = L // pp when not given and m >= pp (Narayanan SC'21) [R]"),
        (
            "overlap",
            "DP exposed = max(T_dp/buckets, T_dp - (T_comp/m + (v-1)/v x bubble)): last backward, first "
            "forward and the interleaved drain (Megatron overlap_grad_reduce/param_gather) [A]",
        ),
        ("straggler", "sigma_rank x E[max of n N(0,1)], exact integral or Blom; not sqrt(2 ln n) [S]"),
        ("hiccup", "D x (1 - (1-p)^n) (Dean & Barroso 'Tail at Scale') [S]"),
        ("ettr", "1/(1 + rate x n x (restart + ckpt/2)) [A, calibrated to Llama 3 >90%]"),
        ("cost", "GPU-hours x $/GPU-h (+ ports x $/port-h x hours)"),
    ]
    for name, text in formulas:
        out.append(
            {
                "scope": "formula",
                "name": name,
                "value": None,
                "unit": "",
                "tag": "",
                "source": text,
                "note": "",
            }
        )
    return out


def _console() -> Console:
    from fabriccfg.commands._console import console

    return console(min_width=120)  # the estimate table has 11 columns


def _money(v: float | None) -> str:
    if v is None:
        return "n/a"
    return f"${v / 1e6:,.2f}M" if v >= 1e5 else f"${v:,.0f}"


def _money_range(v: float | None, rng: list[float] | None) -> str:
    """Cost with its calibration range, e.g. "$2.90M ±7%"."""
    if v is None or not rng:
        return _money(v)
    return f"{_money(v)} ±{(rng[1] - rng[0]) / 2 / v:.0%}"


def _print_tables(
    doc: dict[str, Any],
    single: list[Estimate],
    rows: list[SweepRow],
    profiles: list[FabricProfile],
    explain: bool,
) -> None:
    from rich.markup import escape
    from rich.table import Table

    con = _console()
    shape = doc["shape"]
    inp = doc["inputs"]
    con.print(
        f"model: {inp['params'] / 1e9:g}B params ({shape['active_params'] / 1e9:.3g}B active), "
        f"L={shape['layers']} h={shape['hidden']} s={inp['seq_len']}, {inp['tokens'] / 1e12:g}T tokens, "
        f"batch {inp['global_batch']} seq, {inp['gpu']} tp={inp['tp']} pp={inp['pp']}"
        + (f" experts={inp['moe_experts']} top-{inp['top_k']}" if inp["moe_experts"] else "")
    )
    for note in doc["telemetry"]:
        con.print(f"telemetry: {note}", markup=False)
    calib = doc["calibration"]
    bar = calib["spread_pts"]
    pbar = calib["paired_spread_pts"]
    con.print(
        f"error bar: ±{bar:.1f} MFU pts, the largest error over {calib['entries']} published runs "
        f"(see --explain); RoCE assumed {doc['roce_tuning']}"
        + (f", ECMP derived for {doc['roce_placement']} placement" if doc.get("roce_placement") else ""),
        markup=False,
    )
    con.print(
        f"fabric differences: ±{pbar:.1f} pts (paired: the compute error cancels between fabrics; "
        f"largest error of a difference over {len(calib['pairs'])} pairs of published runs); "
        "a gap inside it is a tie",
        markup=False,
    )
    if single:
        e0 = single[0]
        table = Table(
            title=f"{e0.gpus} GPUs (dp={e0.dp}, {e0.microbatches:g} micro-batches, vpp={e0.vpp}): "
            "seconds per step",
        )
        for col in (
            "fabric",
            "compute",
            "bubble",
            "TP (NVLink)",
            "fabric comm exposed",
            "DP algo",
            "straggler",
            "step",
            "MFU",
            "days",
            "cost",
        ):
            table.add_column(col, justify="left" if col in ("fabric", "DP algo") else "right")
        for e, d in zip(single, doc["estimates"], strict=True):
            lo, hi = d["step_range"]
            dlo, dhi = d["days_range"]
            table.add_row(
                e.fabric,
                f"{e.compute:.3f}",
                f"{e.bubble:.3f}",
                f"{e.tp_comm:.3f}",
                f"{e.fabric_exposed:.3f}",
                e.dp_algo,
                f"{e.straggler + e.hiccup:.3f}",
                f"{e.step:.3f} ({lo:.3f}-{hi:.3f})",
                f"{e.mfu:.1%} ±{bar:.1f}",
                f"{e.days:.1f} ({dlo:.1f}-{dhi:.1f})",
                _money_range(e.cost, d.get("cost_range")),
            )
        con.print(table)
        rec = doc["recommendation"]
        tie = f" (tie with {', '.join(rec['tie_with'])})" if rec["tie_with"] else ""
        con.print(f"recommendation: {rec['winner']}{tie}", style="bold", markup=False)
        con.print(f"  decided by: {rec['decided_by']}", markup=False)
        for reason in rec["reasons"]:
            con.print(f"  - {reason}", markup=False)
        for warn in sorted({w for e in single for w in e.warnings}):
            con.print(f"warning: {warn}", markup=False, style="yellow")
    if rows:
        metric = rows[0].metric
        table = Table(
            title=f"sweep: MFU ±{bar:.1f} pts / {'cost' if metric == 'cost' else 'days'} by scale "
            f"(computed; RoCE {doc['roce_tuning']})"
        )
        table.add_column("GPUs", justify="right")
        table.add_column("band")
        for p in profiles:
            table.add_column(p.name, justify="right")
        table.add_column("winner")
        table.add_column("margin / MFU gap", justify="right")
        table.add_column("decided by")
        for r, d in zip(rows, doc["sweep"], strict=True):
            cells = []
            for e, de in zip(r.estimates, d["estimates"], strict=True):
                lo, hi = de.get("cost_range") or de["days_range"]
                amount = e.cost if metric == "cost" and e.cost is not None else e.days
                pct = (hi - lo) / 2 / amount if amount else 0.0
                tail = _money(e.cost) if metric == "cost" else f"{e.days:.1f} d"
                cells.append(f"{e.mfu:.1%} / {tail} ±{pct:.0%}")
            win = f"tie ({r.winner} ahead)" if r.tie else r.winner
            table.add_row(
                str(r.gpus),
                r.band,
                *cells,
                win,
                f"{r.margin:.2%} / {r.gap_pts:.1f} ± {r.paired_pts:.1f} pts (paired)",
                d["decided_by"],
            )
        con.print(table)
        bands = Table(title="by scale band")
        bands.add_column("band")
        bands.add_column("result")
        for name, text in doc["bands"].items():
            bands.add_row(name, escape(text))
        con.print(bands)
    if explain:
        table = Table(
            title="assumptions and sources (tags: V primary, S secondary, R recalled, C computed, "
            "A assumption, U user)"
        )
        for col in ("scope", "name", "value", "tag", "source / note"):
            table.add_column(col, overflow="fold")
        for a in doc["assumptions"]:
            val = "" if a["value"] is None else f"{a['value']:.4g} {a['unit']}".strip()
            text = a["source"] + (f" — {a['note']}" if a["note"] else "")
            table.add_row(escape(a["scope"]), a["name"], escape(val), a["tag"], escape(text))
        con.print(table)


def _pyplot() -> Any:
    """matplotlib.pyplot on the Agg backend, or a one-line error (the ``plot`` extra is optional)."""
    import importlib

    try:
        matplotlib: Any = importlib.import_module("matplotlib")
        matplotlib.use("Agg")
        return importlib.import_module("matplotlib.pyplot")
    except ImportError:
        raise _fail("--plot needs matplotlib: pip install 'fabriccfg[plot]'") from None


def _plot(plt: Any, rows: list[SweepRow], profiles: list[FabricProfile], path: Path) -> None:
    xs = [r.gpus for r in rows]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    for i, p in enumerate(profiles):
        ax1.plot(xs, [r.estimates[i].mfu * 100 for r in rows], marker="o", label=p.name)
        if all(r.estimates[i].cost is not None for r in rows):
            ax2.plot(xs, [(r.estimates[i].cost or 0) / 1e6 for r in rows], marker="o", label=p.name)
        else:
            ax2.plot(xs, [r.estimates[i].days for r in rows], marker="o", label=p.name)
    for ax in (ax1, ax2):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs")
        ax.grid(True, alpha=0.3)
        ax.legend()
    ax1.set_ylabel("MFU (%)")
    ax2.set_ylabel("cost ($M)" if rows and rows[0].metric == "cost" else "days")
    fig.suptitle("fabriccfg advise: model estimates under stated assumptions (see --explain)")
    fig.tight_layout()
    try:
        fig.savefig(path)
    except OSError as exc:
        raise _fail(f"cannot write {path}: {exc.strerror}") from None
    finally:
        plt.close(fig)
    typer.echo(f"plot written to {path}", err=True)
