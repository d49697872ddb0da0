"""MockFabric: endpoints and known_hosts, start time, worker processes, scenario injection, the CLI."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest
from mockssh_helpers import IB_8700, ROCE_LAB, mock_fixture, start_mock, wait_for

from fabriccfg.connect import connect
from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.fabric import MockError, MockFabric
from fabriccfg.targets import Endpoint, load_endpoints

mock = mock_fixture(ROCE_LAB)


def test_endpoints_file_and_known_hosts(mock):
    eps = load_endpoints(mock.endpoints_file)
    fabric = mock.fabric
    assert set(eps) == set(fabric.devices)  # every roce-lab device has a CLI
    kh = mock.known_hosts.read_text().splitlines()
    assert len(kh) == len(eps)
    for ep in eps.values():
        assert ep.host == "127.0.0.1" and ep.ssh_port and ep.username == "admin" and ep.password
        assert f"[127.0.0.1]:{ep.ssh_port} ssh-ed25519 " in "\n".join(kh)
        assert ep.known_hosts == str(mock.known_hosts.resolve())
        if ep.platform == "connectx-host":
            assert ep.snmp_port is None and ep.snmp is None and ep.device_type == "linux"
        else:
            assert ep.snmp_port and ep.snmp is not None and ep.snmp.version == "3"
            assert ep.snmp.user == "fabric" and ep.snmp.auth_protocol == "sha"
            assert ep.snmp.priv_protocol == "aes"
    assert len({ep.password for ep in eps.values()}) == len(eps)  # random per device and run
    assert oct(mock.endpoints_file.stat().st_mode & 0o777) == "0o600"
    assert {eps["leaf-r2"].device_type, eps["leaf-r3"].device_type, eps["spine1"].device_type,
            eps["spine2"].device_type} == {"arista_eos", "cisco_nxos", "cumulus_linux", "linux"}


def test_client_key_auth(mock):
    ep = mock.endpoints["gpu05"]
    by_key = Endpoint(**{**ep.model_dump(), "password": None, "key_file": str(mock.client_key_file)})
    conn = connect(by_key)
    try:
        assert conn.send_command("hostname").strip() == "gpu05"
    finally:
        conn.disconnect()


def test_inject_and_clear_scenario(mock):
    mock.inject("pause-storm:gpu01")
    assert any(s.startswith("pause-storm:gpu01") for s in mock.model.scenarios())
    mock.clear_scenarios()
    with pytest.raises(MockError):
        mock.inject("pause-storm:no-such-host")


def test_bad_fault_specs():
    fabric = load_fabric(ROCE_LAB)
    for spec in ("nosuch:auth-fail", "gpu01:explode", "gpu01:slow", "gpu01:reject=(", "gpu01"):
        with pytest.raises(MockError):
            MockFabric(fabric, faults=[spec])


def test_demo_sized_fabric_starts_fast(tmp_path):
    inv = tmp_path / "demo.yaml"
    inv.write_text(dump_yaml(generate(128, "roce")))
    fabric = load_fabric(inv)
    t = time.perf_counter()
    with MockFabric(fabric, workdir=tmp_path) as m:
        elapsed = time.perf_counter() - t
        assert 25 <= len(m.endpoints) <= 30
        assert elapsed <= 5.0, f"{len(m.endpoints)} devices took {elapsed:.2f} s"
        ep = next(e for e in m.endpoints.values() if e.device_type == "cumulus_linux")
        t = time.perf_counter()
        conn = connect(ep)
        connect_s = time.perf_counter() - t
        conn.disconnect()
        assert connect_s < 2.0
        cpu0 = os.times()
        assert wait_for(lambda: time.perf_counter() - t > 1.0, 2)  # an idle second
        cpu1 = os.times()
        assert (cpu1.user + cpu1.system) - (cpu0.user + cpu0.system) < 0.3


def test_worker_processes(tmp_path):
    mock = start_mock(tmp_path, IB_8700, processes=2)
    try:
        assert mock.processes == 2 and len(mock._procs) == 2
        for name in ("ib8700-leaf1", "ib8700-leaf2", "node01", "node02"):
            conn = connect(mock.endpoints[name])
            try:
                assert name in conn.find_prompt()
            finally:
                if "ib8700" in name:
                    conn.enable()
                conn.disconnect()
        mock.inject("ib-congestion:ib8700-leaf1:1/1")  # both workers acknowledge
        with pytest.raises(MockError):
            mock.device("node01")  # state lives in the workers
    finally:
        mock.stop()
    assert all(p.poll() is not None for p, _ in mock._procs) or not mock._procs


def _cli(*args: str) -> Any:
    """Run ``fabriccfg mock ...`` in this process (the detached server still is its own process)."""
    from typer.testing import CliRunner

    from fabriccfg.cli import app

    return CliRunner().invoke(app, ["mock", *args])


def _gone(pid: int) -> bool:
    try:  # the server is our child here (CliRunner runs in-process): reap it
        if os.waitpid(pid, os.WNOHANG)[0] == pid:
            return True
    except ChildProcessError:
        pass
    return not Path(f"/proc/{pid}").exists()


def test_cli_up_detach_inject_down(tmp_path):
    eps_file = tmp_path / "eps" / "m.json"
    up = _cli("up", str(ROCE_LAB), "--detach", "--endpoints", str(eps_file), "--fault", "gpu02:unreachable")
    assert up.exit_code == 0, up.output
    assert "leaf-r2" in up.output and "unreachable" in up.output
    pid = int((tmp_path / "eps" / "m.pid").read_text())
    try:
        eps = load_endpoints(eps_file)
        conn = connect(eps["leaf-r1"])
        assert conn.send_command("hostname").strip() == "leaf-r1"
        conn.disconnect()
        inj = _cli("inject", "--endpoints", str(eps_file), "congestion:gpu03")
        assert inj.exit_code == 0, inj.output
        bad = _cli("inject", "--endpoints", str(eps_file), "bogus")
        assert bad.exit_code != 0 and "bogus" in bad.output
    finally:
        down = _cli("down", "--endpoints", str(eps_file))
    assert down.exit_code == 0, down.output
    assert wait_for(lambda: _gone(pid), 10)
    assert not eps_file.exists() and not (tmp_path / "eps" / "m.known_hosts").exists()
    again = _cli("down", "--endpoints", str(eps_file))
    assert again.exit_code == 1 and "no detached mock" in again.output


def test_cli_usage_errors(tmp_path):
    r = _cli("up", str(tmp_path / "missing.yaml"))
    assert r.exit_code == 2 and "no such file" in r.output
    r = _cli("up", str(ROCE_LAB), "--fault", "leaf-r2:explode")
    assert (r.exit_code == 2 and "unknown kind" in r.output and r.exception is None) or \
        isinstance(r.exception, SystemExit)
    r = _cli("inject", "--endpoints", str(tmp_path / "none.json"), "healthy")
    assert r.exit_code == 2 and "no running mock" in r.output
