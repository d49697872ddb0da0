"""Push wall time: fabriccfg vs Nornir + nornir_netmiko on the same mock fabric, configs and workers.

    .venv/bin/python benchmarks/bench_push.py [--workers 20] [--repeat 1] [--gen-gpus 1028] [--only roce|gen]

For each fabric (the example RoCE lab, and a ``gen``-ed fabric of about 200 devices) and each tool, a
fresh mock fabric is started in worker processes (so its CPU is not charged to either client), the
tool pushes, and the mock is stopped. fabriccfg runs the whole guarded transaction (fetch, diff,
backup, apply, verify by re-reading, confirm, save). Nornir runs only the change itself: the same
config lines / patch / file uploads fabriccfg's transaction sends, through ``netmiko_send_config`` +
``netmiko_save_config`` (CLI switches) or ``netmiko_send_command`` (NVUE, SONiC, Linux hosts).

Nornir lives in ``benchmarks/.venv-peers`` (created on first use: nornir 3.6, nornir_netmiko 1.0.1),
never in the project environment. Goal: fabriccfg <= 0.5x Nornir's wall time.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PEERS = HERE / ".venv-peers"
PEER_SCRIPT = HERE / "nornir_push_peer.py"
PEER_PACKAGES = ["nornir==3.6.0", "nornir-netmiko==1.0.1"]
INVENTORIES = HERE.parent / "fabriccfg" / "data" / "inventories"
CHUNK = 3000


def peers_python() -> Path:
    py = PEERS / "bin" / "python"
    if not py.exists():
        print(f"creating {PEERS} with {' '.join(PEER_PACKAGES)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(PEERS)], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", *PEER_PACKAGES], check=True)
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


def run_fabriccfg(fabric: Any, workers: int, work: Path) -> tuple[float, list[str]]:
    from fabriccfg.push import api
    from fabriccfg.push.runner import RunnerOptions

    mock = start_mock(fabric, work / "mock")
    try:
        jobs = api.plan_jobs(fabric, mock.endpoints, list(fabric.devices))
        t0 = time.perf_counter()
        runner = RunnerOptions(workers=workers, timeout=300)
        rep = api.push(fabric, jobs, run_base=work / "runs", runner=runner, confirm_timeout=600)
        wall = time.perf_counter() - t0
    finally:
        mock.stop()
    bad = [f"{d.name}: {d.state} {d.reason[:80]}" for d in rep.devices if d.target and d.state != "applied"]
    return wall, bad


def run_nornir(fabric: Any, workers: int, work: Path, py: Path) -> tuple[float, list[str]]:
    from fabriccfg.push import api
    from fabriccfg.push.runner import RunnerOptions

    mock = start_mock(fabric, work / "mock")
    try:
        jobs = [j for j in api.plan_jobs(fabric, mock.endpoints, list(fabric.devices)) if j.target]
        # the same change fabriccfg computes against a fresh device (a read-only live diff)
        keep: dict[str, dict[str, str]] = {}
        fetch = api.live_fetcher(fabric, mock.endpoints, runner=RunnerOptions(workers=workers))
        from fabriccfg.render.diff import diff_device
        from fabriccfg.render.engine import RenderedDevice

        running = fetch([RenderedDevice(j.name, j.platform, j.intended) for j in jobs])
        hosts = []
        for j in jobs:
            got = running[j.name]
            if isinstance(got, Exception):
                continue
            keep[j.name] = got
            diff = diff_device(j.platform, j.intended, got)
            ep = j.endpoint
            hosts.append({"name": j.name, "host": ep.host, "port": ep.ssh_port, "username": ep.username,
                          "password": ep.password, "device_type": ep.device_type,
                          "steps": nornir_steps(j, diff)})
        job_file = work / "nornir-job.json"
        job_file.write_text(json.dumps({"workers": workers, "hosts": hosts}))
        out = subprocess.run([str(py), str(PEER_SCRIPT), str(job_file)], capture_output=True, text=True,
                             timeout=1800, check=False)
        job_file.unlink()
    finally:
        mock.stop()
    if out.returncode != 0:
        raise RuntimeError(f"nornir run failed: {out.stderr[-2000:]}")
    res = json.loads(out.stdout.strip().splitlines()[-1])
    bad = [f"{h}: {res['errors'].get(h, '')[:80]}" for h in res["failed"]]
    return float(res["wall"]), bad


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--gen-gpus", type=int, default=1028, help="gen size (1028 GPUs -> 201 devices)")
    ap.add_argument("--only", choices=["roce", "gen"])
    args = ap.parse_args()
    py = peers_python()
    rows = []
    for label, fabric in load_fabrics(args.gen_gpus, args.only):
        ours, theirs = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as tmp:
                w, bad_ours = run_fabriccfg(fabric, args.workers, Path(tmp) / "ours")
                ours.append(w)
                w, bad_theirs = run_nornir(fabric, args.workers, Path(tmp) / "nornir", py)
                theirs.append(w)
        a, b = statistics.median(ours), statistics.median(theirs)
        rows.append((label, len(fabric.devices), a, b, bad_ours, bad_theirs))
        print(f"{label}: fabriccfg {a:.2f}s, nornir {b:.2f}s, ratio {a / b:.2f}", flush=True)
    print()
    print(f"{'fabric':<26} {'devices':>7} {'workers':>7} {'fabriccfg':>10} {'nornir':>8} {'ratio':>6}")
    for label, n, a, b, bad_ours, bad_theirs in rows:
        print(f"{label:<26} {n:>7} {args.workers:>7} {a:>9.2f}s {b:>7.2f}s {a / b:>6.2f}")
        for what, bad in (("fabriccfg", bad_ours), ("nornir", bad_theirs)):
            if bad:
                print(f"  {what}: {len(bad)} device(s) not applied, e.g. {bad[0]}")
    print("goal: ratio <= 0.50 (fabriccfg runs the full guarded transaction; Nornir only sends the change)")


if __name__ == "__main__":
    main()
