"""`fabriccfg import netbox` of an InfiniBand fabric with a mapping file, a tag filter and custom-field names,
plus the refusals: an old NetBox, a role that contradicts the platform."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import netbox_api
import pytest
import yaml
from netbox_api import Lab, Server, serve
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.inventory.load import load

TOKEN = "nbt_abc123.0123456789abcdef0123456789abcdef"
"""A NetBox 4.5 v2 token: pynetbox sends it as a Bearer token."""

MAPPING = """
platforms: {mlnx-os: mlnxos-ib}
roles: {ib-spine: spine, ib-leaf: leaf, hpc-node: gpu, ufm-host: sm, pdu: skip}
custom_fields: {guid: node_guid}
fabric: {name: ib-hall-a}
credentials: {ssh: {username: admin, password: env:FABRIC_SSH_PASSWORD}}
ib:
  opensm_flavour: mlnx
  routing_engines: [ftree]
  subnet_managers: [{device: ufm1, priority: 15}]
"""


def build(lab: Lab) -> None:
    tag = ("hall-a",)
    spine = lab.device(
        1,
        "ib-spine1",
        role="ib-spine",
        platform="mlnx-os",
        address="198.51.100.21/24",
        model="MQM8700-HS2F",
        custom_fields={"node_guid": "0x08c0eb0300f60001"},
        tags=tag,
    )
    leaf = lab.device(
        2,
        "ib-leaf1",
        role="ib-leaf",
        platform="mlnx-os",
        address="198.51.100.22/24",
        model="MQM8700-HS2F",
        custom_fields={"node_guid": "0x08c0eb0300f60002", "rail": 0},
        tags=tag,
    )
    ufm = lab.device(3, "ufm1", role="ufm-host", platform="ubuntu", address="198.51.100.31/24", tags=tag)
    node = lab.device(4, "node01", role="hpc-node", platform="ubuntu", address="198.51.100.111/24", tags=tag)
    lab.device(5, "pdu-a1", role="pdu", platform=None, tags=tag)
    lab.device(6, "node99", role="hpc-node", platform="ubuntu", address="198.51.100.199/24")  # not tagged

    sp = {n: lab.interface(spine, f"1/{n}", kind="infiniband-hdr") for n in range(1, 41)}
    lf = {n: lab.interface(leaf, f"1/{n}", kind="infiniband-hdr") for n in range(1, 41) if n != 9}
    split = [lab.interface(leaf, f"1/9/{k}", kind="infiniband-hdr", speed=100_000_000) for k in (1, 2)]
    ufm_hca = lab.interface(
        ufm,
        "ibp65s0",
        kind="infiniband-hdr",
        label="mlx5_0",
        custom_fields={"node_guid": "0x0c42a10300aa0001"},
    )
    hca0 = lab.interface(
        node,
        "ibp1s0",
        kind="infiniband-hdr",
        speed=100_000_000,
        label="mlx5_0",
        custom_fields={"rail": 0, "node_guid": "0x0c42a10300010000"},
    )
    lab.cable(lf[40], sp[1], length=25)
    lab.cable(ufm_hca, lf[39], length=5)
    lab.cable(hca0, split[0], length=3)


@pytest.fixture
def netbox() -> Iterator[Server]:
    lab = Lab()
    with serve(lab, TOKEN) as server:
        build(lab)
        yield server


def run(server: Server, tmp: Path, *extra: str) -> Any:
    mapping = tmp / "mapping.yaml"
    mapping.write_text(MAPPING)
    return CliRunner().invoke(
        app,
        [
            "import",
            "netbox",
            "--url",
            server.url,
            "--token",
            "file:" + str(tmp / "tok"),
            "--tag",
            "hall-a",
            "--mapping",
            str(mapping),
            "-o",
            str(tmp / "ib.yaml"),
            *extra,
        ],
    )


def test_ib_fabric_with_mapping_file_and_tag(netbox: Server, tmp_path: Path) -> None:
    (tmp_path / "tok").write_text(TOKEN + "\n")
    res = run(netbox, tmp_path)
    assert res.exit_code == 0, res.output
    assert TOKEN not in res.output
    result = load(tmp_path / "ib.yaml")
    assert result.ok, [f.format() for f in result.findings]
    doc = yaml.safe_load((tmp_path / "ib.yaml").read_text())
    assert doc["fabric"] == {"name": "ib-hall-a", "technology": "infiniband", "link_speed": "200G"}
    assert doc["credentials"] == {"ssh": {"username": "admin", "password": "env:FABRIC_SSH_PASSWORD"}}
    assert doc["ib"]["subnet_managers"] == [{"device": "ufm1", "priority": 15}]
    sw = {s["name"]: s for s in doc["switches"]}
    assert set(sw) == {"ib-spine1", "ib-leaf1"}  # pdu skipped, node99 not tagged
    assert sw["ib-leaf1"]["guid"] == "0x08c0eb0300f60002" and sw["ib-leaf1"]["rail"] == 0
    assert sw["ib-leaf1"]["ports"] == 40 and sw["ib-leaf1"]["breakouts"] == {"1/9": "2x100G"}
    assert sw["ib-spine1"]["platform"] == "mlnxos-ib" and sw["ib-spine1"]["ports"] == 40
    assert doc["management_hosts"] == [
        {
            "name": "ufm1",
            "platform": "opensm-host",
            "mgmt": "198.51.100.31",
            "hca": "mlx5_0",
            "port_guid": "0x0c42a10300aa0001",
            "description": "NetBox device 3",
        }
    ]
    assert doc["hosts"][0]["nics"] == [
        {"name": "mlx5_0", "netdev": "ibp1s0", "rail": 0, "speed": 100, "guid": "0x0c42a10300010000"}
    ]
    links = {(lk["a"], lk["b"]): lk["length_m"] for lk in doc["links"]}
    assert links == {
        ("ib-leaf1:1/40", "ib-spine1:1/1"): 25,
        ("ufm1:mlx5_0", "ib-leaf1:1/39"): 5,
        ("node01:mlx5_0", "ib-leaf1:1/9/1"): 3,
    }
    assert all("tag=hall-a" in r for r in netbox.requests if r.startswith("/api/dcim/devices/"))


def test_an_old_netbox_is_refused(netbox: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "tok").write_text(TOKEN)
    monkeypatch.setattr(netbox_api, "NETBOX_VERSION", "3.7.8")
    res = run(netbox, tmp_path)
    assert res.exit_code == 1
    assert "runs NetBox 3.7.8; fabriccfg reads NetBox 4.0 or later" in res.output
    assert not any(r.startswith("/api/dcim/") for r in netbox.requests)
    assert not (tmp_path / "ib.yaml").exists()


def test_a_role_that_contradicts_the_platform_is_reported(netbox: Server, tmp_path: Path) -> None:
    (tmp_path / "tok").write_text(TOKEN)
    res = run(netbox, tmp_path, "--role-map", "ib-leaf=gpu")
    assert res.exit_code == 1
    assert "ib-leaf1: role 'gpu' needs a gpu-host platform, but 'mlnxos-ib' is a switch" in res.output
    assert not (tmp_path / "ib.yaml").exists()


def test_a_bad_mapping_file_is_a_usage_error(netbox: Server, tmp_path: Path) -> None:
    (tmp_path / "tok").write_text(TOKEN)
    mapping = tmp_path / "bad.yaml"
    mapping.write_text("roles: {ib-leaf: leef}\n")
    res = CliRunner().invoke(
        app,
        [
            "import",
            "netbox",
            "--url",
            netbox.url,
            "--token",
            f"file:{tmp_path}/tok",
            "--mapping",
            str(mapping),
            "-o",
            str(tmp_path / "x.yaml"),
        ],
    )
    assert res.exit_code == 2
    assert "roles.ib-leaf" in res.output and "Traceback" not in res.output
    assert netbox.requests == []
