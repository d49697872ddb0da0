"""Time `gen` + `validate` at 1k, 4k and 16k GPUs for InfiniBand and RoCE.

Goal (issue 2): a 16k-GPU inventory validates in < 10 s on a 2-core machine. Each size is
generated in-process, written to a temp file, then validated twice: in-process (``load`` =
YAML parse with positions + pydantic + every rule) and through the real CLI (adds interpreter
start-up). The in-process phases are split so a regression shows where it is. The peer baseline
is a bare ``yaml.load`` (libyaml CSafeLoader, no positions, no validation): the floor any
YAML-based validator pays; ``x yaml`` is our full validation time over it.

    .venv/bin/python benchmarks/bench_validate.py [--sizes 1024,4096,16384] [--no-cli]
"""

from __future__ import annotations

import argparse
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


def _phases(text: str) -> dict[str, float]:
    t0 = time.perf_counter()
    data, src, problems = parse_yaml(text, "bench.yaml")
    t1 = time.perf_counter()
    data = expand_profiles(data, src, problems)
    expand_link_strings(data, src, problems)
    fabric = Fabric.model_validate(data)
    t2 = time.perf_counter()
    findings = run_rules(fabric, src)
    t3 = time.perf_counter()
    errors = [f for f in findings + problems if f.severity == "error"]
    if errors:
        raise SystemExit(f"generated inventory has errors: {errors[0].format()}")
    return {"parse": t1 - t0, "model": t2 - t1, "rules": t3 - t2, "total": t3 - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1024,4096,16384")
    ap.add_argument("--no-cli", action="store_true", help="skip the CLI round (in-process timings only)")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    cli = Path(sys.executable).with_name("fabriccfg")
    print(
        f"{'technology':<11} {'gpus':>6} {'switches':>8} {'links':>6} {'MB':>5} {'gen s':>6} {'yaml s':>6} "
        f"{'parse':>6} {'model':>6} {'rules':>6} {'valid s':>7} {'x yaml':>6} {'cli s':>6} {'goal':>5}"
    )
    worst = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        for tech in ("infiniband", "roce"):
            for gpus in sizes:
                t0 = time.perf_counter()
                data = generate(gpus, tech)  # type: ignore[arg-type]
                text = dump_yaml(data)
                t_gen = time.perf_counter() - t0
                path = Path(tmp) / f"{tech}-{gpus}.yaml"
                path.write_text(text)
                t0 = time.perf_counter()
                yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                t_yaml = time.perf_counter() - t0
                ph = _phases(text)
                t_cli = float("nan")
                if not args.no_cli:
                    t0 = time.perf_counter()
                    res = subprocess.run(
                        [str(cli), "validate", "-q", str(path)], capture_output=True, text=True, check=False
                    )
                    t_cli = time.perf_counter() - t0
                    if res.returncode != 0:
                        print(res.stdout[:2000], res.stderr[:2000])
                        return 1
                total = t_cli if not args.no_cli else ph["total"]
                worst = max(worst, total) if gpus >= 16384 else worst
                ratio = f"{total / GOAL_S:.2f}x"
                print(
                    f"{tech:<11} {gpus:>6} {len(data['switches']):>8} {len(data['links']):>6} "
                    f"{len(text) / 1e6:>5.1f} {t_gen:>6.2f} {t_yaml:>6.2f} {ph['parse']:>6.2f} "
                    f"{ph['model']:>6.2f} "
                    f"{ph['rules']:>6.2f} {ph['total']:>7.2f} {ph['total'] / t_yaml:>6.2f} {t_cli:>6.2f} "
                    f"{ratio:>5}",
                    flush=True,
                )
    if worst:
        print(
            f"16k GPUs: worst end-to-end validate {worst:.2f} s = {worst / GOAL_S:.2f} "
            f"of the {GOAL_S:.0f} s goal"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
