"""Mock devices seeded with running configs (``mock up --baseline``), ``fabriccfg snapshot``, and the
traffic model following the running config's RoCE class."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fabriccfg
from fabriccfg import registry
from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock.baseline import BaselineError, read_folder
from fabriccfg.mock.fabric import MockError, MockFabric, managed_devices, profile_for
from fabriccfg.mock.ssh import CliProfile, DeviceState
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.plan.run import PlanOptions, run_plan
from fabriccfg.render.engine import render_fabric

LAB = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    return load_fabric(LAB)


@pytest.fixture(scope="module")
def rendered(fabric: Fabric) -> dict[str, dict[str, str]]:
    return {r.name: dict(r.files) for r in render_fabric(fabric)}


def _seeded(fabric: Fabric, name: str, files: dict[str, str]) -> tuple[CliProfile, DeviceState]:
    dev = fabric.devices[name]
    profile = profile_for(dev.platform)
    assert profile is not None
    state = DeviceState(name=name, platform=dev.platform, device=dev, fabric=fabric)
    profile.init_state(state)
    profile.load_baseline(state, files)
    return profile, state


def test_every_platform_loads_its_rendered_config_and_reports_the_intended_roce_class(
        fabric: Fabric, rendered: dict[str, dict[str, str]]) -> None:
    """Oracle: the inventory's RoCE intent (DSCP 26 on priority 3, PFC on it) for every switch platform
    whose profile can tell; hosts just hold the files at their install paths."""
    told = set()
    roce = fabric.roce
    assert roce is not None
    for name in managed_devices(fabric):
        profile, state = _seeded(fabric, name, rendered[name])
        found = profile.roce_class(state, roce.roce_dscp)
        if found is not None:
            assert found == (roce.roce_priority, True), name
            told.add(state.platform)
        if fabric.devices[name].kind == "gpu-host":
            paths = registry.render(state.platform).install_paths
            assert all(state.files[paths[f]] == text for f, text in rendered[name].items())
    assert told == {"eos", "sonic", "cumulus-nvue", "nxos"}


def test_a_line_the_platform_refuses_names_file_and_line(fabric: Fabric,
                                                         rendered: dict[str, dict[str, str]]) -> None:
    files = {"config.txt": rendered["leaf-r2"]["config.txt"].replace("!\n", "!\nbogus-command 1\n", 1)}
    line = files["config.txt"].splitlines().index("bogus-command 1") + 1
    with pytest.raises(BaselineError, match=rf"^config.txt:{line}: the mock CLI refuses 'bogus-command 1'$"):
        _seeded(fabric, "leaf-r2", files)
    with pytest.raises(BaselineError, match=r"^config_db.json:1:2: not JSON: Expecting property name"):
        _seeded(fabric, "leaf-r1", {"config_db.json": "{oops"})


def test_baseline_folder_checks(tmp_path: Path, fabric: Fabric) -> None:
    (tmp_path / "leaf-r9").mkdir()
    with pytest.raises(BaselineError, match="no mock device named 'leaf-r9'"):
        read_folder(tmp_path, managed_devices(fabric))
    with pytest.raises(MockError, match="baseline for 'gpu99'"):
        MockFabric(fabric, workdir=tmp_path, baselines={"gpu99": {}})
    proc = subprocess.run([sys.executable, "-m", "fabriccfg.cli", "mock", "up", str(LAB), "--baseline",
                           str(tmp_path / "missing"), "--endpoints", str(tmp_path / "ep.json")],
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2
    assert "baseline is not a directory" in proc.stderr and "Traceback" not in proc.stderr


def test_snapshot_of_a_seeded_mock_is_a_baseline_that_plans_no_change(
        tmp_path: Path, fabric: Fabric, rendered: dict[str, dict[str, str]]) -> None:
    """rendered -> mock --baseline -> snapshot (the transactions' fetch) -> plan --baseline: no change."""
    snap = tmp_path / "snap"
    with MockFabric(fabric, workdir=tmp_path / "mock", baselines=rendered, snmp=False) as mock:
        proc = subprocess.run([sys.executable, "-m", "fabriccfg.cli", "snapshot", str(LAB), "-o", str(snap),
                               "--endpoints", str(mock.endpoints_file)],
                              capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in snap.iterdir()) == sorted(rendered)
    eos = (snap / "leaf-r2" / "config.txt").read_text(encoding="utf-8")
    assert eos.startswith("! Command: show running-config")  # what the switch said, not the render
    assert (snap / "leaf-r1" / "config_db.json").read_text(encoding="utf-8").lstrip().startswith("{")
    plan = run_plan(PlanOptions(inventory=LAB, baseline=snap, interval=0.5), workdir=tmp_path)
    assert plan.exit_code == 0, [(d.name, d.added, d.error) for d in plan.devices if d.state != "unchanged"]
    assert plan.baseline == f"running configs in {snap}"


def test_traffic_follows_the_roce_class_and_stays_monotonic(fabric: Fabric) -> None:
    t0 = 1_000_000.0
    m = TrafficModel(fabric, t0=t0)
    port = m.ports("leaf-r2")[0]

    def c(t: float) -> dict[str, int]:
        return m.port_counters("leaf-r2", port, t)

    a = c(t0 + 5)
    m.set_roce_class("leaf-r2", 0, False, t=t0 + 10)  # RoCE DSCP into the lossy priority 0
    b, d = c(t0 + 20), c(t0 + 30)
    assert b["tc_tx_pkts.3"] >= a["tc_tx_pkts.3"]
    assert d["tc_tx_pkts.3"] == b["tc_tx_pkts.3"]  # the lossless queue carries nothing any more
    assert d["tc_tx_pkts.0"] - b["tc_tx_pkts.0"] > 5 * (b["tc_tx_pkts.3"] - a["tc_tx_pkts.3"]) / 3
    assert d["tc_nobuffer_discard.0"] > b["tc_nobuffer_discard.0"] > 0
    assert d["if_out_discards"] > b["if_out_discards"]
    m.set_roce_class("leaf-r2", 3, True, t=t0 + 40)  # fixed again
    e, f = c(t0 + 50), c(t0 + 60)
    assert f["tc_tx_pkts.3"] > e["tc_tx_pkts.3"] >= d["tc_tx_pkts.3"]
    assert f["tc_nobuffer_discard.0"] == e["tc_nobuffer_discard.0"]
    for k in a:
        assert a[k] <= b[k] <= d[k] <= e[k] <= f[k], k
    m.set_roce_class("leaf-r2", 3, False, t=t0 + 70)  # PFC off on the RoCE priority: drops there
    g, h = c(t0 + 80), c(t0 + 90)
    assert h["tc_nobuffer_discard.3"] > g["tc_nobuffer_discard.3"]
    assert m.port_counters("leaf-r3", m.ports("leaf-r3")[0], t0 + 90)["tc_nobuffer_discard.3"] == 0


def test_mock_up_baseline_then_live_diff_finds_nothing(tmp_path: Path,
                                                       rendered: dict[str, dict[str, str]]) -> None:
    """`mock up --baseline` (detached) from rendered configs: the live `diff` of the same inventory is empty,
    on every platform, through each platform's own fetch."""
    base = tmp_path / "base"
    for device, files in rendered.items():
        (base / device).mkdir(parents=True)
        for name, text in files.items():
            (base / device / name).write_text(text, encoding="utf-8")
    ep = tmp_path / "mock" / "ep.json"
    cli = [sys.executable, "-m", "fabriccfg.cli"]
    up = subprocess.run([*cli, "mock", "up", str(LAB), "--baseline", str(base), "--endpoints", str(ep),
                         "--detach"], capture_output=True, text=True, timeout=120, check=False)
    try:
        assert up.returncode == 0, up.stderr
        cmd = [*cli, "diff", str(LAB), "--endpoints", str(ep), "--run-dir", str(tmp_path / "runs")]
        diff = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        assert diff.returncode == 0, diff.stdout + diff.stderr
    finally:
        down = subprocess.run([*cli, "mock", "down", "--endpoints", str(ep)], capture_output=True, text=True,
                              timeout=60, check=False)
    assert down.returncode == 0, down.stderr
