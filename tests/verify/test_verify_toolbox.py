"""issue 16 §3/§4 for verify and watch: JUnit's skipped count is the table's, --insecure-host-keys is
loud and recorded, watch --help offers no --samples, live progress on a terminal while sampling."""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.verify import output

from .conftest import ROOT, run
from .synth import Synth
from .test_verify_cli import ROCE, fake  # noqa: F401 - the fixture

VENV_BIN = Path(sys.executable).parent


def test_junit_skipped_equals_the_tables(roce, ib, checks):
    synth = Synth(roce)
    synth.unreachable.add("leaf-r1")  # unknown findings: errors in JUnit, never "skipped"
    synth.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    for fabric_synth in (synth, Synth(ib)):
        report = run(fabric_synth, checks)
        table = output.to_table(report)
        m = re.search(r"(\d+) check\(s\) ran, (\d+) skipped", table)
        assert m, table
        root = ET.fromstring(output.to_junit(report).split("\n", 1)[1])
        assert int(root.get("skipped")) == int(m.group(2)) > 0
        assert int(root.get("skipped")) == sum(int(s.get("skipped")) for s in root.iter("testsuite"))
        assert int(root.get("errors")) == sum(int(s.get("errors")) for s in root.iter("testsuite"))
        assert len(root.findall(".//testcase/skipped")) == int(root.get("skipped"))
    assert int(root.get("failures")) == 0  # the IB lab is healthy


def test_insecure_host_keys_is_loud_and_recorded(fake):  # noqa: F811
    r = CliRunner().invoke(app, ["verify", ROCE, "--interval", "0s", "--format", "json",
                                 "--insecure-host-keys"])
    assert "WARNING: --insecure-host-keys" in r.stderr
    assert json.loads(r.stdout)["warnings"] == ["host-key checking was disabled (--insecure-host-keys)"]
    r = CliRunner().invoke(app, ["verify", ROCE, "--interval", "0s", "--insecure-host-keys"])
    assert "WARNING: host-key checking was disabled" in r.stdout
    r = CliRunner().invoke(app, ["watch", ROCE, "--once", "--format", "prometheus", "--insecure-host-keys"])
    assert "WARNING: --insecure-host-keys" in r.stderr
    assert "\nfabriccfg_host_keys_unchecked 1\n" in r.stdout
    r = CliRunner().invoke(app, ["watch", ROCE, "--once", "--format", "prometheus"])
    assert "\nfabriccfg_host_keys_unchecked 0\n" in r.stdout


def test_watch_help_has_no_samples_flag():
    r = CliRunner().invoke(app, ["watch", "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0 and "--samples" not in r.output and "--all-priorities" in r.output
    assert "--insecure-host-keys" in r.output and "--known-hosts" in r.output


def test_verify_shows_progress_on_a_terminal(tmp_path):
    """stderr on a pseudo-terminal: rich's live status names the sample being taken; piped, silence."""
    from fabriccfg import catalog
    from fabriccfg.inventory.load import load_fabric
    from fabriccfg.targets import Endpoint, write_endpoints

    fabric = load_fabric(ROOT / "inventories" / "roce-lab.yaml")
    dead = tmp_path / "dead.json"  # nothing listens: each poll fails fast, the run is UNKNOWN
    write_endpoints(dead, [Endpoint(name=n, platform=d.platform, host="127.0.0.1", ssh_port=9,
                                    device_type=catalog.info(d.platform).device_type)
                           for n, d in fabric.devices.items()])
    cmd = [str(VENV_BIN / "fabriccfg"), "verify", ROCE, "--endpoints", str(dead), "--interval", "2s",
           "--insecure-host-keys"]
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                seen += chunk
            elif proc.poll() is not None:
                break
    finally:
        proc.wait(timeout=30)
        os.close(master)
    text = seen.decode("utf-8", "replace")
    assert "polling sample 1/2" in text and "next sample in" in text, text[-2000:]
    piped = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)
    assert "polling sample" not in piped.stderr and piped.returncode == 3
