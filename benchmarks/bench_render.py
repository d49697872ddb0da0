"""Render a generated 16k-GPU fabric and compare with bare Jinja2 on precomputed contexts.

    .venv/bin/python benchmarks/bench_render.py [--gpus 16384] [--platform cumulus-nvue ...] [--repeat 3]

"fabriccfg" is ``render_fabric`` on a freshly validated fabric (cold caches: every derivation,
context and post-processing step included). "bare Jinja2" renders the same templates with the
same contexts, computed beforehand and not timed. Goal: ratio <= 1.5.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import environment, render_fabric, render_spec


def build(gpus: int, technology: str, platform: str | None) -> dict[str, Any]:
    """``fabriccfg gen`` output, loaded like a file (profiles and compact links expanded), as plain data."""
    from fabriccfg.inventory.gen import dump_yaml, generate
    from fabriccfg.inventory.load import loads

    result = loads(dump_yaml(generate(gpus, technology, platform=platform)), "gen.yaml",  # type: ignore[arg-type]
                   rules=False)
    assert result.fabric is not None, [f.format() for f in result.findings[:5]]
    return result.fabric.model_dump()


def fabriccfg_render(data: dict[str, Any], repeat: int) -> tuple[float, int, int]:
    best = float("inf")
    devices = files = 0
    for _ in range(repeat):
        fabric = Fabric.model_validate(data)  # fresh object: no cached derivations
        start = time.perf_counter()
        out = render_fabric(fabric)
        best = min(best, time.perf_counter() - start)
        devices, files = len(out), sum(len(d.files) for d in out)
    return best, devices, files


def bare_render(data: dict[str, Any], repeat: int) -> float:
    fabric = Fabric.model_validate(data)
    env = environment(None)
    jobs = []
    for device in fabric.devices.values():
        spec = render_spec(device.platform)
        if spec is None:
            continue
        ctx = spec.context(fabric, device)
        names = list(spec.select(ctx)) if spec.select is not None else list(spec.files)
        jobs.extend((env.get_template(spec.files[n]), ctx) for n in names)
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for template, ctx in jobs:
            template.render(ctx)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=16384)
    ap.add_argument("--platform", nargs="*", default=["cumulus-nvue", "sonic", "eos", "nxos", "infiniband"],
                    help="RoCE switch platforms to generate with, or 'infiniband' for the HDR fabric")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{'fabric':<22} {'devices':>8} {'files':>7} {'fabriccfg s':>12} {'bare jinja2 s':>14} {'ratio':>6}")
    worst = 0.0
    for plat in args.platform:
        tech = "infiniband" if plat == "infiniband" else "roce"
        data = build(args.gpus, tech, None if tech == "infiniband" else plat)
        full, devices, files = fabriccfg_render(data, args.repeat)
        bare = bare_render(data, args.repeat)
        ratio = full / bare
        worst = max(worst, ratio)
        label = f"{args.gpus} GPUs {plat}"
        print(f"{label:<22} {devices:>8} {files:>7} {full:>12.3f} {bare:>14.3f} {ratio:>6.2f}")
    print(f"worst ratio {worst:.2f} (goal <= 1.5)")


if __name__ == "__main__":
    main()
