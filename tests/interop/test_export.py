"""`fabriccfg export nornir|ansible`: the files are read back by the real tools.

Nornir's SimpleInventory parses the Nornir export; each host's platform must be a device type that
netmiko's dispatcher knows (netmiko's own table is the judge). ``ansible-inventory --list`` (from
ansible-core, a test extra) parses the Ansible export; expected ``ansible_network_os`` values are
the collection names cited in fabriccfg/data/interop/ansible.yaml, spelled out here by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from netmiko.ssh_dispatcher import CLASS_MAPPER
from nornir.core.inventory import Inventory
from nornir.plugins.inventory.simple import SimpleInventory
from typer.testing import CliRunner

from fabriccfg.cli import app

REPO = Path(__file__).resolve().parents[2]
ROCE = REPO / "inventories" / "roce-lab.yaml"
IB = REPO / "inventories" / "ib-lab-mqm8790.yaml"
PASSWORD = "s3cret-Pa55word-for-the-test"
ANSIBLE_INVENTORY = Path(sys.executable).with_name("ansible-inventory")


def export(kind: str, inventory: Path, out: Path) -> None:
    res = CliRunner().invoke(
        app, ["export", kind, str(inventory), "-o", str(out)], env={"FABRIC_SSH_PASSWORD": PASSWORD}
    )
    assert res.exit_code == 0, res.output
    for f in out.iterdir():
        assert PASSWORD not in f.read_text(), f"{f.name} holds the secret"


def nornir_inventory(out: Path) -> Inventory:
    return SimpleInventory(
        host_file=str(out / "hosts.yaml"),
        group_file=str(out / "groups.yaml"),
        defaults_file=str(out / "defaults.yaml"),
    ).load()


def test_nornir_simpleinventory_loads_the_roce_export(tmp_path: Path) -> None:
    export("nornir", ROCE, tmp_path)
    inv = nornir_inventory(tmp_path)
    expected = {  # roce-lab.yaml: name -> (address, netmiko device type, groups)
        "spine1": ("192.0.2.1", "cumulus_linux", {"role_spine"}),
        "spine2": ("192.0.2.2", "linux", {"role_spine"}),
        "leaf-r0": ("192.0.2.11", "cumulus_linux", {"role_leaf", "rail_0"}),
        "leaf-r1": ("192.0.2.12", "linux", {"role_leaf", "rail_1"}),
        "leaf-r2": ("192.0.2.13", "arista_eos", {"role_leaf", "rail_2"}),
        "leaf-r3": ("192.0.2.14", "cisco_nxos", {"role_leaf", "rail_3"}),
        **{
            f"gpu0{n}": (f"192.0.2.10{n}", "linux", {"role_gpu", "rail_0", "rail_1", "rail_2", "rail_3"})
            for n in range(1, 9)
        },
    }
    got = {name: (h.hostname, h.platform, {g.name for g in h.groups}) for name, h in inv.hosts.items()}
    assert got == expected
    for h in inv.hosts.values():
        assert h.platform in CLASS_MAPPER, f"{h.name}: {h.platform} is not a netmiko device type"
    assert set(inv.groups) == {"role_spine", "role_leaf", "role_gpu", "rail_0", "rail_1", "rail_2", "rail_3"}
    assert inv.groups["rail_2"].data == {"rail": 2}
    assert [h for h in inv.hosts if inv.hosts[h].has_parent_group("rail_2")] == [
        "leaf-r2",
        *[f"gpu0{n}" for n in range(1, 9)],
    ]
    assert inv.defaults.username == "admin" and inv.defaults.password is None
    assert inv.defaults.data["password_ref"] == "env:FABRIC_SSH_PASSWORD"
    assert inv.hosts["leaf-r2"]["fabriccfg_platform"] == "eos"  # data, inherited lookup


def test_nornir_export_leaves_out_switches_without_cli(tmp_path: Path) -> None:
    export("nornir", IB, tmp_path)
    inv = nornir_inventory(tmp_path)
    assert not any(name.startswith("ib-") for name in inv.hosts)  # MQM8790: no management CPU
    assert {h.platform for h in inv.hosts.values()} == {"linux"}
    assert {"role_sm", "role_gpu"} <= set(inv.groups)
    assert "Left out (no CLI or no management address): ib-spine1" in (tmp_path / "hosts.yaml").read_text()


@pytest.mark.skipif(not ANSIBLE_INVENTORY.exists(), reason="ansible-core (test extra) is not installed")
def test_ansible_inventory_lists_the_roce_export(tmp_path: Path) -> None:
    export("ansible", ROCE, tmp_path)
    out = subprocess.run(
        [str(ANSIBLE_INVENTORY), "--list", "-i", str(tmp_path / "inventory.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    )
    assert "WARNING" not in out.stderr and "ERROR" not in out.stderr, out.stderr
    listing = json.loads(out.stdout)
    hv = listing["_meta"]["hostvars"]
    assert hv["leaf-r2"]["ansible_network_os"] == "arista.eos.eos"
    assert hv["leaf-r3"]["ansible_network_os"] == "cisco.nxos.nxos"
    assert hv["spine1"]["ansible_network_os"] == "nvidia.nvue.httpapi"
    assert hv["spine1"]["ansible_connection"] == "ansible.netcommon.httpapi"
    assert "ansible_network_os" not in hv["leaf-r1"]  # SONiC: see the comment in the file
    assert "ansible_network_os" not in hv["gpu01"]
    assert hv["leaf-r2"]["ansible_host"] == "192.0.2.13"
    assert hv["gpu01"]["ansible_password"] == "{{ lookup('ansible.builtin.env', 'FABRIC_SSH_PASSWORD') }}"
    assert set(listing["role_leaf"]["hosts"]) == {"leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3"}
    assert set(listing["rail_3"]["hosts"]) == {"leaf-r3", *[f"gpu0{n}" for n in range(1, 9)]}
    text = (tmp_path / "inventory.yaml").read_text()
    assert "# platform_sonic: no ansible_network_os: dellemc.enterprise_sonic" in text


@pytest.mark.skipif(not ANSIBLE_INVENTORY.exists(), reason="ansible-core (test extra) is not installed")
def test_ansible_export_of_an_ib_fabric(tmp_path: Path) -> None:
    export("ansible", REPO / "inventories" / "ib-lab-mqm8700.yaml", tmp_path)
    out = subprocess.run(
        [str(ANSIBLE_INVENTORY), "--list", "-i", str(tmp_path / "inventory.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        cwd=tmp_path,
    )
    listing = json.loads(out.stdout)
    hv = listing["_meta"]["hostvars"]
    assert hv["ib8700-spine1"]["ansible_host"] == "198.51.100.21"
    assert "ansible_network_os" not in hv["ib8700-spine1"]  # mellanox.onyx is Ethernet Onyx
    assert (
        "# platform_mlnxos_ib: no ansible_network_os: mellanox.onyx"
        in (tmp_path / "inventory.yaml").read_text()
    )


def test_export_refuses_an_invalid_inventory(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("fabric: {name: x, technology: roce, link_speed: 400G}\nswitches:\n  - {name: a}\n")
    res = CliRunner().invoke(app, ["export", "nornir", str(bad), "-o", str(tmp_path / "out")])
    assert res.exit_code == 1
    assert "bad.yaml:3:" in res.output and "nothing exported" in res.output
    assert not (tmp_path / "out").exists()


def test_version_flag() -> None:
    res = CliRunner().invoke(app, ["--version"])
    assert res.exit_code == 0
    assert res.output.strip() == f"fabriccfg {version('fabriccfg')}"
