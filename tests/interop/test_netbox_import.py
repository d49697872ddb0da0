"""`fabriccfg import netbox` against a local server answering in NetBox 4's documented shapes.

The lab below is written by hand; the expected inventory facts are spelled out here from it, and
the output is judged by the project's own validator (the format contract) and by those facts.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from netbox_api import Lab, Server, serve
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.inventory.load import load

TOKEN = "0123456789abcdef0123456789abcdef01234567"
MAPS = [
    "--platform-map",
    "cisco-nxos=nxos",
    "--platform-map",
    "cumulus-linux=cumulus-nvue",
    "--platform-map",
    "arista-eos=eos",
    "--platform-map",
    "ubuntu=connectx-host",
    "--role-map",
    "spine-switch=spine",
    "--role-map",
    "leaf-switch=leaf",
    "--role-map",
    "gpu-server=gpu",
    "--role-map",
    "oob-switch=skip",
]
G = 1_000_000
"""NetBox interface speed is in kb/s."""


def build(lab: Lab) -> None:
    """Two leaves (Cumulus with a 2x200G breakout, EOS), an NX-OS spine, two GPU nodes, an OOB switch,
    and a device at another site."""
    spine = lab.device(
        1,
        "spine1",
        role="spine-switch",
        platform="cisco-nxos",
        address="192.0.2.1/24",
        serial="SAL2041XYZ",
        asset_tag="DC1-0001",
        model="N9364D-GX2A",
    )
    l0 = lab.device(
        2,
        "leaf-r0",
        role="leaf-switch",
        platform="cumulus-linux",
        address="192.0.2.11/24",
        serial="MT2233X00001",
        model="SN5600",
        custom_fields={"rail": 0, "asic": "spectrum-4"},
    )
    l1 = lab.device(
        3,
        "leaf-r1",
        role="leaf-switch",
        platform="arista-eos",
        address="192.0.2.12/24",
        serial="JPE2233A001",
        model="7060X5-64",
        custom_fields={"rail": 1},
    )
    gpus = [
        lab.device(
            4 + n,
            f"gpu0{n + 1}",
            role="gpu-server",
            platform="ubuntu",
            address=f"192.0.2.{101 + n}/24",
            serial=f"DGX{n}",
        )
        for n in range(2)
    ]
    oob = lab.device(8, "oob-sw1", role="oob-switch", platform=None, address="192.0.2.250/24")
    lab.device(9, "other-leaf", role="leaf-switch", platform="mystery-os", site="dc2")

    sp = {n: lab.interface(spine, f"Ethernet1/{n}") for n in range(1, 9)}
    p0 = {n: lab.interface(l0, f"swp{n}") for n in (1, 2, 3, 4, 5, 6, 8)}
    p0["7s0"] = lab.interface(l0, "swp7s0", speed=200 * G)
    p0["7s1"] = lab.interface(l0, "swp7s1", speed=200 * G)
    p1 = {n: lab.interface(l1, f"Ethernet{n}/1") for n in range(1, 9)}
    oob_ports = [lab.interface(oob, f"ge-0/0/{n}", kind="1000base-t") for n in range(4)]
    for n, gpu in enumerate(gpus):
        nic0 = lab.interface(
            gpu,
            "ens1f0np0",
            label="mlx5_0",
            speed=(400 if n == 0 else 200) * G,
            custom_fields={"rail": 0, "ib_guid": None},
        )
        nic1 = lab.interface(gpu, "ens2f0np0", label="mlx5_1", speed=400 * G, custom_fields={"rail": 1})
        eno = lab.interface(gpu, "eno1", kind="1000base-t")
        lab.cable(nic0, p0[1] if n == 0 else p0["7s0"], length=3)
        lab.cable(p1[1 + n], nic1, length=300, unit="cm")
        lab.cable(eno, oob_ports[n], length=2)
    lab.cable(p0[8], sp[1], length=2000, unit="cm")
    lab.cable(sp[2], p1[8], length=98.43, unit="ft")
    lab.cable(p0[6], sp[3], length=20, status="decommissioning")


@pytest.fixture
def netbox() -> Iterator[Server]:
    lab = Lab()
    with serve(lab, TOKEN) as server:
        build(lab)
        yield server


def run(server: Server, out: Path, *extra: str, token_env: str = TOKEN) -> Any:
    return CliRunner().invoke(
        app,
        ["import", "netbox", "--url", server.url, "--token", "env:NETBOX_TOKEN", "-o", str(out), *extra],
        env={"NETBOX_TOKEN": token_env},
    )


def test_import_builds_an_inventory_that_validates(netbox: Server, tmp_path: Path) -> None:
    out = tmp_path / "inventory.yaml"
    res = run(netbox, out, "--site", "dc1", "--name", "dc1-roce", *MAPS)
    assert res.exit_code == 0, res.output
    assert TOKEN not in res.output
    result = load(out)
    assert result.ok, [f.format() for f in result.findings]
    validate = CliRunner().invoke(app, ["validate", str(out)])
    assert validate.exit_code == 0, validate.output

    doc = yaml.safe_load(out.read_text())
    assert doc["fabric"] == {"name": "dc1-roce", "technology": "roce", "link_speed": "400G"}
    sw = {s["name"]: s for s in doc["switches"]}
    assert set(sw) == {"spine1", "leaf-r0", "leaf-r1"}  # oob-sw1 skipped, other-leaf at dc2
    assert (sw["spine1"]["platform"], sw["spine1"]["role"], sw["spine1"]["mgmt"]) == (
        "nxos",
        "spine",
        "192.0.2.1",
    )
    assert (sw["leaf-r0"]["platform"], sw["leaf-r0"]["rail"], sw["leaf-r0"]["asic"]) == (
        "cumulus-nvue",
        0,
        "spectrum-4",
    )
    assert sw["leaf-r1"]["platform"] == "eos" and sw["leaf-r1"]["rail"] == 1
    assert sw["spine1"]["ports"] == 8 and sw["leaf-r1"]["ports"] == 8 and sw["leaf-r0"]["ports"] == 8
    assert sw["leaf-r0"]["breakouts"] == {"swp7": "2x200G"}
    assert (
        "serial SAL2041XYZ" in sw["spine1"]["description"]
        and "asset tag DC1-0001" in sw["spine1"]["description"]
    )
    assert sw["spine1"]["model"] == "N9364D-GX2A"

    hosts = {h["name"]: h for h in doc["hosts"]}
    assert set(hosts) == {"gpu01", "gpu02"}
    assert hosts["gpu01"]["mgmt"] == "192.0.2.101"
    assert hosts["gpu02"]["nics"] == [
        {"name": "mlx5_0", "netdev": "ens1f0np0", "rail": 0, "speed": 200},
        {"name": "mlx5_1", "netdev": "ens2f0np0", "rail": 1, "speed": 400},
    ]
    links = {(lk["a"], lk["b"]): lk.get("length_m") for lk in doc["links"]}
    assert links == {
        ("gpu01:mlx5_0", "leaf-r0:swp1"): 3,
        ("leaf-r1:Ethernet1/1", "gpu01:mlx5_1"): 3,
        ("gpu02:mlx5_0", "leaf-r0:swp7s0"): 3,
        ("leaf-r1:Ethernet2/1", "gpu02:mlx5_1"): 3,
        ("leaf-r0:swp8", "spine1:Ethernet1/1"): 20,
        ("spine1:Ethernet1/2", "leaf-r1:Ethernet8/1"): 30,  # 98.43 ft
    }  # decommissioning and OOB cables left out
    assert "2 devices skipped by role" not in res.output  # only oob-sw1 is at dc1
    assert "1 devices skipped by role" in res.output and "2 cables to devices outside" in res.output

    # every list was read through several pages (limit/offset), as NetBox paginates
    for endpoint in ("devices", "interfaces", "cables"):
        assert any(r.startswith(f"/api/dcim/{endpoint}/") and "offset=" in r for r in netbox.requests), (
            endpoint
        )
    assert "/api/status/" in netbox.requests


def test_unmapped_platforms_and_roles_are_listed_and_nothing_is_written(
    netbox: Server, tmp_path: Path
) -> None:
    out = tmp_path / "inventory.yaml"
    res = run(netbox, out, "--platform-map", "cisco-nxos=nxos", "--role-map", "oob-switch=skip")
    assert res.exit_code == 1
    for slug in ("cumulus-linux", "arista-eos", "ubuntu", "mystery-os"):
        assert f"unmapped NetBox platform '{slug}'" in res.output
    for slug in ("spine-switch", "leaf-switch", "gpu-server"):
        assert f"unmapped NetBox role '{slug}'" in res.output
    assert "unmapped NetBox platform 'cisco-nxos'" not in res.output  # mapped on the command line
    assert "nothing written" in res.output
    assert not out.exists()


def test_a_missing_rail_custom_field_is_reported(netbox: Server, tmp_path: Path) -> None:
    lab_iface = next(i for i in netbox.lab.interfaces if i["name"] == "ens2f0np0")
    lab_iface["custom_fields"] = {}
    out = tmp_path / "inventory.yaml"
    res = run(netbox, out, "--site", "dc1", *MAPS)
    assert res.exit_code == 1
    assert "gpu01: interface 'ens2f0np0' has no 'rail' custom field" in res.output
    assert not out.exists()


def test_a_wrong_token_is_an_http_error_and_never_printed(netbox: Server, tmp_path: Path) -> None:
    wrong = "ffffffffffffffffffffffffffffffffffffffff"
    res = run(netbox, tmp_path / "inv.yaml", *MAPS, token_env=wrong)
    assert res.exit_code == 1
    assert "HTTP 403" in res.output and "check the token" in res.output
    assert wrong not in res.output


def test_the_token_must_be_a_reference(netbox: Server, tmp_path: Path) -> None:
    res = CliRunner().invoke(
        app, ["import", "netbox", "--url", netbox.url, "--token", TOKEN, "-o", str(tmp_path / "inv.yaml")]
    )
    assert res.exit_code == 2
    assert "secret reference" in res.output and TOKEN not in res.output


def test_an_unreachable_netbox_is_one_line(tmp_path: Path) -> None:
    with serve(Lab(), TOKEN) as server:
        url = server.url
    res = CliRunner().invoke(
        app,
        ["import", "netbox", "--url", url, "--token", "env:NETBOX_TOKEN", "-o", str(tmp_path / "inv.yaml")],
        env={"NETBOX_TOKEN": TOKEN},
    )
    assert res.exit_code == 1
    assert "cannot reach NetBox" in res.output and "Traceback" not in res.output


def test_data_the_validator_refuses_is_reported_with_its_position_and_nothing_is_written(
    netbox: Server, tmp_path: Path
) -> None:
    gpu = next(d for d in netbox.lab.devices if d["name"] == "gpu02")
    gpu["name"] = "gpu 02"  # NetBox allows spaces in names; the inventory does not
    out = tmp_path / "inventory.yaml"
    res = run(netbox, out, "--site", "dc1", *MAPS)
    assert res.exit_code == 1
    assert f"{out}:" in res.output and "error[invalid-name]" in res.output and "'gpu 02'" in res.output
    assert "does not validate; nothing written" in res.output
    assert not out.exists() and list(tmp_path.iterdir()) == []
