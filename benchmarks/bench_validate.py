"""Time `gen` + `validate` at 1k, 4k and 16k GPUs for InfiniBand and RoCE.

Goal (issue 2): a 16k-GPU inventory validates in < 10 s on a 2-core machine. Each size is
generated in-process, written to a temp file, then validated twice: in-process, split into phases
(YAML parse with positions, pydantic model, fabric-wide rules) so a regression shows where it is,
and through the real CLI (adds interpreter start-up). Phases are CPU seconds (``time.process_time``)
because a shared machine inflates wall time; the CLI row shows both wall and CPU time.

The peer baseline is a bare ``yaml.load`` with libyaml's CSafeLoader (no positions, no
validation): the floor any YAML-based validator pays. ``x yaml`` is our full in-process
validation over that floor.

    .venv/bin/python benchmarks/bench_validate.py [--sizes 1024,4096,16384] [--no-cli]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import expand_link_strings, expand_profiles, parse_yaml
from fabriccfg.inventory.models import Fabric
from fabriccfg.inventory.rules import run_rules

GOAL_S = 10.0
_SAFE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _cpu(fn: object, *args: object) -> tuple[float, object]:
    t0 = time.process_time()
    out = fn(*args)  # type: ignore[operator]
    return time.process_time() - t0, out


def _phases(text: str) -> dict[str, float]:
    t0 = time.process_time()
    data, src, problems = parse_yaml(text, "bench.yaml")
    t1 = time.process_time()
    data = expand_profiles(data, src, problems)
    expand_link_strings(data, src, problems)
    fabric = Fabric.model_validate(data)
    t2 = time.process_time()
    findings = run_rules(fabric, src)
    t3 = time.process_time()
    errors = [f for f in findings + problems if f.severity == "error"]
    if errors:
        raise SystemExit(f"generated inventory has errors: {errors[0].format()}")
    return {"parse": t1 - t0, "model": t2 - t1, "rules": t3 - t2, "total": t3 - t0}


def _cli(cli: Path, path: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    res = subprocess.run([str(cli), "validate", "-q", str(path)], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if res.returncode != 0:
        raise SystemExit(f"validate failed:\n{res.stdout[:2000]}{res.stderr[:2000]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description="Time gen + validate at several fabric sizes.")
    ap.add_argument("--sizes", default="1024,4096,16384")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI round (in-process timings only)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cli = Path(sys.executable).with_name("fabriccfg")
    print("CPU seconds unless marked wall")
    print(
        f"{'technology':<11} {'gpus':>6} {'switches':>8} {'links':>6} {'MB':>5} {'gen':>6} {'yaml':>6} "
        f"{'parse':>6} {'model':>6} {'rules':>6} {'valid':>6} {'x yaml':>6} {'cli':>6} {'cli wall':>8} "
        f"{'goal':>6}"
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for tech in ("infiniband", "roce"):
            for gpus in sizes:
                t0 = time.process_time()
                data = generate(gpus, tech)  # type: ignore[arg-type]
                text = dump_yaml(data)
                t_gen = time.process_time() - t0
                path = Path(tmp) / f"{tech}-{gpus}.yaml"
                path.write_text(text)
                t_yaml, _ = _cpu(yaml.load, text, _SAFE)
                ph = _phases(text)
                wall = cpu = float("nan")
                if not args.no_cli:
                    wall, cpu = _cli(cli, path)
                total = ph["total"] if args.no_cli else cpu
                if gpus >= 16384:
                    worst = max(worst, total)
                print(
                    f"{tech:<11} {gpus:>6} {len(data['switches']):>8} {len(data['links']):>6} "
                    f"{len(text) / 1e6:>5.1f} {t_gen:>6.2f} {t_yaml:>6.2f} {ph['parse']:>6.2f} "
                    f"{ph['model']:>6.2f} {ph['rules']:>6.2f} {ph['total']:>6.2f} "
                    f"{ph['total'] / t_yaml:>6.2f} "
                    f"{cpu:>6.2f} {wall:>8.2f} {total / GOAL_S:>5.2f}x",
                    flush=True,
                )
    if worst:
        print(f"16k GPUs: worst validate {worst:.2f} CPU s = {worst / GOAL_S:.2f} of the {GOAL_S:.0f} s goal")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
