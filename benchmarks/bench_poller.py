"""Poller benchmark: fabriccfg's SNMP poller vs naive pysnmp, net-snmp snmpbulkwalk and the Go
prometheus-snmp-exporter, all against the same mock agents of a ``gen``-ed fabric.

The agents run in separate processes (``--agent-procs``) so the poller's process measures only the
poller; their CPU is reported too (if they run near 100 % of a core, the agents are the bottleneck
and the client numbers are a lower bound). Columns per device are the platform's TELEMETRY tables
(IF-MIB, PFC, vendor QoS, LLDP) plus ifName.

    .venv/bin/python benchmarks/bench_poller.py [--gpus 256] [--platform cumulus-nvue] [--rounds 3]

Prints CPU microseconds per useful varbind and varbinds per second for each client, and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fabriccfg import catalog  # noqa: E402
from fabriccfg.inventory import gen  # noqa: E402
from fabriccfg.inventory.load import load_fabric  # noqa: E402
from fabriccfg.targets import SnmpAccess  # noqa: E402
from fabriccfg.telemetry import oids  # noqa: E402
from fabriccfg.telemetry.collect import snmp_samples, telemetry_spec, walk_groups  # noqa: E402
from fabriccfg.telemetry.snmp import SnmpPoller, SnmpTarget  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
V3 = {"user": "fabric", "auth_key": "authpass123", "priv_key": "privpass123"}


# --------------------------------------------------------------------------- agent farm (child process)
def serve_agents(inventory: str, devices: list[str], seed: int) -> None:
    from fabriccfg.mock.snmp import start_agent
    from fabriccfg.mock.traffic import TrafficModel

    fabric = load_fabric(inventory)

    async def main() -> None:
        model = TrafficModel(fabric, seed=seed)
        ports = {}
        for name in devices:
            agent = await start_agent(model, name, v3_user=V3)
            ports[name] = agent.port
        print("PORTS " + json.dumps(ports), flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes our stdin

    asyncio.run(main())


def proc_cpu(pid: int) -> float:
    """utime + stime of ``pid`` (all threads) in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK


@dataclass
class Result:
    client: str
    varbinds: int
    wall: float
    cpu: float
    agent_cpu: float
    note: str = ""

    @property
    def us_per_vb(self) -> float:
        return 1e6 * self.cpu / self.varbinds if self.varbinds else float("nan")

    @property
    def vb_per_s(self) -> float:
        return self.varbinds / self.wall if self.wall else float("nan")


class Farm:
    def __init__(self, inventory: Path, devices: list[str], procs: int, seed: int) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        self.ports: dict[str, int] = {}
        chunks = [devices[i::procs] for i in range(procs)]
        for chunk in chunks:
            if not chunk:
                continue
            p = subprocess.Popen([sys.executable, __file__, "--serve", str(inventory), "--seed", str(seed),
                                  "--devices", ",".join(chunk)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.procs.append(p)
        for p in self.procs:
            assert p.stdout is not None
            line = p.stdout.readline()
            if not line.startswith("PORTS "):
                raise SystemExit(f"agent farm failed to start: {line!r}")
            self.ports.update(json.loads(line[6:]))

    def cpu(self) -> float:
        return sum(proc_cpu(p.pid) for p in self.procs)

    def close(self) -> None:
        for p in self.procs:
            assert p.stdin is not None
            p.stdin.close()
            try:
                p.wait(5)
            except subprocess.TimeoutExpired:
                p.kill()


def measure(name: str, farm: Farm, fn: Any, *, child_cpu: Any = None, note: str = "") -> Result:
    a0 = farm.cpu()
    c0 = time.process_time()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    x0 = child_cpu() if child_cpu else 0.0
    w0 = time.perf_counter()
    varbinds = fn()
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0
    cpu += (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
    if child_cpu:
        cpu = child_cpu() - x0  # the exporter's CPU, not ours (we only issue HTTP requests)
    return Result(name, varbinds, wall, cpu, farm.cpu() - a0, note)


# --------------------------------------------------------------------------- clients
def run_fabriccfg(jobs: list[tuple[SnmpTarget, list[tuple[int, ...]]]], rounds: int, max_varbinds: int,
                  to_samples: dict[str, Any] | None = None, groups: dict[str, Any] | None = None) -> int:
    async def main() -> int:
        total = 0
        async with SnmpPoller(max_varbinds=max_varbinds) as p:
            await p.walk_many(jobs[:1])  # engine warm-up and v3 discovery are not what we measure
            for _ in range(rounds):
                if groups is not None:  # one loop per table, concurrently per agent (what collect() does)
                    results = await p.walk_many_groups((t, groups[t.name]) for t, _ in jobs)
                else:
                    results = await p.walk_many(jobs)
                for r in results:
                    if r.error:
                        raise SystemExit(f"{r.target}: {r.error}")
                    total += r.useful_varbinds
                    if to_samples is not None:
                        snmp_samples(r.target, r, to_samples[r.target])
        return total

    return asyncio.run(main())


def run_pysnmp_naive(jobs: list[tuple[SnmpTarget, list[tuple[int, ...]]]], multi_column: bool) -> int:
    from pysnmp.hlapi.v3arch.asyncio import (
        CommunityData,
        ContextData,
        ObjectIdentity,
        ObjectType,
        SnmpEngine,
        UdpTransportTarget,
        bulk_cmd,
        bulk_walk_cmd,
    )

    async def one(engine: Any, t: SnmpTarget, cols: list[tuple[int, ...]]) -> int:
        target = await UdpTransportTarget.create((t.host, t.port), timeout=2, retries=2)
        auth = CommunityData("public")
        n = 0
        if not multi_column:  # the tutorial way: one bulk walk per column, MIB lookups on
            for c in cols:
                async for err, _st, _ix, vbs in bulk_walk_cmd(engine, auth, target, ContextData(), 0, 25,
                                                              ObjectType(ObjectIdentity(c)),
                                                              lexicographicMode=False):
                    if err:
                        raise SystemExit(str(err))
                    n += len(vbs)
            return n
        last = [ObjectType(ObjectIdentity(c)) for c in cols]
        prefixes = list(cols)
        active = list(range(len(cols)))
        while active:
            reps = max(1, 64 // len(active))
            err, _st, _ix, vbs = await bulk_cmd(engine, auth, target, ContextData(), 0, reps,
                                                *[last[i] for i in active], lookupMib=False)
            if err:
                raise SystemExit(str(err))
            ended = set()
            for j, vb in enumerate(vbs):
                ci = active[j % len(active)]
                if ci in ended:
                    continue
                oid = tuple(vb[0])
                if oid[:len(prefixes[ci])] != prefixes[ci] or vb[1].__class__.__name__ == "EndOfMibView":
                    ended.add(ci)
                    continue
                last[ci] = ObjectType(ObjectIdentity(vb[0]))
                n += 1
            active = [c for c in active if c not in ended]
        return n

    async def main() -> int:
        engine = SnmpEngine()
        try:
            return sum(await asyncio.gather(*(one(engine, t, c) for t, c in jobs)))
        finally:
            engine.close_dispatcher()

    return asyncio.run(main())


def run_snmpbulkwalk(jobs: list[tuple[SnmpTarget, list[tuple[int, ...]]]], parallel: int) -> int:
    exe = shutil.which("snmpbulkwalk")
    assert exe is not None
    env = dict(os.environ, MIBS="", MIBDIRS="/nonexistent")
    tasks = [(t, c) for t, cols in jobs for c in cols]

    def one(task: tuple[SnmpTarget, tuple[int, ...]]) -> int:
        t, col = task
        out = subprocess.run([exe, "-v2c", "-c", "public", "-Cr25", "-On", "-Oq", "-t", "2", "-r", "2",
                              f"127.0.0.1:{t.port}", oids.dotted(col)], capture_output=True, text=True,
                             env=env, check=False)
        return sum(1 for line in out.stdout.splitlines() if line.startswith("." + oids.dotted(col) + "."))

    with ThreadPoolExecutor(parallel) as pool:
        return sum(pool.map(one, tasks))


def exporter_config(columns: dict[str, list[tuple[int, ...]]]) -> dict[str, Any]:
    modules: dict[str, Any] = {}
    for platform, cols in columns.items():
        metrics = []
        for c in cols:
            name = "c_" + "_".join(map(str, c[-4:]))
            idx = [{"labelname": "i0", "type": "gauge"}]
            if c[:9] == oids.MLNX_QOS[:9] and c[9] in (2, 4):
                idx.append({"labelname": "i1", "type": "gauge"})
            if c[:10] == oids.ARISTA_QUEUE:
                idx += [{"labelname": "i1", "type": "gauge"}, {"labelname": "i2", "type": "gauge"}]
            if c[:len(oids.LLDP_MIB)] == oids.LLDP_MIB:
                idx = [{"labelname": "i0", "type": "gauge"}, {"labelname": "i1", "type": "gauge"},
                       {"labelname": "i2", "type": "gauge"}]
            typ = "DisplayString" if c in (oids.IF_NAME, oids.LLDP_REM_SYS_NAME, oids.LLDP_REM_PORT_ID,
                                           oids.LLDP_REM_PORT_DESC) else "gauge"
            if c == oids.LLDP_REM_CHASSIS_ID:
                typ = "OctetString"
            metrics.append({"name": name, "oid": oids.dotted(c), "type": typ, "indexes": idx})
        modules[platform] = {"version": 2, "auth": {"community": "public"}, "max_repetitions": 25,
                             "retries": 2, "timeout": "5s", "walk": [oids.dotted(c) for c in cols],
                             "metrics": metrics}
    return modules


def run_exporter(jobs: list[tuple[SnmpTarget, list[tuple[int, ...]]]], platform_of: dict[str, str],
                 port: int, rounds: int, parallel: int) -> int:
    def one(t: SnmpTarget) -> int:
        url = f"http://127.0.0.1:{port}/snmp?target=127.0.0.1:{t.port}&module={platform_of[t.name]}"
        with urllib.request.urlopen(url, timeout=60) as resp:
            body = resp.read().decode()
        return sum(1 for line in body.splitlines() if line.startswith("c_"))

    targets = [t for t, _ in jobs]
    with ThreadPoolExecutor(parallel) as pool:
        return sum(sum(pool.map(one, targets)) for _ in range(rounds))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- main
def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=256)
    ap.add_argument("--technology", default="roce", choices=["roce", "infiniband"])
    ap.add_argument("--platform", default="cumulus-nvue")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--agent-procs", type=int, default=1)
    ap.add_argument("--max-varbinds", type=int, nargs="*", default=[64, 256])
    ap.add_argument("--naive-devices", type=int, default=4, help="devices for the (slow) naive pysnmp runs")
    ap.add_argument("--parallel", type=int, default=4,
                    help="concurrent snmpbulkwalk processes / exporter scrapes")
    ap.add_argument("--serve", help=argparse.SUPPRESS)
    ap.add_argument("--devices", help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    if args.serve:
        serve_agents(args.serve, args.devices.split(","), args.seed)
        return

    tmp = Path(tempfile.mkdtemp(prefix="bench-poller-"))
    inv = tmp / "inventory.yaml"
    inv.write_text(gen.dump_yaml(gen.generate(args.gpus, args.technology, platform=args.platform
                                              if args.technology == "roce" else None)))
    fabric = load_fabric(inv)
    snmp_devs = [d for d in fabric.devices.values() if catalog.info(d.platform).has_snmp
                 and telemetry_spec(d.platform) is not None and telemetry_spec(d.platform).snmp]  # type: ignore[union-attr]
    if not snmp_devs:
        raise SystemExit("no SNMP devices in this fabric (MQM8790 fabrics have none: use --technology roce)")
    farm = Farm(inv, [d.name for d in snmp_devs], args.agent_procs, args.seed)
    results: list[Result] = []
    try:
        v2c = SnmpAccess(version="2c", community="public")
        v3 = SnmpAccess(version="3", user="fabric", auth_protocol="sha", auth_key=V3["auth_key"],
                        priv_protocol="aes", priv_key=V3["priv_key"])
        tables_of = {d.name: telemetry_spec(d.platform).snmp for d in snmp_devs}  # type: ignore[union-attr]
        cols_of = {d.platform: [oids.IF_NAME, *(c.oid for t in telemetry_spec(d.platform).snmp  # type: ignore[union-attr]
                                                for c in t.columns)] for d in snmp_devs}
        jobs = [(SnmpTarget(d.name, "127.0.0.1", farm.ports[d.name], v2c, timeout=2, retries=2),
                 cols_of[d.platform]) for d in snmp_devs]
        jobs3 = [(SnmpTarget(t.name, t.host, t.port, v3, timeout=2, retries=2), c) for t, c in jobs]
        print(f"fabric: {args.gpus} GPUs {args.technology}, {len(snmp_devs)} SNMP agents in "
              f"{len(farm.procs)} process(es); {len(jobs[0][1])} columns per device; {args.rounds} rounds",
              flush=True)
        for mv in args.max_varbinds:
            results.append(measure(f"fabriccfg v2c (max_varbinds={mv})", farm,
                                   lambda mv=mv: run_fabriccfg(jobs, args.rounds, mv)))
        mv = args.max_varbinds[-1]
        results.append(measure(f"fabriccfg v3 SHA/AES (max_varbinds={mv})", farm,
                               lambda: run_fabriccfg(jobs3, args.rounds, mv)))
        groups_of = {d.name: walk_groups(tables_of[d.name]) for d in snmp_devs}
        results.append(measure(f"fabriccfg v2c, loop per table (max_varbinds={mv})", farm,
                               lambda: run_fabriccfg(jobs, args.rounds, mv, groups=groups_of)))
        results.append(measure(f"fabriccfg v2c, per table + Sample objects (max_varbinds={mv})", farm,
                               lambda: run_fabriccfg(jobs, args.rounds, mv, to_samples=tables_of,
                                                     groups=groups_of)))
        few = jobs[:args.naive_devices]
        results.append(measure("pysnmp bulk_walk_cmd per column (naive)", farm,
                               lambda: run_pysnmp_naive(few, multi_column=False),
                               note=f"{len(few)} devices, 1 round"))
        results.append(measure("pysnmp multi-column bulk_cmd, lookupMib=False", farm,
                               lambda: run_pysnmp_naive(few, multi_column=True),
                               note=f"{len(few)} devices, 1 round"))
        if shutil.which("snmpbulkwalk"):
            results.append(measure(f"net-snmp snmpbulkwalk -Cr25 (x{args.parallel} processes)", farm,
                                   lambda: run_snmpbulkwalk(jobs, args.parallel),
                                   note="1 round; process per column"))
        else:
            print("note: snmpbulkwalk not installed (apt-get install snmp): column skipped")
        exe = shutil.which("prometheus-snmp-exporter")
        if exe:
            import yaml

            conf = tmp / "snmp.yml"
            conf.write_text(yaml.safe_dump(exporter_config(cols_of)))
            port = free_port()
            ex = subprocess.Popen([exe, f"--config.file={conf}", f"--web.listen-address=127.0.0.1:{port}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:
                    try:
                        urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).read()
                        break
                    except OSError:
                        if ex.poll() is not None:
                            err = ex.stderr.read() if ex.stderr else ""
                            raise SystemExit(f"exporter exited: {err}") from None
                        time.sleep(0.05)
                platform_of = {d.name: d.platform for d in snmp_devs}
                run_exporter(jobs[:1], platform_of, port, 1, 1)  # warm-up
                results.append(measure(f"prometheus-snmp-exporter 0.21 (x{args.parallel} scrapes)", farm,
                                       lambda: run_exporter(jobs, platform_of, port, args.rounds,
                                                            args.parallel),
                                       child_cpu=lambda: proc_cpu(ex.pid), note="exporter process CPU"))
            finally:
                ex.terminate()
                ex.wait(5)
        else:
            print("note: prometheus-snmp-exporter not installed (apt-get install prometheus-snmp-exporter): "
                  "column skipped")
    finally:
        farm.close()
    base = results[0]
    print()
    print(f"{'client':58} {'varbinds':>9} {'wall s':>7} {'CPU us/vb':>10} {'vb/s':>9} {'agents CPU':>10} "
          f"{'agent us/vb':>11}  note")
    for r in results:
        agent_pct = 100 * r.agent_cpu / r.wall if r.wall else 0
        print(f"{r.client:58} {r.varbinds:9d} {r.wall:7.2f} {r.us_per_vb:10.1f} {r.vb_per_s:9.0f} "
              f"{agent_pct:9.0f}% {1e6 * r.agent_cpu / max(1, r.varbinds):11.1f}  {r.note}")
    print()
    for r in results[1:]:
        print(f"CPU per varbind, {r.client} / {base.client}: {r.us_per_vb / base.us_per_vb:.2f}x; "
              f"throughput {base.client} / {r.client}: {base.vb_per_s / r.vb_per_s:.2f}x")
    print("\n(agents CPU = % of one core the mock agents used during the run; near 100 % means the agents "
          "limited the throughput. CPU us/vb of the exporter is the exporter process's; of snmpbulkwalk "
          "the sum of its processes'.)")


if __name__ == "__main__":
    main()
