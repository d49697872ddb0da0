"""What the #15 watermark telemetry costs: collect with and without the watermark commands, per device.

    .venv/bin/python benchmarks/bench_watermarks.py [--gpus 0,128,512] [--rounds 3]

``0`` is the RoCE lab (inventories/roce-lab.yaml); other sizes are ``gen --gpus N roce`` fabrics (SONiC
and Cumulus switches, the platforms whose watermark commands this part adds). For each size one mock
fabric (SSH CLIs + SNMP agents, in a worker process so its CPU is not the client's) serves both runs:

* peer: the same collector with the watermark commands removed from the SONiC and Cumulus telemetry
  specs (``show queue watermark unicast``, ``show priority-group watermark shared|headroom``,
  ``nv show interface PORT qos buffer``), i.e. what verify collected before #15;
* with: the shipped specs.

Fair: same mock, same devices, same collector and worker count, rounds interleaved (peer, with, peer,
with ...) so background load on the shared box hits both alike; the median of ``--rounds`` is printed.
Per device: wall time of one collection round / devices, client CPU (this process) / devices. Then the
four watermark checks' evaluation cost per switch port over the last two snapshots, against the other
shipped checks' cost per port (the same Context), and their status on this healthy mock (must be OK with
no finding: ``--gpus 1028`` is the 201-device fabric of docs/ci.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WM_COMMANDS = frozenset({"sonic-queue-wm", "sonic-pg-shared-wm", "sonic-pg-headroom-wm", "nvue-buffer"})
WM_CHECKS = frozenset({"microburst", "headroom-near-full", "hol-blocking", "ecn-threshold"})


def fabric_of(gpus: int) -> Any:
    import yaml

    from fabriccfg.inventory.gen import generate
    from fabriccfg.inventory.load import load_fabric, loads

    if gpus == 0:
        return load_fabric(ROOT / "inventories" / "roce-lab.yaml")
    res = loads(yaml.safe_dump(generate(gpus, "roce"), sort_keys=False), f"<gen {gpus}>")
    assert res.fabric is not None
    return res.fabric


def specs(without: bool) -> None:
    """Install the shipped telemetry specs, or the same specs without the watermark commands."""
    from fabriccfg.platforms.cumulus_nvue import telemetry as cum
    from fabriccfg.platforms.sonic import telemetry as son

    for mod in (cum, son):
        shipped = getattr(mod, "_SHIPPED", None) or mod.TELEMETRY
        mod._SHIPPED = shipped  # type: ignore[attr-defined]
        cli = tuple(c for c in shipped.cli if not (without and c.name in WM_COMMANDS))
        mod.TELEMETRY = dataclasses.replace(shipped, cli=cli)


def one_round(fabric: Any, eps: Any, collector: Any) -> tuple[float, float, Any]:
    import os

    from fabriccfg.verify import runner

    c0, t0 = os.times(), time.perf_counter()
    snaps = runner.gather(fabric, eps, collector, samples=1, interval=0.0)
    c1, t1 = os.times(), time.perf_counter()
    return t1 - t0, (c1.user + c1.system) - (c0.user + c0.system), snaps[-1]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpus", default="0,128,512")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()

    from fabriccfg.mock.fabric import MockFabric
    from fabriccfg.targets import load_endpoints
    from fabriccfg.verify import runner
    from fabriccfg.verify.engine import Context, evaluate, load_checks

    checks = [c for c in load_checks() if c.id != "config-drift"]
    print(f"{'size':>10} {'devices':>7} {'run':>5} {'wall ms/dev':>12} {'cpu ms/dev':>11}")
    for gpus in [int(x) for x in args.gpus.split(",")]:
        fabric = fabric_of(gpus)
        n = len(fabric.devices)
        with tempfile.TemporaryDirectory() as tmp, MockFabric(fabric, workdir=Path(tmp), processes=1) as mock:
            eps = load_endpoints(mock.endpoints_file)
            collector = runner.default_collector()
            got: dict[str, list[tuple[float, float]]] = {"peer": [], "with": []}
            snaps = []
            for _ in range(args.rounds):
                for name, without in (("peer", True), ("with", False)):
                    specs(without)
                    wall, cpu, snap = one_round(fabric, eps, collector)
                    got[name].append((wall, cpu))
                    if name == "with":
                        snaps.append(snap)
            specs(False)
            med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                   for k, v in got.items()}
            label = "lab" if gpus == 0 else f"{gpus} GPUs"
            for k in ("peer", "with"):
                wall_ms, cpu_ms = 1000 * med[k][0] / n, 1000 * med[k][1] / n
                print(f"{label:>10} {n:>7} {k:>5} {wall_ms:>12.2f} {cpu_ms:>11.2f}")
            print(f"{label:>10} {n:>7} ratio with/peer: wall {med['with'][0] / med['peer'][0]:.2f}, "
                  f"cpu {med['with'][1] / med['peer'][1]:.2f}")
            ctx = Context(fabric, snaps[-2:])
            costs = {}
            for name, sel in (("watermark checks", [c for c in checks if c.id in WM_CHECKS]),
                              ("other checks", [c for c in checks if c.id not in WM_CHECKS])):
                t0 = time.perf_counter()
                report = evaluate(sel, ctx)
                costs[name] = time.perf_counter() - t0
                scopes = sum(r.scopes for r in report.results)
                per_scope, per_dev = 1e6 * costs[name] / max(scopes, 1), 1000 * costs[name] / n
                print(f"{label:>10} {name}: {len(sel)} checks, {scopes} scopes, "
                      f"{per_scope:.1f} us/scope, {per_dev:.2f} ms/device; healthy mock: "
                      f"{report.status.upper()}, {len(report.findings)} finding(s)")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
