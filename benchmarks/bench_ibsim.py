"""Time to SUBNET UP on ibsim for `gen --technology infiniband` fabrics: real OpenSM routing time by size.

For each size: build the ibsim topology from the generated inventory, start ibsim, start the master
SM host's real OpenSM with its rendered opensm.conf (upstream flavour, SHARP off, ftree), and time
(a) ibsim start, (b) OpenSM start -> MASTER seen by ``sminfo``, (c) -> ``SUBNET UP`` in its log.
Per-node costs are printed next to the totals. The peer measured in the same run is the simulator's
own start (ibsim parsing the same topology), so the ratio OpenSM/ibsim says how much of the time is
the SM's discovery and routing rather than the simulator. Bounded: each size has a deadline
(``--deadline``, default 300 s); a size that misses it prints how far it got and why.

    .venv/bin/python benchmarks/bench_ibsim.py [--sizes 512,2048,8192] [--deadline 300]
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from pathlib import Path

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock import ibsim
from fabriccfg.mock.ibsim_topology import build
from fabriccfg.render.engine import render_device, render_spec


def one(gpus: int, deadline: float, work: Path) -> str:
    data = generate(gpus, "infiniband")
    data["ib"]["opensm_flavour"] = "upstream"
    data["ib"]["sharp"] = {"enabled": False}
    inv = work / f"gen{gpus}.yaml"
    inv.write_text(dump_yaml(data), encoding="utf-8")
    fab = load_fabric(inv)
    assert fab.ib is not None
    topo = build(fab)
    master = max(fab.ib.subnet_managers, key=lambda s: s.priority).device
    spec = render_spec(fab.devices[master].platform)
    assert spec is not None
    files = {spec.install_paths[k]: v for k, v in render_device(fab, master).files.items()}
    nodes, sw = len(topo.nodes), sum(1 for n in topo.nodes if n.kind == "switch")
    t0 = time.perf_counter()
    with ibsim.IbSim(topo, work / f"sim{gpus}") as sim:
        assert sim.handle is not None
        t_sim = time.perf_counter() - t0
        node = topo.ca(master)
        assert node is not None
        osm = ibsim.OpenSm(sim.handle, node, master)
        t1 = time.perf_counter()
        osm.start(files)
        try:
            ibsim.wait_master(sim.handle, node, deadline)
            t_master = time.perf_counter() - t1
            ibsim.wait_subnet_up(osm, max(1.0, deadline - t_master))
        except ibsim.IbsimError as exc:
            return f"{gpus:>6} {nodes:>6} {sw:>5}  ibsim {t_sim:6.2f} s  NOT UP: {exc}"
        t_up = time.perf_counter() - t1
        engine = re.findall(r"(\S+) tables configured", osm.log_text())
        osm.stop()
    return (f"{gpus:>6} {nodes:>6} {sw:>5}  ibsim {t_sim:6.2f} s  master {t_master:6.2f} s  "
            f"SUBNET UP {t_up:6.2f} s  ({t_up / nodes * 1e3:6.2f} ms/node, OpenSM/ibsim "
            f"{t_up / max(t_sim, 1e-6):6.1f}x, engine {engine[-1] if engine else '?'})")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,2048,8192")
    ap.add_argument("--deadline", type=float, default=300.0)
    args = ap.parse_args()
    reason = ibsim.unavailable()
    if reason:
        print(f"bench_ibsim: {reason}", file=sys.stderr)
        return 2
    print("  GPUs  nodes  sw    time to SUBNET UP (real OpenSM 3.3 on ibsim, ftree, 1 SM)")
    with tempfile.TemporaryDirectory(prefix="bench-ibsim-") as tmp:
        for gpus in (int(x) for x in args.sizes.split(",")):
            print(one(gpus, args.deadline, Path(tmp)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
