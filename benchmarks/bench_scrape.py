"""Scrape-load benchmark for ``fabriccfg watch --serve`` (issue 10 §4), loopback only, bounded.

A watch loop runs in a child process against the mock fabric (its devices in their own worker
processes) and serves ``/metrics``; this process fires 3 bursts of 300 scrapes, 100 at a time, like
Prometheus (``Accept-Encoding: gzip``, a 10 s timeout), one round apart. Measured per server:

- answered share (HTTP 200 with a body within the timeout);
- round time while idle (median of the rounds before the load) vs rounds that overlapped the load;
- the watch process's RSS when idle, at its peak (VmHWM) and two rounds after the last burst.

Two servers, same run, same fabric, same request stream: ``prebuilt`` (fabriccfg's: the exposition is
rendered once per round and served from memory by a fixed pool of 4 threads) and the peer
``library`` (prometheus_client's ``start_http_server`` over the same collector: it renders the
registry on every scrape, in a new thread per connection, which is what watch did before). The
comparison is fair in that both serve the same metric families of the same round and see the same
request stream; the machine is shared, so the idle baseline is measured in each run right before its
load. Goals: 100 % answered, loaded rounds within 1.5x of idle, RSS after within 10 % of idle.

Sizes: ``lab`` is inventories/roce-lab.yaml (14 devices); a number is a generated RoCE fat tree with
that many GPUs (``fabriccfg gen``; 128 GPUs = 28 devices). Per-device cost = idle round time / devices.

    .venv/bin/python benchmarks/bench_scrape.py [--sizes lab,128] [--servers prebuilt,library] [--every 3]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fabriccfg.inventory import gen  # noqa: E402
from fabriccfg.inventory.load import load_fabric  # noqa: E402

LAB = ROOT / "inventories" / "roce-lab.yaml"


# --------------------------------------------------------------------------- the watch process (child)
def child(server: str, inventory: str, endpoints: str, every: float) -> None:
    from prometheus_client import CollectorRegistry, start_http_server

    from fabriccfg.targets import load_endpoints
    from fabriccfg.verify import runner, watch
    from fabriccfg.verify.engine import load_checks

    fabric = load_fabric(Path(inventory))
    checks = [c for c in load_checks() if c.id != "config-drift"]
    w = watch.Watcher(fabric, load_endpoints(Path(endpoints)), checks, runner.default_collector())
    if server == "prebuilt":
        srv = watch.serve(w, ("127.0.0.1", 0))
        port = int(srv.address.rsplit(":", 1)[1])
    else:
        registry = CollectorRegistry(auto_describe=False)
        registry.register(watch.FabricCollector(w))
        httpd, _ = start_http_server(0, addr="127.0.0.1", registry=registry)
        port = httpd.server_address[1]
    print(json.dumps({"port": port}), flush=True)

    def on_round(report: Any) -> None:
        print(json.dumps({"end": time.time(), "dur": report.elapsed_s, "bytes": len(w.exposition.body)}),
              flush=True)

    w.run(every, rounds=200, on_round=on_round)  # bounded: the parent stops it long before


# --------------------------------------------------------------------------- load and measurement
def rss_kib(pid: int, field: str = "VmRSS") -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def scrape(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/metrics", headers={"Accept-Encoding": "gzip"})
        r = conn.getresponse()
        return r.status == 200 and len(r.read()) > 0
    except OSError:
        return False
    finally:
        conn.close()


class Child:
    def __init__(self, server: str, inventory: Path, endpoints: Path, every: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--child", server, "--inventory", str(inventory), "--endpoints",
             str(endpoints), "--every", str(every)], stdout=subprocess.PIPE, text=True)
        self.rounds: list[dict[str, float]] = []
        self.port: int | None = None
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            doc = json.loads(line)
            if "port" in doc:
                self.port = int(doc["port"])
                self.ready.set()
            else:
                self.rounds.append(doc)

    def wait_rounds(self, n: int, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.rounds) < n:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise SystemExit(f"watch child stalled ({len(self.rounds)} of {n} rounds)")
            time.sleep(0.05)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


def measure(server: str, inventory: Path, endpoints: Path, every: float, bursts: int, per_burst: int,
            concurrency: int) -> dict[str, Any]:
    c = Child(server, inventory, endpoints, every)
    try:
        if not c.ready.wait(60) or c.port is None:
            raise SystemExit(f"{server}: the watch child did not start")
        port = c.port
        for _ in range(5):  # warm-up (first scrape imports, first render)
            scrape(port)
        c.wait_rounds(5)
        idle = [r["dur"] for r in c.rounds[1:5]]
        rss_idle = rss_kib(c.proc.pid)
        answered = total = 0
        t_load = time.time()
        with ThreadPoolExecutor(concurrency) as pool:
            for b in range(bursts):
                if b:
                    c.wait_rounds(len(c.rounds) + 1)  # one round apart
                results = list(pool.map(lambda _i: scrape(port), range(per_burst)))
                answered += sum(results)
                total += len(results)
        t_end = time.time()
        n = len(c.rounds)
        c.wait_rounds(n + 2)
        rss_after = rss_kib(c.proc.pid)
        rss_peak = rss_kib(c.proc.pid, "VmHWM")
        loaded = [r["dur"] for r in c.rounds if r["end"] >= t_load and r["end"] - r["dur"] <= t_end]
        body = c.rounds[-1]["bytes"]
    finally:
        c.stop()
    idle_med = statistics.median(idle)
    return {
        "server": server, "answered": answered, "total": total, "idle_round_s": idle_med,
        "loaded_round_s": statistics.median(loaded) if loaded else float("nan"),
        "loaded_round_max_s": max(loaded) if loaded else float("nan"), "loaded_rounds": len(loaded),
        "rss_idle_mib": rss_idle / 1024, "rss_peak_mib": rss_peak / 1024, "rss_after_mib": rss_after / 1024,
        "load_s": t_end - t_load, "exposition_bytes": body,
    }


def report(name: str, devices: int, rows: list[dict[str, Any]]) -> None:
    print(f"\n{name}: {devices} devices")
    print(f"{'server':9} {'answered':>13} {'idle round':>10} {'loaded':>8} {'max':>7} {'x idle':>6} "
          f"{'ms/dev idle':>11} {'RSS idle':>8} {'peak':>7} {'after':>7} {'after/idle':>10} {'body':>8}")
    for r in rows:
        ratio = r["loaded_round_s"] / r["idle_round_s"]
        print(f"{r['server']:9} {r['answered']:>5}/{r['total']:<4} {100 * r['answered'] / r['total']:5.1f}% "
              f"{r['idle_round_s']:9.2f}s {r['loaded_round_s']:7.2f}s {r['loaded_round_max_s']:6.2f}s "
              f"{ratio:5.2f}x {1000 * r['idle_round_s'] / devices:10.0f} "
              f"{r['rss_idle_mib']:6.0f}Mi {r['rss_peak_mib']:5.0f}Mi {r['rss_after_mib']:5.0f}Mi "
              f"{r['rss_after_mib'] / r['rss_idle_mib']:9.2f}x {r['exposition_bytes']:>8}")
    if len(rows) == 2:
        a, b = rows
        print(f"{a['server']} vs {b['server']}: answered {a['answered'] / max(1, b['answered']):.2f}x, "
              f"loaded round time {a['loaded_round_s'] / b['loaded_round_s']:.2f}x, "
              f"RSS after load {a['rss_after_mib'] / b['rss_after_mib']:.2f}x")
    for r in rows:
        ok = (r["answered"] == r["total"], r["loaded_round_s"] <= 1.5 * r["idle_round_s"],
              r["rss_after_mib"] <= 1.1 * r["rss_idle_mib"])
        print(f"{r['server']}: goals answered 100 % {'met' if ok[0] else 'MISSED'}, round <= 1.5x idle "
              f"{'met' if ok[1] else 'MISSED'}, RSS back within 10 % {'met' if ok[2] else 'MISSED'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--child", choices=("prebuilt", "library"))
    ap.add_argument("--inventory")
    ap.add_argument("--endpoints")
    ap.add_argument("--sizes", default="lab,128", help="lab and/or GPU counts of generated RoCE fabrics")
    ap.add_argument("--servers", default="prebuilt,library")
    ap.add_argument("--every", type=float, default=3.0, help="watch round period (s)")
    ap.add_argument("--bursts", type=int, default=3)
    ap.add_argument("--per-burst", type=int, default=300)
    ap.add_argument("--concurrency", type=int, default=100)
    args = ap.parse_args()
    if args.child:
        child(args.child, args.inventory, args.endpoints, args.every)
        return
    from fabriccfg.mock.fabric import MockFabric

    print(f"round every {args.every:g} s; {args.bursts} bursts x {args.per_burst} scrapes, "
          f"{args.concurrency} at a time; mock on loopback in 2 worker processes; {os.cpu_count()} CPUs")
    for size in args.sizes.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            if size == "lab":
                inventory, name = LAB, LAB.name
            else:
                inventory, name = Path(tmp) / "fabric.yaml", f"generated RoCE, {int(size)} GPUs"
                inventory.write_text(gen.dump_yaml(gen.generate(int(size), "roce")))
            fabric = load_fabric(inventory)
            with MockFabric(fabric, workdir=Path(tmp) / "mock", processes=2) as mock:
                rows = [measure(server, inventory, mock.endpoints_file, args.every, args.bursts,
                                args.per_burst, args.concurrency) for server in args.servers.split(",")]
        report(f"{name} (load average {os.getloadavg()[0]:.1f})", len(fabric.devices), rows)


if __name__ == "__main__":
    main()
