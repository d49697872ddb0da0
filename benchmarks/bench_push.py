"""Push cost at cluster size, and the ratio to Nornir + nornir_netmiko on the same mock, lines and workers.

    .venv/bin/python benchmarks/bench_push.py [--sizes 512,2560,10240] [--processes 1,2] [--workers 20]
                                              [--nornir-gpus 1028] [--no-nornir] [--repeat 1]
    .venv/bin/python benchmarks/bench_push.py --only roce      # the 14-device example lab vs Nornir

For each ``gen --gpus N roce`` size (512 -> 88 devices, 2560 -> 560, 10240 -> 2,176) and each
``--processes`` value, a fresh mock fabric is started in its own worker processes (its CPU is read from
/proc and printed apart, never charged to the client), fabriccfg pushes every device (the whole guarded
transaction: fetch, diff, backup, apply, verify by re-reading, confirm, save) and the mock is stopped.
Printed per run: wall, client CPU (this process plus its reaped push worker processes) in total and per
device, the mock's CPU, the load average. Devices differ in cost (a Cumulus switch's NVUE config is
~10x a host's files) and the switch share grows with the fabric (27 % at 88 devices, 41 % at 2,176), so
a least-squares fit of client CPU = a x switches + b x hosts over the sizes is printed with each run's
residual: per-platform cost that stays flat shows as small residuals.

The Nornir peer (``benchmarks/.venv-peers``: nornir 3.6, nornir_netmiko 1.0.1 and the netmiko version
of this environment, created on first use) pushes the fabric of ``--nornir-gpus`` (201 devices) in the
same run. Fair by construction: same mock (fresh for each tool), same lines (Nornir sends exactly the
config lines / patch / file uploads fabriccfg's transaction sends, computed by a read-only live diff
beforehand and not timed) through ``netmiko_send_config`` + ``netmiko_save_config`` or
``netmiko_send_command``, same netmiko version, same worker count (Nornir's threaded runner
``num_workers`` = fabriccfg's ``--workers``, which ``--processes`` splits, never adds to). Nornir runs
only the change; fabriccfg also backs up, verifies and confirms. Ratios are wall time (the peer's
client CPU is printed too).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from procstat import proc_cpu  # noqa: E402

PEERS = HERE / ".venv-peers"
PEER_SCRIPT = HERE / "nornir_push_peer.py"
PEER_PACKAGES = ["nornir==3.6.0", "nornir-netmiko==1.0.1"]
"""Plus this environment's netmiko version (``peers_python``): both tools drive the same netmiko."""
INVENTORIES = HERE.parent / "fabriccfg" / "data" / "inventories"
CHUNK = 3000


def peers_python() -> Path:
    py = PEERS / "bin" / "python"
    if not py.exists():
        print(f"creating {PEERS} with {' '.join(PEER_PACKAGES)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        netmiko = f"netmiko=={metadata.version('netmiko')}"
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES, netmiko], check=True)
    return py


def load_fabrics(gen_gpus: int, only: str | None) -> list[tuple[str, Any]]:
    import yaml

    from fabriccfg.inventory.load import load_fabric, loads

    out: list[tuple[str, Any]] = []
    if only in (None, "roce"):
        out.append(("roce-lab (example)", load_fabric(INVENTORIES / "roce-lab.yaml")))
    if only in (None, "gen"):
        from fabriccfg.inventory.gen import generate

        res = loads(yaml.safe_dump(generate(gen_gpus, "roce"), sort_keys=False), f"<gen {gen_gpus}>")
        assert res.fabric is not None, [f.format() for f in res.findings]
        out.append((f"gen --gpus {gen_gpus} roce", res.fabric))
    return out


def upload_commands(path: str, content: str) -> list[str]:
    """The same upload fabriccfg's Linux transactions send (base64 chunks, checksum)."""
    b64 = base64.b64encode(content.encode()).decode()
    if len(b64) <= CHUNK:
        cmds = [f"printf '%s' '{b64}' | base64 -d > {path}"]
    else:
        staging = f"{path}.b64"
        cmds = [f"printf '%s' '{b64[i:i + CHUNK]}' {'>' if i == 0 else '>>'} {staging}"
                for i in range(0, len(b64), CHUNK)]
        cmds.append(f"cat {staging} | base64 -d > {path} ; rm -f {staging}")
    return [*cmds, f"sha256sum {path}"]


def nornir_steps(job: Any, diff: Any) -> list[dict[str, Any]]:
    """What Nornir sends for one device: the change itself, no transaction around it."""
    from fabriccfg import catalog, registry

    style = catalog.info(job.platform).config_style
    if job.platform == "cumulus-nvue":
        return [{"command": c} for c in diff.commands] + [{"command": "nv config apply -y", "timeout": 120}]
    if style == "cli":
        return [{"config": list(diff.commands), "save": True}]
    if style == "json":
        path = "/tmp/nornir.patch.json"
        return ([{"command": c} for c in upload_commands(path, json.dumps(diff.patch, indent=1) + "\n")]
                + [{"command": f"sudo config apply-patch {path}", "timeout": 120},
                   {"command": "sudo config save -y"}])
    tx = registry.transaction(job.platform)
    spec = registry.render(job.platform)
    steps: list[dict[str, Any]] = []
    for name, text in sorted(diff.files.items()):
        dest = spec.install_paths.get(name, f"/etc/fabriccfg/{name}")
        steps += [{"command": f"sudo {c}" if c.startswith("cp") else c}
                  for c in upload_commands(f"/tmp/nornir-{name}", text)]
        steps.append({"command": f"sudo mv /tmp/nornir-{name} {dest}"})
    for service in sorted({tx.services[n] for n in diff.files if n in tx.services}):
        steps.append({"command": f"sudo systemctl restart {service}", "timeout": 120})
    for name in diff.files:
        if name in getattr(tx, "run_scripts", ()):
            steps.append({"command": f"sudo bash {spec.install_paths.get(name)}", "timeout": 120})
    return steps


def start_mock(fabric: Any, work: Path) -> Any:
    from fabriccfg.mock.fabric import MockFabric

    mock = MockFabric(fabric, workdir=work, snmp=False, processes=max(2, (os.cpu_count() or 2)))
    mock.start()
    return mock


def client_cpu() -> float:
    """This process (all threads) plus its reaped children: the push worker processes, joined when the push
    returns (the mock's processes are reaped only when it stops, after the measurement)."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def measure_fabriccfg(fabric: Any, workers: int, work: Path, processes: int = 1) -> dict[str, Any]:
    """One push of every device of ``fabric`` against a fresh mock; wall, client CPU, mock CPU."""
    from fabriccfg.push import api
    from fabriccfg.push.runner import RunnerOptions

    mock = start_mock(fabric, work / "mock")
    pids = [p.pid for p, _ in mock._procs]
    try:
        jobs = api.plan_jobs(fabric, mock.endpoints, list(fabric.devices))
        c0, m0, t0 = client_cpu(), proc_cpu(pids), time.perf_counter()
        # no ``processes`` keyword at 1: the same call then runs an older fabriccfg (before/after runs)
        extra = {"processes": processes} if processes != 1 else {}
        runner = RunnerOptions(workers=workers, timeout=600, **extra)
        rep = api.push(fabric, jobs, run_base=work / "runs", runner=runner, confirm_timeout=900)
        wall, cpu, mcpu = time.perf_counter() - t0, client_cpu() - c0, proc_cpu(pids) - m0
    finally:
        mock.stop()
    bad = [f"{d.name}: {d.state} {d.reason[:80]}" for d in rep.devices if d.target and d.state != "applied"]
    switches = sum(1 for d in fabric.devices.values() if d.platform != "connectx-host")
    return {"devices": len(fabric.devices), "switches": switches,
            "processes": rep.options.get("processes", 1), "wall": wall, "cpu": cpu, "mock": mcpu, "bad": bad,
            "load": os.getloadavg()[0]}


def run_fabriccfg(fabric: Any, workers: int, work: Path, processes: int = 1) -> tuple[float, list[str]]:
    """(wall, devices not applied): the form ``bench_scale.py`` uses."""
    got = measure_fabriccfg(fabric, workers, work, processes)
    return float(got["wall"]), list(got["bad"])


def measure_nornir(fabric: Any, workers: int, work: Path, py: Path) -> dict[str, Any]:
    from fabriccfg.push import api
    from fabriccfg.push.runner import RunnerOptions
    from fabriccfg.render.diff import diff_device
    from fabriccfg.render.engine import RenderedDevice

    mock = start_mock(fabric, work / "mock")
    try:
        jobs = [j for j in api.plan_jobs(fabric, mock.endpoints, list(fabric.devices)) if j.target]
        # the same change fabriccfg computes against a fresh device (a read-only live diff, not timed)
        fetch = api.live_fetcher(fabric, mock.endpoints, runner=RunnerOptions(workers=workers))
        running = fetch([RenderedDevice(j.name, j.platform, j.intended) for j in jobs])
        hosts = []
        for j in jobs:
            got = running[j.name]
            if isinstance(got, Exception):
                continue
            diff = diff_device(j.platform, j.intended, got)
            ep = j.endpoint
            hosts.append({"name": j.name, "host": ep.host, "port": ep.ssh_port, "username": ep.username,
                          "password": ep.password, "device_type": ep.device_type,
                          "steps": nornir_steps(j, diff)})
        job_file = work / "nornir-job.json"
        job_file.write_text(json.dumps({"workers": workers, "hosts": hosts}))
        c0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run([str(py), str(PEER_SCRIPT), str(job_file)], capture_output=True, text=True,
                             timeout=1800, check=False)
        c1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        job_file.unlink()
    finally:
        mock.stop()
    if out.returncode != 0:
        raise RuntimeError(f"nornir run failed: {out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [f"{h}: {res['errors'].get(h, '')[:80]}" for h in res["failed"]]
    cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime  # includes the peer's imports
    return {"devices": len(fabric.devices), "wall": float(res["wall"]), "cpu": cpu, "bad": bad}


def run_nornir(fabric: Any, workers: int, work: Path, py: Path) -> tuple[float, list[str]]:
    got = measure_nornir(fabric, workers, work, py)
    return float(got["wall"]), list(got["bad"])


def fit(rows: list[dict[str, Any]]) -> tuple[float, float]:
    """Least squares of client CPU = a x switches + b x hosts (seconds per device of each kind)."""
    sxx = sum(r["switches"] ** 2 for r in rows)
    syy = sum((r["devices"] - r["switches"]) ** 2 for r in rows)
    sxy = sum(r["switches"] * (r["devices"] - r["switches"]) for r in rows)
    sxc = sum(r["switches"] * r["cpu"] for r in rows)
    syc = sum((r["devices"] - r["switches"]) * r["cpu"] for r in rows)
    det = sxx * syy - sxy * sxy
    if len(rows) < 2 or not det:
        return float("nan"), float("nan")
    return (sxc * syy - syc * sxy) / det, (syc * sxx - sxc * sxy) / det


def row_line(label: str, r: dict[str, Any]) -> str:
    n = r["devices"]
    return (f"| {label} | {n} | {r['switches'] / n:.0%} | {r['processes']} | {r['wall']:.1f} s | "
            f"{r['cpu']:.1f} s | {r['cpu'] / n * 1000:.1f} ms | {r['mock']:.1f} s | {r['load']:.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="512,2560,10240", help="gen --gpus values (88 / 560 / 2,176 devices)")
    ap.add_argument("--processes", default="1,2", help="--processes values to run at each size")
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--nornir-gpus", type=int, default=1028, help="fabric of the Nornir ratio (201 devices)")
    ap.add_argument("--no-nornir", action="store_true")
    ap.add_argument("--only", choices=["roce"], help="only the 14-device example lab, fabriccfg vs Nornir")
    args = ap.parse_args()
    procs = [int(x) for x in args.processes.split(",") if x]
    if args.only == "roce":
        py = peers_python()
        (label, fabric), = load_fabrics(0, "roce")
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(tmp)
            ours = [measure_fabriccfg(fabric, args.workers, work / f"o{i}") for i in range(args.repeat)]
            theirs = [measure_nornir(fabric, args.workers, work / f"n{i}", py) for i in range(args.repeat)]
        a, b = statistics.median(r["wall"] for r in ours), statistics.median(r["wall"] for r in theirs)
        print(f"{label}: fabriccfg {a:.2f} s, Nornir {b:.2f} s, ratio {a / b:.2f}")
        return
    from bench_scale import gen_fabric

    rows: list[tuple[str, dict[str, Any]]] = []
    peer: dict[str, Any] | None = None
    print(f"workers {args.workers}, cores {os.cpu_count()}, load {os.getloadavg()}", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench-push-") as tmp:
        if not args.no_nornir:
            py = peers_python()
            fabric = gen_fabric(args.nornir_gpus)
            for i in range(args.repeat):
                for p in procs:
                    r = measure_fabriccfg(fabric, args.workers, Path(tmp) / f"r{p}-{i}", p)
                    rows.append((f"gen {args.nornir_gpus}", r))
                    print(row_line(f"gen {args.nornir_gpus}", r), flush=True)
                got = measure_nornir(fabric, args.workers, Path(tmp) / f"nornir{i}", py)
                peer = got if peer is None or got["wall"] < peer["wall"] else peer
                print(f"  nornir: wall {got['wall']:.1f} s, client CPU {got['cpu']:.1f} s, "
                      f"failed {len(got['bad'])}", flush=True)
        for gpus in [int(x) for x in args.sizes.split(",") if x]:
            fabric = gen_fabric(gpus)
            for i in range(args.repeat):
                for p in procs:
                    r = measure_fabriccfg(fabric, args.workers, Path(tmp) / f"s{gpus}-{p}-{i}", p)
                    rows.append((f"gen {gpus}", r))
                    print(row_line(f"gen {gpus}", r), flush=True)
    print("\n| fabric | devices | switches | processes | push wall | client CPU | CPU / device | mock CPU "
          "| load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, r in rows:
        print(row_line(label, r))
        if r["bad"]:
            print(f"  {len(r['bad'])} device(s) not applied, e.g. {r['bad'][0]}")
    for p in procs:
        mine = [r for _, r in rows if r["processes"] == p]
        a, b = fit(mine)
        if a != a:  # nan: too few sizes
            continue
        resid = [(r["cpu"] - a * r["switches"] - b * (r["devices"] - r["switches"])) / r["cpu"] for r in mine]
        print(f"\nprocesses {p}: fit client CPU = {a * 1000:.1f} ms x switches + {b * 1000:.1f} ms x hosts; "
              "residual per run: " + ", ".join(f"{r['devices']} dev {e:+.0%}" for r, e in zip(mine, resid,
                                                                                             strict=True)))
    if peer is not None:
        print(f"\nNornir + nornir_netmiko, {peer['devices']} devices, {args.workers} workers: "
              f"wall {peer['wall']:.1f} s, client CPU {peer['cpu']:.1f} s")
        for _, r in rows:
            if r["devices"] == peer["devices"]:
                print(f"  fabriccfg --processes {r['processes']}: wall {r['wall']:.1f} s, "
                      f"ratio {r['wall'] / peer['wall']:.2f} (client CPU {r['cpu']:.1f} s)")


if __name__ == "__main__":
    main()
