"""Wall time of ``fabriccfg plan`` (one ECN change on every switch) vs the same stages strung together by
hand with the CLI, on the same fabric, baseline, change and checks.

    .venv/bin/python benchmarks/bench_plan.py [--gen-gpus 256,1028] [--only roce|gen] [--no-peer]
                                              [--interval 1]

Fabrics: the example RoCE lab (14 devices) and a ``gen``-ed RoCE fabric (1028 GPUs -> about 200 devices).
The change raises ``roce.ecn.kmin_bytes`` by 50 kB: every switch changes, hosts do not.

``plan``: ``fabriccfg plan CHANGED --base-inventory BASE`` as a subprocess (validate, render, mock seeded
with BASE's configs, verify before, push through the transactions, verify after, stop).

Peer (what a CI job had to do before ``plan``, now that ``mock up --baseline`` exists), each a
``fabriccfg`` subprocess: ``validate``, ``render BASE -o DIR``, ``mock up --baseline DIR --detach``,
``verify``, ``push --yes``, ``verify``, ``mock down``. Fair because both do the same work with the same
verify sampling (2 samples, ``--interval`` apart) and the same number of mock worker processes; the peer
pays a process start per step and a detached mock, the plan pays its report. Per-device cost = wall /
devices in the inventory. Targets (issue 17): lab <= 15 s, 200 devices <= 120 s on the 2-core box.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
LAB = HERE.parent / "fabriccfg" / "data" / "inventories" / "roce-lab.yaml"
CLI = [sys.executable, "-m", "fabriccfg.cli"]


def _run(args: list[str], ok: tuple[int, ...] = (0,)) -> float:
    t = time.perf_counter()
    proc = subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=900, check=False)
    if proc.returncode not in ok:
        raise SystemExit(f"fabriccfg {' '.join(args[:2])} exited {proc.returncode}: {proc.stderr[-800:]}")
    return time.perf_counter() - t


def fabrics(tmp: Path, gen_gpus: list[int], only: str | None) -> list[tuple[str, Path, Path, int]]:
    """(label, base inventory, changed inventory, devices) per fabric."""
    from fabriccfg.inventory.gen import dump_yaml, generate

    out = []
    docs = []
    if only in (None, "roce"):
        docs.append(("roce-lab (example)", yaml.safe_load(LAB.read_text(encoding="utf-8"))))
    if only in (None, "gen"):
        docs += [(f"gen --gpus {n} roce", generate(n, "roce")) for n in gen_gpus]
    for i, (label, doc) in enumerate(docs):
        base = tmp / f"base{i}.yaml"
        base.write_text(dump_yaml(doc), encoding="utf-8")
        doc["roce"]["ecn"]["kmin_bytes"] += 50_000
        changed = tmp / f"changed{i}.yaml"
        changed.write_text(dump_yaml(doc), encoding="utf-8")
        devices = sum(len(doc.get(k, [])) for k in ("switches", "hosts", "management_hosts"))
        out.append((label, base, changed, devices))
    return out


def plan(base: Path, changed: Path, tmp: Path, interval: float) -> tuple[float, dict[str, float], int]:
    report = tmp / "plan.json"
    wall = _run(["plan", str(changed), "--base-inventory", str(base), "--format", "json", "-o", str(report),
                 "--interval", str(interval)], ok=(0, 1, 2))
    doc = json.loads(report.read_text(encoding="utf-8"))
    return wall, doc["timings"], int(doc["exit_code"])


def peer(base: Path, changed: Path, tmp: Path, interval: float) -> dict[str, float]:
    ep = tmp / "peer" / "ep.json"
    rendered = tmp / "peer" / "base-rendered"
    verify = ["--endpoints", str(ep), "--samples", "2", "--interval", str(interval), "--format", "json"]
    t: dict[str, float] = {}
    t["validate"] = _run(["validate", str(changed)])
    t["render base"] = _run(["render", str(base), "-o", str(rendered)])
    t["mock up --baseline"] = _run(["mock", "up", str(changed), "--baseline", str(rendered), "--endpoints",
                                    str(ep), "--detach"])
    try:
        t["verify before"] = _run(["verify", str(changed), *verify], ok=(0, 1, 2, 3))
        t["push"] = _run(["push", str(changed), "--endpoints", str(ep), "--yes", "--run-dir",
                          str(tmp / "peer" / "runs"), "--format", "json"])
        t["verify after"] = _run(["verify", str(changed), *verify], ok=(0, 1, 2, 3))
    finally:
        t["mock down"] = _run(["mock", "down", "--endpoints", str(ep)], ok=(0, 1))
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gen-gpus", default="1028",
                    help="gen sizes, comma-separated (1028 GPUs -> about 200 devices)")
    ap.add_argument("--only", choices=("roce", "gen"))
    ap.add_argument("--no-peer", action="store_true", help="skip the hand-strung CLI peer")
    ap.add_argument("--interval", type=float, default=1.0)
    args = ap.parse_args()
    print(f"cpus: {os.cpu_count()}, load average: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="bench-plan-") as d:
        tmp = Path(d)
        sizes = [int(x) for x in str(args.gen_gpus).split(",") if x]
        for label, base, changed, devices in fabrics(tmp, sizes, args.only):
            wall, stages, code = plan(base, changed, tmp, args.interval)
            print(f"\n{label}: {devices} devices")
            print(f"  plan: {wall:7.2f} s wall ({1000 * wall / devices:6.1f} ms/device), exit {code}")
            print("    " + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))
            if args.no_peer:
                continue
            steps = peer(base, changed, tmp, args.interval)
            total = sum(steps.values())
            per = 1000 * total / devices
            print(f"  peer (CLI steps by hand): {total:7.2f} s wall ({per:6.1f} ms/device);"
                  f" plan / peer = {wall / total:.2f}")
            print("    " + ", ".join(f"{k} {v:.2f} s" for k, v in steps.items()))


if __name__ == "__main__":
    main()
