"""End to end: the real mock fabric (SSH + SNMP on loopback), the real collectors, the checks.

Short real intervals (the mock's clock is the wall clock): each verify takes two snapshots ~1 s apart.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.targets import load_endpoints
from fabriccfg.verify import runner
from fabriccfg.verify.engine import Report

from .conftest import ROOT

pytestmark = pytest.mark.timeout(120)


# One mock per test (they start in ~0.2 s): the per-thread telemetry collector keeps one SNMP engine,
# and going back to an older mock whose v3 keys differ from the newest one's fails its digest.
@pytest.fixture
def roce_mock(tmp_path, roce):
    with MockFabric(roce, workdir=tmp_path / "roce-mock") as mock:
        yield mock


@pytest.fixture(scope="module")
def live_checks(checks):
    return [c for c in checks if c.id != "config-drift"]


def live_verify(fabric, mock, checks, samples=2, interval=1.0) -> Report:
    eps = load_endpoints(mock.endpoints_file)
    return runner.verify(fabric, eps, checks, runner.default_collector(), samples=samples, interval=interval)


def test_healthy_roce_then_storm(roce, roce_mock, live_checks):
    report = live_verify(roce, roce_mock, live_checks)
    assert report.findings == [], [f.to_dict() for f in report.findings]
    ran = {r.check for r in report.results if r.state == "ok"}
    assert {"pfc-pause-storm", "link-state-speed", "lossless-queue-drops", "eth-cabling"} <= ran

    roce_mock.inject("pause-storm:gpu05")
    try:
        report = live_verify(roce, roce_mock, live_checks, interval=1.5)
    finally:
        roce_mock.clear_scenarios()
    origin = [f for f in report.findings if f.check == "pfc-storm-origin"]
    assert len(origin) == 1, [f.to_dict() for f in report.findings]
    assert origin[0].origin == "gpu05:mlx5_0"
    assert origin[0].path[:2] == ["gpu05:mlx5_0", "leaf-r0:swp5"], origin[0].path
    assert ("pfc-watchdog-fired", "leaf-r0", "swp5") in {(f.check, f.device, f.port) for f in report.findings}
    assert report.exit_code == 2


def test_cli_against_mock_json(roce_mock):
    r = CliRunner().invoke(
        app,
        [
            "verify",
            str(ROOT / "inventories" / "roce-lab.yaml"),
            "--endpoints",
            str(roce_mock.endpoints_file),
            "--interval",
            "1s",
            "--format",
            "json",
            "--only",
            "link-state-speed",
            "--only",
            "eth-cabling",
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.output)
    assert doc["status"] == "OK" and doc["devices"] == 14


def test_healthy_ib_control_plane(ib, live_checks, tmp_path):
    with MockFabric(ib, workdir=tmp_path) as mock:
        report = live_verify(ib, mock, live_checks)
    assert report.findings == [], [f.to_dict() for f in report.findings]
    states = {r.check: r.state for r in report.results}
    assert states["ib-cabling"] == "ok" and states["sm-health"] == "ok" and states["sharp-health"] == "ok"
    assert states["ib-xmit-wait"] == "ok"


def test_demo_storm_step(roce, tmp_path, monkeypatch):
    from io import StringIO

    from rich.console import Console

    from fabriccfg.commands.demo import Demo
    from fabriccfg.verify import demo as demo_step

    monkeypatch.setattr(demo_step, "INTERVAL_S", 1.0)
    buf = StringIO()
    d = Demo(console=Console(file=buf, width=160), workdir=tmp_path)
    d.fabrics["roce-lab"] = roce
    try:
        demo_step.step_pause_storm(d)
    finally:
        d.close()
    out = buf.getvalue()
    assert d.problems == [], out
    assert "storm origin: gpu03:mlx5_0" in out and "path: gpu03:mlx5_0 -> leaf-r0:swp3" in out, out


def test_push_verify_rolls_back_on_critical(roce, tmp_path, monkeypatch):
    with MockFabric(roce, scenarios=["lossless-drop:leaf-r0:swp3"], workdir=tmp_path / "mock") as mock:
        r = CliRunner().invoke(
            app,
            [
                "push",
                str(ROOT / "inventories" / "roce-lab.yaml"),
                "--endpoints",
                str(mock.endpoints_file),
                "--yes",
                "--verify",
                "--device",
                "leaf-r0",
                "--device",
                "leaf-r2",
                "--run-dir",
                str(tmp_path / "runs"),
                "--format",
                "json",
            ],
        )
    doc = json.loads(r.stdout[r.stdout.index("{") :])
    states = {
        d["name"]: (d["state"], d.get("reason", ""))
        for d in doc["devices"]
        if d["name"] in ("leaf-r0", "leaf-r2")
    }
    assert states["leaf-r0"][0] == "rolled-back", states
    assert "lossless-queue-drops CRITICAL at leaf-r0:swp3" in states["leaf-r0"][1]
    assert states["leaf-r2"][0] == "applied", states


@pytest.fixture
def ib_mock(tmp_path, ib):
    with MockFabric(ib, workdir=tmp_path / "ib-mock") as mock:
        yield mock


@pytest.mark.parametrize(
    "lab,scenario,expected",
    [
        ("roce", "congestion:gpu04", {("cnp-rate", "gpu04"), ("ecn-congestion", "leaf-r0")}),
        ("roce", "lossless-drop:leaf-r2:Ethernet3/1", {("lossless-queue-drops", "leaf-r2")}),
        ("roce", "cabling-swap:leaf-r0:swp1,leaf-r0:swp2", {("eth-cabling", "leaf-r0")}),
        ("ib", "ib-congestion:ib-leaf-r1:1/31", {("ib-xmit-wait", "ib-leaf-r1")}),
        ("ib", "ib-symbol-errors:ib-spine1:1/1", {("ib-symbol-errors", "ib-spine1")}),
        ("ib", "cabling-swap:ib-leaf-r0:1/31,ib-leaf-r0:1/33", {("ib-cabling", "ib-leaf-r0")}),
    ],
)
def test_live_scenarios(request, lab, scenario, expected, live_checks):
    fabric = request.getfixturevalue(lab)
    mock = request.getfixturevalue(f"{lab}_mock")
    mock.inject(scenario)
    try:
        report = live_verify(fabric, mock, live_checks)
    finally:
        mock.clear_scenarios()
    got = {(f.check, f.device) for f in report.findings}
    assert expected <= got, [(f.check, f.device, f.message) for f in report.findings]
    assert not {"pfc-pause-storm", "pfc-storm-origin", "collect"} & {c for c, _ in got}


def test_live_ib_link_flap(ib, ib_mock, live_checks):
    ib_mock.inject("link-flap:ib-leaf-r0:1/2")  # down at +1 s for 2 s; LinkDowned counts the recovery
    try:
        report = live_verify(ib, ib_mock, live_checks, interval=3.5)
    finally:
        ib_mock.clear_scenarios()
    got = {(f.check, f.device, f.port) for f in report.findings}
    assert ("ib-link-downed", "ib-leaf-r0", "1/2") in got or (
        "link-state-speed",
        "ib-leaf-r0",
        "1/2",
    ) in got, got


def _single_sample(mock, state_dir, command: str = "verify") -> tuple[int, dict]:
    inventory = str(ROOT / "inventories" / "roce-lab.yaml")
    once = ["--samples", "1"] if command == "verify" else ["--once"]
    r = CliRunner().invoke(
        app,
        [command, inventory, "--endpoints", str(mock.endpoints_file), *once, "--state-dir", str(state_dir),
         "--format", "json"],
    )
    return r.exit_code, json.loads(r.stdout)


NEEDS_NO_RATE = ("eth-cabling", "headroom-near-full")
"""Shipped RoCE checks that decide from one sample (LLDP, a watermark gauge against the rendered headroom).
link-state-speed also reads the flap counter:
a port that is down is CRITICAL at once, but "up and not flapping" needs a rate."""


def test_first_single_sample_run_is_unknown_never_ok(roce_mock, tmp_path):
    """Issue 10 §4: `verify --samples 1` with an empty store said OK while a pause storm ran."""
    # healthy fabric: first run UNKNOWN "no baseline yet", the next one (rates from the store) OK
    code, doc = _single_sample(roce_mock, tmp_path / "healthy")
    assert code == 3 and doc["status"] == "UNKNOWN", doc
    assert doc["findings"] and all(
        f["severity"] == "unknown" and f["message"].startswith("no baseline yet") for f in doc["findings"]
    ), doc["findings"]
    states = {c["check"]: c["state"] for c in doc["checks"]}
    assert states["pfc-pause-storm"] == states["pfc-storm-origin"] == "unknown", states
    assert all(states[c] == "ok" for c in NEEDS_NO_RATE), states
    code, doc = _single_sample(roce_mock, tmp_path / "healthy")
    assert code == 0 and doc["status"] == "OK" and doc["findings"] == [], doc["findings"]

    # the case: a pause storm runs and the store is empty (verify --samples 1, and the
    # first round of watch)
    roce_mock.inject("pause-storm:gpu05")
    try:
        for command in ("watch", "verify"):
            code, doc = _single_sample(roce_mock, tmp_path / "storm", command)
            by_check = {c["check"]: c for c in doc["checks"]}
            for cid in ("pfc-pause-storm", "pfc-storm-origin"):
                assert by_check[cid]["state"] == "unknown", (command, by_check[cid])
                assert by_check[cid]["message"].startswith("no baseline yet"), (command, by_check[cid])
            # only a check that needs no rate may raise it above UNKNOWN: the watchdog's "queue still
            # stormed" state (the mock's watchdog is stormed for 0.4 s of every 0.6 s cycle) and the
            # headroom watermark of the ports that pause their peers (a gauge)
            loud = [f for f in doc["findings"] if f["severity"] in ("warning", "critical")]
            assert all((f["check"] == "pfc-watchdog-fired" and f["threshold"] == "queue still stormed")
                       or f["check"] == "headroom-near-full" for f in loud), (command, loud)
            # the watchdog is not stormed a third of the time: then the headroom warnings decide (exit 1)
            worst = 2 if any(f["severity"] == "critical" for f in loud) else 1 if loud else 3
            assert code == worst and doc["status"] != "OK", (command, doc)
        code, doc = _single_sample(roce_mock, tmp_path / "storm")  # now with a baseline
    finally:
        roce_mock.clear_scenarios()
    assert code == 2, doc
    origin = [f for f in doc["findings"] if f["check"] == "pfc-storm-origin"]
    assert [f["origin"] for f in origin] == ["gpu05:mlx5_0"], doc["findings"]
    assert not any(f["message"].startswith("no baseline yet") for f in doc["findings"]), doc["findings"]
