"""Render a generated 16k-GPU fabric and compare with bare Jinja2 on precomputed contexts.

    .venv/bin/python benchmarks/bench_render.py [--gpus 16384] [--platform cumulus-nvue ...] [--repeat 3]

"fabriccfg" is ``render_fabric`` on a freshly validated fabric (cold caches: every derivation,
context and post-processing step included). "bare Jinja2" renders the same templates with the
same contexts, computed beforehand and not timed. Goal: ratio <= 1.5.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
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


def _timed(fn: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call with the garbage collector paused (as timeit does)."""
    gc.collect()
    gc.disable()
    try:
        wall, cpu = time.perf_counter(), time.process_time()
        fn()
        return time.perf_counter() - wall, time.process_time() - cpu
    finally:
        gc.enable()


def measure(data: dict[str, Any], repeat: int) -> tuple[tuple[float, float], tuple[float, float], int, int]:
    """Best-of-``repeat`` (wall, CPU) of fabriccfg and of bare Jinja2, run alternately to share the noise."""
    env = environment(None)
    warm = Fabric.model_validate(data)
    jobs = []
    keys: list[tuple[str, str]] = []
    for device in warm.devices.values():
        spec = render_spec(device.platform)
        if spec is None or (spec.applies is not None and not spec.applies(warm, device)):
            continue
        ctx = spec.context(warm, device)
        names = list(spec.select(ctx)) if spec.select is not None else list(spec.files)
        jobs.extend((env.get_template(spec.files[n]), ctx) for n in names)
        keys.extend((device.name, n) for n in names)
    rendered = render_fabric(warm)
    # fair in both directions: the baseline renders exactly the files fabriccfg writes, byte for byte
    ours = {(d.name, n): text for d in rendered for n, text in d.files.items()}
    theirs = dict(zip(keys, [template.render(ctx) for template, ctx in jobs], strict=True))
    assert ours == theirs, "bare Jinja2 and fabriccfg rendered different files"
    full = bare = (float("inf"), float("inf"))
    for _ in range(repeat):
        fabric = Fabric.model_validate(data)  # fresh object: every derivation recomputed
        got = _timed(lambda f=fabric: render_fabric(f))  # type: ignore[misc]
        full = (min(full[0], got[0]), min(full[1], got[1]))
        got = _timed(lambda: [template.render(ctx) for template, ctx in jobs])
        bare = (min(bare[0], got[0]), min(bare[1], got[1]))
    return full, bare, len(rendered), sum(len(d.files) for d in rendered)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=16384)
    ap.add_argument("--platform", nargs="*", default=["infiniband", "cumulus-nvue", "sonic", "eos", "nxos"],
                    help="'infiniband' (HDR fabric: only the SM hosts render) or RoCE switch platforms")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    print(f"{'fabric':<24} {'devices':>7} {'files':>6} {'fabriccfg s (cpu)':>18} {'bare jinja2 s (cpu)':>20} "
          f"{'ratio (cpu)':>11}")
    worst = 0.0
    for plat in args.platform:
        tech = "infiniband" if plat == "infiniband" else "roce"
        data = build(args.gpus, tech, None if tech == "infiniband" else plat)
        full, bare, devices, files = measure(data, args.repeat)
        ratio = full[1] / bare[1]
        worst = max(worst, ratio)
        label = f"{args.gpus} GPUs {plat}"
        print(f"{label:<24} {devices:>7} {files:>6} {full[0]:>9.3f} ({full[1]:.3f}) "
              f"{bare[0]:>11.3f} ({bare[1]:.3f}) {full[0] / bare[0]:>5.2f} ({ratio:.2f})")
    print(f"worst CPU-time ratio {worst:.2f} (goal <= 1.5; best of {args.repeat}, alternating); "
          "wall times are noisier on a shared machine")


if __name__ == "__main__":
    main()
