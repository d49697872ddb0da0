"""`fabriccfg verify` / `watch` command line: exit codes (Nagios), formats, usage errors -> 3."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.verify import runner

from .conftest import ROOT
from .synth import Synth

ROCE = str(ROOT / "inventories" / "roce-lab.yaml")


@pytest.fixture
def fake(monkeypatch, roce):
    """Replace the live collector with a synthetic fabric whose clock moves 2 s per round."""
    synth = Synth(roce)
    clock = {"t": 0.0}

    def collector(**_kw):
        def collect(fabric, targets):
            clock["t"] += 2.0
            return synth.snapshot(clock["t"])

        return collect

    monkeypatch.setattr(runner, "default_collector", collector)
    monkeypatch.setenv("FABRIC_SSH_PASSWORD", "pw-for-tests")
    monkeypatch.setenv("FABRIC_SNMP_AUTH", "auth-for-tests")
    monkeypatch.setenv("FABRIC_SNMP_PRIV", "priv-for-tests")
    return synth


def invoke(*args: str):
    return CliRunner().invoke(app, list(args))


def test_ok_exit_0(fake):
    r = invoke("verify", ROCE, "--interval", "0s")
    assert r.exit_code == 0, r.output
    assert "OK: 0 finding(s)" in r.output


def test_warning_exit_1(fake):
    fake.set_state("leaf-r0", "swp29", "speed_mbps", 200000)
    r = invoke("verify", ROCE, "--interval", "0s", "--format", "json")
    assert r.exit_code == 1, r.output
    assert json.loads(r.output)["status"] == "WARNING"


def test_critical_exit_2_junit(fake):
    fake.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    r = invoke("verify", ROCE, "--interval", "0s", "--format", "junit")
    assert r.exit_code == 2, r.output
    ET.fromstring(r.output)


def test_unknown_exit_3(fake):
    fake.unreachable.add("leaf-r3")
    r = invoke("verify", ROCE, "--interval", "0s", "--format", "prometheus")
    assert r.exit_code == 3, r.output
    assert "fabriccfg_verify_status 3" in r.output


def test_storm_and_only(fake):
    fake.pause_storm("gpu07", "mlx5_1", since=0.0, hop_s=0.0)
    r = invoke(
        "verify", ROCE, "--interval", "0s", "--samples", "3", "--only", "pfc-storm-origin", "--format", "json"
    )
    assert r.exit_code == 2, r.output
    doc = json.loads(r.output)
    assert [f["origin"] for f in doc["findings"]] == ["gpu07:mlx5_1"]


@pytest.mark.parametrize(
    "args",
    [
        ("verify",),
        ("verify", ROCE, "--bogus"),
        ("verify", ROCE, "--format", "xml"),
        ("verify", ROCE, "--samples", "0"),
        ("verify", ROCE, "--interval", "soon"),
        ("verify", ROCE, "--only", "no-such-check"),
        ("verify", "/nonexistent/inventory.yaml"),
        ("verify", ROCE, "--checks", "/nonexistent-dir"),
        ("watch", ROCE, "--shard", "4/4"),
        ("watch", ROCE, "--serve", "nohostport"),
    ],
)
def test_usage_errors_exit_3(fake, args):
    r = invoke(*args)
    assert r.exit_code == 3, (args, r.output)
    assert "Traceback" not in r.output


def test_bad_user_check_exit_3(fake, tmp_path):
    (tmp_path / "evil.yaml").write_text("id: evil\nvalue: __import__('os').system('true')\nwarn: 1\n")
    r = invoke("verify", ROCE, "--checks", str(tmp_path))
    assert r.exit_code == 3
    assert "evil.yaml" in r.output


def test_watch_once(fake):
    fake.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    r = invoke("watch", ROCE, "--once", "--format", "json")
    # one round without a store: rate checks have no baseline, so the round is UNKNOWN, never OK
    assert r.exit_code == 3, r.output
    doc = json.loads(r.stdout)
    assert doc["points"] == 1 and doc["status"] == "UNKNOWN"
    assert re.search(r"UNKNOWN: .*; \d+ series$", r.stderr.strip()), r.stderr  # series count per round
    drops = [f for f in doc["findings"] if f["check"] == "lossless-queue-drops"]
    assert drops and drops[0]["severity"] == "unknown" and "no baseline yet" in drops[0]["message"]


def test_state_dir_gives_rates_to_single_sample_runs(fake, tmp_path):
    import time as _time

    fake.epoch = _time.time() - 100.0
    fake.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    state = str(tmp_path / "state")
    first = invoke("verify", ROCE, "--samples", "1", "--state-dir", state, "--format", "json")
    assert first.exit_code == 3, first.output  # nothing to compare with yet: UNKNOWN, not OK
    doc = json.loads(first.output)
    assert doc["points"] == 1 and doc["status"] == "UNKNOWN"
    assert {f["severity"] for f in doc["findings"]} == {"unknown"}
    second = invoke("verify", ROCE, "--samples", "1", "--state-dir", state, "--format", "json")
    assert second.exit_code == 2, second.output
    doc = json.loads(second.output)
    assert [f["check"] for f in doc["findings"]] == ["lossless-queue-drops"]
    assert doc["interval_s"] == 2.0


def test_config_drift_with_running_dir(fake, roce, tmp_path):
    from fabriccfg.render.engine import render_device

    for name in ("leaf-r0", "leaf-r1"):
        for fname, text in render_device(roce, name).files.items():
            (tmp_path / name).mkdir(exist_ok=True)
            (tmp_path / name / fname).write_text(text)
    args = ("verify", ROCE, "--interval", "0s", "--only", "config-drift", "--format", "json")
    r = invoke(*args)  # no running configs: UNKNOWN check state, not a finding
    assert r.exit_code == 0, r.output
    assert json.loads(r.output)["checks"][0]["state"] == "unknown"
    r = invoke(*args, "--running", str(tmp_path))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["checks"][0]["state"] == "ok"
    # devices the folder has no config for are named and skipped, as `diff --against` does
    assert "no saved config for leaf-r2, skipped" in r.stderr and "for leaf-r0," not in r.stderr
    cfg = tmp_path / "leaf-r0" / "config.txt"
    lines = cfg.read_text().splitlines()
    cfg.write_text("\n".join(ln for ln in lines if "pfc" not in ln.lower()) + "\n")
    r = invoke(*args, "--running", str(tmp_path))
    assert r.exit_code == 1, r.output
    (f,) = json.loads(r.stdout)["findings"]
    assert f["check"] == "config-drift" and f["device"] == "leaf-r0" and f["value"] >= 1


def test_collector_failure_is_unknown_not_traceback(monkeypatch):
    def broken(**_kw):
        def collect(fabric, targets):
            raise RuntimeError("agent exploded")

        return collect

    monkeypatch.setattr(runner, "default_collector", broken)
    monkeypatch.setenv("FABRIC_SSH_PASSWORD", "pw-for-tests")
    monkeypatch.setenv("FABRIC_SNMP_AUTH", "auth-for-tests")
    monkeypatch.setenv("FABRIC_SNMP_PRIV", "priv-for-tests")
    for args in (("verify", ROCE, "--interval", "0s"), ("watch", ROCE, "--once")):
        r = invoke(*args)
        assert r.exit_code == 3, r.output
        assert "agent exploded" in r.output and "Traceback" not in r.output
