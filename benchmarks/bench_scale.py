"""Cluster scale: watch/verify rounds, push, memory and analysis cost over `gen` fabrics of growing size.

    .venv/bin/python benchmarks/bench_scale.py [--gpus 512] [--rounds 3] [--processes 1] [--keep-sessions]
                                              [--push] [--push-gpus 1028] [--nornir] [--workers 20]

The #14 runs: ``--gpus 512,2560,10240 --rounds 3 --keep-sessions --processes 2`` (100 / 500 / 2,000
devices, all cores, as ``watch --processes 2``) and ``--gpus 512 --rounds 100 --keep-sessions`` (peak RSS
at round 1 / 10 / 50 / 100). The open-files limit is raised to the hard limit (2,000 devices need ~4,500
descriptors across the mock and the client).

For each size a `gen --gpus N roce` fabric is built and a fresh mock fabric (SSH CLIs + SNMP agents) is
started in worker processes, so its CPU is not charged to the client; the mock's CPU is read from
/proc for its processes and printed separately. Then ``--rounds`` watch rounds run back to back
(``Watcher.round``: collect over SNMP + SSH, rates, every shipped check, exposition render), and per
round we print wall time, client CPU (user + system of this process, all threads, plus any collector
child processes), client CPU per device, the mock's CPU, and peak RSS after the round (ru_maxrss plus the
collector processes' VmHWM; it must not grow with the round count). The storm-origin and cabling analyses
are timed on their own over the last round's context (CPU of the thread and wall, best of 3). The load
average is printed beside each size: the box is shared, so CPU time is the number to compare.

``--push`` pushes the same fabric (the whole guarded transaction per device) and prints wall and client
CPU per device; ``--nornir`` also runs benchmarks/bench_push.py's Nornir peer at ``--push-gpus`` (about
200 devices) on the same mock and lines and prints the ratio (same fairness rules as bench_push.py).

Bounded: every size prints progress; the 2,000-device size takes minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from procstat import proc_cpu  # noqa: E402


def gen_fabric(gpus: int) -> Any:
    import yaml

    from fabriccfg.inventory.gen import generate
    from fabriccfg.inventory.load import loads

    res = loads(yaml.safe_dump(generate(gpus, "roce"), sort_keys=False), f"<gen {gpus}>")
    assert res.fabric is not None, [f.format() for f in res.findings]
    return res.fabric


def own_cpu() -> float:
    """This process, all threads (not reaped children: a stopped mock's CPU would land there; collector
    processes are read from /proc)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime


def peak_rss_mb(workers: tuple[int, ...] | list[int] = ()) -> float:
    """Peak RSS of this process plus the collector processes' (VmHWM from /proc)."""
    total = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for pid in workers:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1]) / 1024
        except OSError:
            continue
    return total


def bench_watch(fabric: Any, rounds: int, work: Path, **collector: Any) -> dict[str, Any]:
    from fabriccfg.mock.fabric import MockFabric
    from fabriccfg.verify import runner, watch
    from fabriccfg.verify.engine import Context, evaluate, load_checks

    n = len(fabric.devices)
    checks = [c for c in load_checks() if c.id != "config-drift"]
    t = time.perf_counter()
    mock = MockFabric(fabric, workdir=work / "mock", processes=max(2, os.cpu_count() or 2))
    mock.start()
    up = time.perf_counter() - t
    print(f"  mock up: {n} devices in {mock.processes} processes, {up:.1f} s", flush=True)
    pids = [p.pid for p, _ in mock._procs]  # the benchmark reads the mock's CPU from /proc
    try:
        col = runner.default_collector(**collector)
        w = watch.Watcher(fabric, mock.endpoints, checks, col)
        rows = []
        pool_cpu = 0.0
        for i in range(rounds):
            c0, m0, t0 = own_cpu(), proc_cpu(pids), time.perf_counter()
            rep = w.round()
            wall, cpu, mcpu = time.perf_counter() - t0, own_cpu() - c0, proc_cpu(pids) - m0
            # collector processes (--processes): alive, so not in RUSAGE_CHILDREN; read them from /proc
            workers = [wk.process.pid for wk in getattr(col, "_workers", []) if wk.process is not None]
            now = proc_cpu(workers)
            parent_cpu = cpu
            cpu += now - pool_cpu
            pool_cpu = now
            errs = sum(len(v) for v in rep.errors.values())
            if errs:
                kinds: dict[str, int] = {}
                for msgs in rep.errors.values():
                    for m in msgs:
                        kinds[m[:70]] = kinds.get(m[:70], 0) + 1
                print("   ", sorted(kinds.items(), key=lambda kv: -kv[1])[:3], flush=True)
            rows.append((wall, cpu, mcpu, peak_rss_mb(workers)))
            print(f"  round {i + 1}: wall {wall:6.2f} s  client CPU {cpu:6.2f} s "
                  f"({cpu / n * 1000:5.1f} ms/dev; this process {parent_cpu / n * 1000:4.1f})  "
                  f"mock CPU {mcpu:6.2f} s  peak RSS {rows[-1][3]:6.0f} MB  status {rep.status}  "
                  f"collect errors {errs}", flush=True)
        ctx = Context(fabric, list(w.snaps), points=list(w.points))
        heavy = [c for c in checks if c.id in ("pfc-storm-origin", "eth-cabling")]
        analysis = analysis_cpu = float("inf")
        for _ in range(3):  # best of 3: CPU of this thread (the analyses run on it) and wall
            t0, c0 = time.perf_counter(), time.thread_time()
            evaluate(heavy, ctx)
            analysis = min(analysis, time.perf_counter() - t0)
            analysis_cpu = min(analysis_cpu, time.thread_time() - c0)
        w.close()
    finally:
        mock.stop()
    steady = rows[1:] or rows
    return {"devices": n, "wall": min(r[0] for r in steady), "cpu": min(r[1] for r in steady),
            "cpu_med": statistics.median(r[1] for r in steady),
            "wall_med": statistics.median(r[0] for r in steady),
            "mock": min(r[2] for r in steady), "rss": [r[3] for r in rows], "analysis": analysis,
            "analysis_cpu": analysis_cpu, "load": os.getloadavg()[0]}


def bench_push(fabric: Any, workers: int, work: Path) -> dict[str, Any]:
    from bench_push import run_fabriccfg

    n = len(fabric.devices)
    c0 = own_cpu()
    wall, failed = run_fabriccfg(fabric, workers, work)
    cpu = own_cpu() - c0
    return {"devices": n, "wall": wall, "cpu": cpu, "failed": failed}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", default="512", help="gen sizes (GPUs), comma-separated; 512 / 2560 / 10240 "
                    "give 88 / 560 / 2,176 devices (default: the quick 88-device run)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--push", action="store_true")
    ap.add_argument("--nornir", action="store_true")
    ap.add_argument("--push-gpus", type=int, default=1028)
    ap.add_argument("--workers", type=int, default=20, help="push workers")
    ap.add_argument("--cli-workers", type=int, default=32, help="telemetry SSH threads")
    ap.add_argument("--keep-sessions", action="store_true", help="reuse SSH sessions across rounds")
    ap.add_argument("--max-varbinds", type=int, default=256, help="GETBULK size")
    ap.add_argument("--processes", type=int, default=1, help="collector processes")
    args = ap.parse_args()
    sizes = [int(x) for x in args.gpus.split(",") if x]
    # 2,000 devices: ~2,200 mock SSH listeners + SNMP sockets in the mock, ~2,200 kept sessions here
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    print(f"open files limit {resource.getrlimit(resource.RLIMIT_NOFILE)[0]} (raised to the hard limit)",
          flush=True)
    table = []
    pushes = []
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        for gpus in sizes:
            fabric = gen_fabric(gpus)
            print(f"gen --gpus {gpus}: {len(fabric.devices)} devices", flush=True)
            table.append(bench_watch(fabric, args.rounds, Path(tmp) / f"w{gpus}", workers=args.cli_workers,
                                     keep_sessions=args.keep_sessions, max_varbinds=args.max_varbinds,
                                     processes=args.processes))
            if args.push:
                pushes.append(bench_push(fabric, args.workers, Path(tmp) / f"p{gpus}"))
                p = pushes[-1]
                print(f"  push: wall {p['wall']:.1f} s, "
                      f"client CPU {p['cpu'] / p['devices'] * 1000:.0f} ms/dev, "
                      f"failed {len(p['failed'])}", flush=True)
        print("\n(rounds after the first: best, and median in brackets)")
        print("\n| devices | watch round wall | client CPU / device | mock CPU / round "
              "| analyses (storm+cabling) CPU (wall) | peak RSS (MB) at round 1 / 10 / 50 / 100 / last "
              "| load |")
        print("|---|---|---|---|---|---|---|")
        for r in table:
            marks = [k for k in (1, 10, 50, 100) if k <= len(r["rss"])]
            rss = " / ".join(f"{r['rss'][k - 1]:.0f}" for k in marks) + f" / {r['rss'][-1]:.0f}"
            print(f"| {r['devices']} | {r['wall']:.2f} s ({r['wall_med']:.2f} s) | "
                  f"{r['cpu'] / r['devices'] * 1000:.1f} ms ({r['cpu_med'] / r['devices'] * 1000:.1f} ms) | "
                  f"{r['mock']:.2f} s | {r['analysis_cpu'] * 1000:.0f} ms ({r['analysis'] * 1000:.0f} ms) | "
                  f"{rss} | {r['load']:.1f} |")
        if pushes:
            print("\n| devices | push wall | client CPU / device | failed |")
            print("|---|---|---|---|")
            for p in pushes:
                print(f"| {p['devices']} | {p['wall']:.1f} s | {p['cpu'] / p['devices'] * 1000:.0f} ms | "
                      f"{len(p['failed'])} |")
        if args.nornir:
            from bench_push import peers_python, run_nornir

            fabric = gen_fabric(args.push_gpus)
            ours, _ = run_fabriccfg_wall(fabric, args.workers, Path(tmp) / "pn-ours")
            theirs, _ = run_nornir(fabric, args.workers, Path(tmp) / "pn-nornir", peers_python())
            print(f"\npush {len(fabric.devices)} devices: fabriccfg {ours:.1f} s, Nornir + nornir_netmiko "
                  f"{theirs:.1f} s, ratio {ours / theirs:.2f}")


def run_fabriccfg_wall(fabric: Any, workers: int, work: Path) -> tuple[float, list[str]]:
    from bench_push import run_fabriccfg

    wall, failed = run_fabriccfg(fabric, workers, work)
    return wall, failed


if __name__ == "__main__":
    main()
