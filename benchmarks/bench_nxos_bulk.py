"""NX-OS CLI telemetry: one command per port (before) vs one command per device (after), on the mock.

    .venv/bin/python benchmarks/bench_nxos_bulk.py [--gpus 256,1024] [--rounds 3]

For each size a ``gen --gpus N roce --platform nxos`` fabric is built and a mock fabric (real SSH servers,
in worker processes so their CPU is not charged to the client) is started. The NX-OS switches are then
collected over SSH with two telemetry specs in the same run, against the same mock:

- ``per-port``: ``show queuing interface {port}`` and ``show queuing pfc-queue interface {port} detail``
  for every cabled port (what fabriccfg ran before), and
- ``bulk``: ``show queuing interface`` and ``show queuing pfc-queue detail`` (what it runs now).

Fair: both use the same parsers (they read one interface or many), the same collector settings, the same
devices and mock, SNMP switched off for both (so the difference is the CLI form alone), and the first round
of each is a warm-up (SSH sessions are opened in it and reused after, as in ``watch``). Printed per form:
CLI commands per switch, wall time per round, client CPU per switch (user + system of this process) and the
mock's CPU per switch (read from /proc for its processes), and the samples collected, which must match.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock as _patch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from procstat import proc_cpu  # noqa: E402


def gen_fabric(gpus: int) -> Any:
    import yaml

    from fabriccfg.inventory.gen import generate
    from fabriccfg.inventory.load import loads

    res = loads(yaml.safe_dump(generate(gpus, "roce", platform="nxos"), sort_keys=False), f"<gen {gpus}>")
    assert res.fabric is not None, [f.format() for f in res.findings]
    return res.fabric


def own_cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def specs() -> dict[str, Any]:
    from fabriccfg.platforms.nxos import parsers
    from fabriccfg.platforms.nxos import telemetry as nx
    from fabriccfg.telemetry.commands import show_port
    from fabriccfg.telemetry.spec import TelemetrySpec

    def per_port(fn: Any) -> Any:
        return lambda device, port, text: fn(device, text)

    legacy = TelemetrySpec(snmp=(), cli=(
        show_port("nxos-queuing", "show queuing interface {port}", per_port(parsers.queuing_samples)),
        show_port("nxos-pfcwd", "show queuing pfc-queue interface {port} detail",
                  per_port(parsers.pfc_queue_samples)),
    ))
    return {"per-port": legacy, "bulk": TelemetrySpec(snmp=(), cli=nx.SHOW)}


def run(gpus: int, rounds: int, work: Path) -> None:
    from fabriccfg.mock.fabric import MockFabric
    from fabriccfg.platforms.nxos import telemetry as nx
    from fabriccfg.telemetry import collect

    fabric = gen_fabric(gpus)
    switches = [d.name for d in fabric.devices.values() if d.platform == "nxos"]
    mock = MockFabric(fabric, workdir=work / f"mock{gpus}", processes=max(2, os.cpu_count() or 2))
    mock.start()
    pids = [p.pid for p, _ in mock._procs]
    print(f"{gpus} GPUs: {len(fabric.devices)} devices, {len(switches)} NX-OS switches", flush=True)
    try:
        for form, spec in specs().items():
            with _patch.patch.object(nx, "TELEMETRY", spec):
                p = collect.plan(fabric, mock.endpoints, devices=switches)
                cmds = sum(len(job.commands) for job in p.cli) / max(1, len(p.cli))
                col = collect.Collector(timeout=60.0, workers=32, keep_sessions=True)
                rows = []
                for i in range(rounds):
                    c0, m0, t0 = own_cpu(), proc_cpu(pids), time.perf_counter()
                    snap = col.collect(fabric, mock.endpoints, devices=switches)
                    wall, cpu, mcpu = time.perf_counter() - t0, own_cpu() - c0, proc_cpu(pids) - m0
                    errs = sum(len(v) for v in snap.errors.values())
                    if i:
                        rows.append((wall, cpu, mcpu, sum(map(len, snap.samples.values())), errs))
                col.close()
            best = min(rows)
            n = len(switches)
            print(f"  {form:8s}: {cmds:5.1f} commands/switch  wall {best[0]:6.2f} s/round  "
                  f"client CPU {best[1] / n * 1000:7.1f} ms/switch  "
                  f"mock CPU {best[2] / n * 1000:7.1f} ms/switch  "
                  f"samples {best[3]}  errors {best[4]}", flush=True)
    finally:
        mock.stop()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", default="256,1024")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for g in (int(x) for x in args.gpus.split(",")):
            run(g, max(2, args.rounds), Path(tmp))


if __name__ == "__main__":
    main()
