"""Host keys come from where every SSH tool looks (issue 16 §3): the inventory's file, else
``<inventory dir>/known_hosts``, else ``~/.ssh/known_hosts``; ``--known-hosts FILE`` overrides. Checked
on the real mock fabric's SSH servers: the right file connects, a missing one is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

import fabriccfg
from fabriccfg.cli import app
from fabriccfg.inventory.load import load_fabric
from fabriccfg.targets import default_known_hosts, from_inventory, load_endpoints, write_endpoints

INV = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"


def test_default_known_hosts_beside_the_inventory_else_home(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_known_hosts(tmp_path) == str(tmp_path / "home" / ".ssh" / "known_hosts")
    (tmp_path / "known_hosts").write_text("")
    assert default_known_hosts(tmp_path) == str(tmp_path / "known_hosts")


def test_inventory_endpoints_use_home_known_hosts(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("FABRIC_SSH_PASSWORD", "pw")
    fabric = load_fabric(INV)
    eps = from_inventory(fabric, tmp_path, access=("ssh",))
    assert {e.known_hosts for e in eps.values()} == {str(tmp_path / "home" / ".ssh" / "known_hosts")}


@pytest.fixture
def mock_lab(tmp_path):
    from fabriccfg.mock.fabric import MockFabric

    with MockFabric(load_fabric(INV), workdir=tmp_path / "mock", snmp=False, processes=1) as mock:
        yield mock


def test_known_hosts_flag_on_the_live_mock(tmp_path, mock_lab):
    eps = load_endpoints(mock_lab.endpoints_file)
    moved = tmp_path / "elsewhere" / "known_hosts"
    moved.parent.mkdir()
    shutil.copy(mock_lab.known_hosts, moved)
    bare = tmp_path / "bare.json"  # the endpoints without their known_hosts file: must come from the flag
    nowhere = str(tmp_path / "nowhere")
    write_endpoints(bare, [e.model_copy(update={"known_hosts": nowhere}) for e in eps.values()])
    args = ["diff", str(INV), "--endpoints", str(bare), "-d", "leaf-r0", "--detailed-exitcode",
            "--run-dir", str(tmp_path / "runs")]
    refused = CliRunner().invoke(app, args)
    assert refused.exit_code == 1 and "known_hosts" in refused.output, refused.output
    ok = CliRunner().invoke(app, [*args, "--known-hosts", str(moved)])
    assert ok.exit_code == 2 and "1 of 1 devices differ" in ok.output, ok.output  # factory config: changes
