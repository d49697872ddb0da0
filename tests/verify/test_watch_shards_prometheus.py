"""Three `watch --shard I/3` processes against one mock fabric, scraped by a real Prometheus server.

The shards' findings, read back from Prometheus (``fabriccfg_finding`` and the shipped alert rules'
``ALERTS``), must be the findings of one unsharded round over the same fabric, and
``fabriccfg storm --from-prometheus`` must trace the storm to the same origin as the unsharded round.
A pause storm from gpu05 crosses shard borders: gpu05 and leaf-r0 are in shard 1, spine1 in shard 0.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from fabriccfg.mock.fabric import MockFabric
from fabriccfg.targets import load_endpoints
from fabriccfg.verify import runner

from .conftest import ROOT

INVENTORY = ROOT / "inventories" / "roce-lab.yaml"
RULES = ROOT / "fabriccfg" / "data" / "checks" / "prometheus" / "fabriccfg-alerts.yml"
TOOL = Path(sys.executable).parent / "fabriccfg"
PROMETHEUS = shutil.which("prometheus")
SHARDS = 3
CHECKS = ["pfc-pause-storm", "pfc-storm-origin", "pfc-watchdog-fired", "link-state-speed", "eth-cabling"]

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed (Debian package 'prometheus', "
                       "scripts/setup.sh installs it)"),
]


def _free_port() -> int:
    """A loopback port for Prometheus (it does not report the port it got for :0)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.loads(r.read())


def _query(base: str, q: str) -> list[dict]:
    doc = _get_json(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": q}))
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def _until(what: str, fn, deadline_s: float):
    """Poll ``fn`` until it returns a truthy value or the deadline passes (then fail with ``what``)."""
    end = time.monotonic() + deadline_s
    last = None
    while time.monotonic() < end:
        last = fn()
        if last:
            return last
        time.sleep(0.25)
    pytest.fail(f"timed out waiting for {what}; last: {last!r}")


def _serving_address(proc: subprocess.Popen, deadline_s: float = 60) -> str:
    """The HOST:PORT a `watch --serve 127.0.0.1:0` prints on stderr."""
    assert proc.stderr is not None
    end = time.monotonic() + deadline_s
    seen = []
    while time.monotonic() < end:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        m = re.search(r"serving metrics on http://(\S+)/metrics", line)
        if m:
            return m.group(1)
    pytest.fail(f"watch did not start serving: {''.join(seen)[-2000:]}")


def _keys(findings) -> set[tuple[str, str, str]]:
    return {(f["check"], f["device"] or "", f["port"] or "") for f in findings}


def test_three_shards_through_prometheus_equal_one_unsharded_round(roce, checks, tmp_path):
    live = [c for c in checks if c.id in CHECKS]
    with MockFabric(roce, scenarios=["pause-storm:gpu05"], workdir=tmp_path / "mock") as mock:
        # the reference: one unsharded round (two samples, rates between them)
        eps = load_endpoints(mock.endpoints_file)
        # the storm spreads one hop per 1.5 s: verify until it has reached the other leaves and two
        # rounds in a row agree (the steady state the shards will see too)
        prev: set[tuple[str, str, str]] = set()
        end = time.monotonic() + 60
        while True:
            ref = runner.verify(roce, eps, live, runner.default_collector(), samples=2, interval=1.5)
            want = {(f.check, f.device or "", f.port or "") for f in ref.findings
                    if f.severity in ("warning", "critical")}
            origin = [f for f in ref.findings if f.check == "pfc-storm-origin"]
            if want == prev and origin and "leaf-r1" in origin[0].details["hops"]:
                break
            assert time.monotonic() < end, f"the storm did not settle: {want}"
            prev = want
        assert ("pfc-storm-origin", "gpu05", "mlx5_0") in want, want
        # the paths cross shard borders: leaf-r0 (shard 1) -> spine1 (shard 0) -> leaf-r1 (shard 2)
        assert origin[0].details["hops"] == ["gpu05", "leaf-r0", "spine1", "leaf-r1"], origin[0].details
        assert {f.severity for f in ref.findings} <= {"warning", "critical"}  # nothing UNKNOWN

        procs: list[subprocess.Popen] = []
        prom: subprocess.Popen | None = None
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        try:
            for i in range(SHARDS):
                cmd = [str(TOOL), "watch", str(INVENTORY), "--endpoints", str(mock.endpoints_file),
                       "--every", "1s", "--shard", f"{i}/{SHARDS}", "--serve", "127.0.0.1:0",
                       "--hysteresis", "1/1", *[a for c in CHECKS for a in ("--only", c)]]
                procs.append(subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                              text=True, env=env))
            addresses = [_serving_address(p) for p in procs]
            port = _free_port()
            base = f"http://127.0.0.1:{port}"
            config = tmp_path / "prometheus.yml"
            config.write_text(
                "global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 1s}\n"
                f"rule_files: ['{RULES}']\n"
                "scrape_configs:\n"
                "- job_name: fabriccfg\n"
                "  static_configs:\n"
                f"  - targets: {json.dumps(addresses)}\n",
                encoding="utf-8",
            )
            prom = subprocess.Popen(
                [str(PROMETHEUS), f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                 f"--web.listen-address=127.0.0.1:{port}", "--log.level=warn"],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

            def ready() -> bool:
                try:
                    return _get_json(f"{base}/api/v1/status/buildinfo")["status"] == "success"
                except OSError:
                    assert prom is not None and prom.poll() is None, prom.stderr.read() if prom.stderr else ""
                    return False

            _until("Prometheus to answer", ready, 60)

            def all_up() -> bool:
                up = _query(base, 'up{job="fabriccfg"}')
                return len(up) == SHARDS and all(r["value"][1] == "1" for r in up)

            _until("Prometheus to scrape all three shards", all_up, 60)

            last: set | None = None

            def settled():
                nonlocal last
                rows = _query(base, "fabriccfg_finding")
                last = {(r["metric"]["check"], r["metric"].get("device", ""), r["metric"].get("port", ""),
                         r["metric"]["severity"]) for r in rows}
                # the first round of each shard is UNKNOWN (no baseline yet) until its second round
                return {k[:3] for k in last if k[3] != "unknown"} == want and all(k[3] != "unknown"
                                                                                   for k in last)

            if not _until_soft(settled, 90):
                assert last == want, (last, want)  # shows the difference
            # every shard reports only its own devices (and is not UNKNOWN about the others')
            rows = _query(base, "fabriccfg_finding")
            for r in rows:
                dev, inst = r["metric"].get("device", ""), r["metric"]["instance"]
                assert dev and runner.shard_of(dev, SHARDS) == addresses.index(inst), r["metric"]
            assert not [r for r in rows if r["metric"]["severity"] == "unknown"], rows
            status = {r["metric"]["instance"]: r["value"][1] for r in _query(base, "fabriccfg_verify_status")}
            assert len(status) == SHARDS
            assert status[addresses[2]] == "0"  # leaf-r1's shard: no finding on its devices
            assert status[addresses[1]] == "2"  # gpu05, leaf-r0: the storm origin
            # the shipped alert rules fire (or are pending) for the same (check, device, port) set
            groups = _get_json(f"{base}/api/v1/rules")["data"]["groups"]
            assert groups and groups[0]["rules"], "the shipped alert rules did not load"

            def alerted():
                return {(a["metric"]["check"], a["metric"].get("device", ""), a["metric"].get("port", ""))
                        for a in _query(base, "ALERTS{check!=\"\"}")} == want

            _until("ALERTS for the same findings", alerted, 30)
            # the cross-shard tracer over every shard's data names the unsharded round's origin
            # (it needs a few scrapes of history for rate(): poll until it has them)
            def traced():
                run = subprocess.run([str(TOOL), "storm", str(INVENTORY), "--from-prometheus", base,
                                      "--window", "30s", "--step", "2s", "--format", "json"],
                                     capture_output=True, text=True, timeout=60, env=env)
                assert run.returncode in (0, 2), run.stderr
                return run if run.returncode == 2 else None

            storm = _until("fabriccfg storm to trace the storm from Prometheus", traced, 90)
            doc = json.loads(storm.stdout)
            origins = {(f["device"], f["port"], f.get("origin")) for f in doc["findings"]}
            ref_origin = next(f for f in ref.findings if f.check == "pfc-storm-origin")
            assert origins == {(ref_origin.device, ref_origin.port, ref_origin.origin)}
        finally:
            for p in [*procs, *([prom] if prom is not None else [])]:
                p.terminate()
            for p in [*procs, *([prom] if prom is not None else [])]:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(timeout=10)
    # SIGTERM finishes a shard cleanly with its last round's status (gpu05's shard: CRITICAL)
    assert procs[1].returncode == 2
    assert procs[2].returncode == 0


def _until_soft(fn, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if fn():
            return True
        time.sleep(0.5)
    return False
