"""Series per device of the ``watch`` exposition (issue 16 §2: cardinality), loopback only, bounded.

For each size, the real mock fabric (SSH + SNMP on loopback) is polled by the real collector for two
watch rounds; the exposition of the second round is rendered twice from the same snapshot and the same
check results:

- ``default``: per-port per-priority series only for the lossless and CNP priorities of each device's
  effective QoS (what ``watch`` exports unless ``--all-priorities``);
- ``all``: every priority (the peer: ``--all-priorities``, i.e. what the exporter sent before).

The comparison is fair in that both count the same round through the same prometheus_client
renderer; only the priority filter differs. Printed per size: devices, series and bytes per round,
series and bytes per device, and the ratio default/all.

Sizes: ``lab`` is inventories/roce-lab.yaml (14 devices); a number is a generated RoCE fat tree with
that many GPUs (``fabriccfg gen``).

    .venv/bin/python benchmarks/bench_series.py [--sizes lab,64,128]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from prometheus_client import CollectorRegistry, generate_latest  # noqa: E402

from fabriccfg.inventory import gen  # noqa: E402
from fabriccfg.inventory.load import load_fabric  # noqa: E402
from fabriccfg.inventory.models import Fabric  # noqa: E402
from fabriccfg.mock.fabric import MockFabric  # noqa: E402
from fabriccfg.targets import load_endpoints  # noqa: E402
from fabriccfg.verify import output, runner, watch  # noqa: E402
from fabriccfg.verify.engine import load_checks  # noqa: E402

LAB = ROOT / "inventories" / "roce-lab.yaml"


def exposition(w: watch.Watcher, all_priorities: bool) -> bytes:
    w.keep = None if all_priorities else output.kept_priorities(w.fabric)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(watch.FabricCollector(w))
    return generate_latest(registry)


def measure(fabric: Fabric, work: Path) -> dict[str, tuple[int, int]]:
    with MockFabric(fabric, workdir=work) as mock:
        w = watch.Watcher(fabric, load_endpoints(mock.endpoints_file), load_checks(),
                          runner.default_collector())
        try:
            w.round()
            w.round()
        finally:
            w.close()
    out = {}
    for name, every in (("default", False), ("all", True)):
        body = exposition(w, every)
        out[name] = (output.count_series(body), len(body))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="lab,64,128")
    args = ap.parse_args()
    print(f"{'size':<22} {'devices':>7} | {'default series':>14} {'/device':>8} {'kB':>7} | "
          f"{'all series':>10} {'/device':>8} {'kB':>7} | {'ratio':>5}")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            if size == "lab":
                inventory, name = LAB, "roce-lab"
            else:
                inventory, name = Path(tmp) / f"gen{size}.yaml", f"generated RoCE, {int(size)} GPUs"
                inventory.write_text(gen.dump_yaml(gen.generate(int(size), "roce")))
            fabric = load_fabric(inventory)
            n = len(fabric.devices)
            got = measure(fabric, Path(tmp) / f"mock-{size}")
            (ds, db), (alls, allb) = got["default"], got["all"]
            print(f"{name:<22} {n:>7} | {ds:>14} {ds / n:>8.0f} {db / 1000:>7.0f} | {alls:>10} "
                  f"{alls / n:>8.0f} {allb / 1000:>7.0f} | {ds / alls:>5.2f}", flush=True)


if __name__ == "__main__":
    main()
