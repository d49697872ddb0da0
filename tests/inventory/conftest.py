"""Fixtures for inventory tests: two small valid fabrics (RoCE, IB) as data, and loaders."""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabriccfg.inventory.findings import Finding
from fabriccfg.inventory.load import LoadResult, loads

REPO = Path(__file__).resolve().parents[2]
CLI = [str(Path(sys.executable).with_name("fabriccfg"))]

ROCE: dict[str, Any] = {
    "fabric": {"name": "t-roce", "technology": "roce", "link_speed": "400G"},
    "credentials": {"ssh": {"username": "admin", "password": "env:FABRIC_SSH_PASSWORD"}},
    "roce": {"ecn": {"kmin_bytes": 150000, "kmax_bytes": 1500000, "pmax_percent": 100}},
    "profiles": {"leaf": {"role": "leaf", "ports": 32, "asic": "spectrum-4", "model": "SN5600"}},
    "switches": [
        {"name": "leaf1", "profile": "leaf", "platform": "cumulus-nvue", "mgmt": "192.0.2.11", "rail": 0},
        {"name": "leaf2", "profile": "leaf", "platform": "sonic", "mgmt": "192.0.2.12", "rail": 1},
        {
            "name": "spine1",
            "platform": "eos",
            "role": "spine",
            "ports": 32,
            "asic": "tomahawk-4",
            "mgmt": "192.0.2.1",
        },
    ],
    "hosts": [
        {
            "name": f"gpu{n}",
            "mgmt": f"192.0.2.10{n}",
            "nics": [
                {"name": "mlx5_0", "netdev": "ens1f0np0", "rail": 0},
                {"name": "mlx5_1", "netdev": "ens2f0np0", "rail": 1},
            ],
        }
        for n in (1, 2)
    ],
    "links": [
        {"a": "gpu1:mlx5_0", "b": "leaf1:swp1", "length_m": 3},
        {"a": "gpu1:mlx5_1", "b": "leaf2:Ethernet0", "length_m": 3},
        {"a": "gpu2:mlx5_0", "b": "leaf1:swp2", "length_m": 3},
        {"a": "gpu2:mlx5_1", "b": "leaf2:Ethernet8", "length_m": 3},
        {"a": "leaf1:swp31", "b": "spine1:Ethernet1/1", "length_m": 20},
        {"a": "leaf1:swp32", "b": "spine1:Ethernet2/1", "length_m": 20},
        {"a": "leaf2:Ethernet240", "b": "spine1:Ethernet3/1", "length_m": 20},
        {"a": "leaf2:Ethernet248", "b": "spine1:Ethernet4/1", "length_m": 20},
    ],
}

IB: dict[str, Any] = {
    "fabric": {"name": "t-ib", "technology": "infiniband", "link_speed": "HDR"},
    "credentials": {"ssh": {"username": "root", "key_file": "file:~/.ssh/id_ed25519"}},
    "profiles": {"q": {"platform": "unmanaged-ib", "model": "MQM8790-HS2F", "asic": "quantum", "ports": 40}},
    "ib": {
        "opensm_flavour": "mlnx",
        "routing_engines": ["ftree"],
        "subnet_managers": [{"device": "sm1", "priority": 15}, {"device": "sm2", "priority": 14}],
        "sharp": {"enabled": True, "am_host": "sm1"},
        "partitions": [
            {
                "name": "compute",
                "pkey": "0x0101",
                "ipoib": True,
                "members": [{"device": "ALL_CAS", "membership": "full"}],
            }
        ],
    },
    "management_hosts": [
        {"name": "sm1", "mgmt": "198.51.100.2", "port_guid": "0x1070fd0300aa0001"},
        {"name": "sm2", "mgmt": "198.51.100.3", "port_guid": "0x1070fd0300aa0002"},
    ],
    "switches": [
        {"name": "leaf1", "profile": "q", "role": "leaf", "rail": 0, "guid": "0xb8599f0300fc0001"},
        {"name": "leaf2", "profile": "q", "role": "leaf", "rail": 1, "guid": "0xb8599f0300fc0002"},
        {"name": "spine1", "profile": "q", "role": "spine", "guid": "0xb8599f0300fc0003"},
    ],
    "hosts": [
        {
            "name": f"gpu{n}",
            "mgmt": f"198.51.100.10{n}",
            "nics": [
                {"name": "mlx5_0", "netdev": "ib0", "rail": 0, "guid": f"0x1070fd03000{n}0000"},
                {"name": "mlx5_1", "netdev": "ib1", "rail": 1, "guid": f"0x1070fd03000{n}0100"},
            ],
        }
        for n in (1, 2)
    ],
    "links": [
        "gpu1:mlx5_0 <-> leaf1:1/1 3m",
        "gpu1:mlx5_1 <-> leaf2:1/1 3m",
        "gpu2:mlx5_0 <-> leaf1:1/2 3m",
        "gpu2:mlx5_1 <-> leaf2:1/2 3m",
        "sm1:mlx5_0 <-> leaf1:1/20 5m",
        "sm2:mlx5_0 <-> leaf2:1/20 5m",
        {"a": "leaf1:1/31", "b": "spine1:1/1", "length_m": 15},
        {"a": "leaf1:1/32", "b": "spine1:1/2", "length_m": 15},
        {"a": "leaf1:1/33", "b": "spine1:1/3", "length_m": 15},
        {"a": "leaf2:1/31", "b": "spine1:1/4", "length_m": 15},
        {"a": "leaf2:1/32", "b": "spine1:1/5", "length_m": 15},
        {"a": "leaf2:1/33", "b": "spine1:1/6", "length_m": 15},
    ],
}


def dump(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False)


def load_data(data: dict[str, Any], file: str = "t.yaml") -> LoadResult:
    return loads(dump(data), file)


def rules_of(result: LoadResult, severity: str | None = None) -> set[str]:
    return {f.rule for f in result.findings if severity is None or f.severity == severity}


def only(result: LoadResult, rule: str) -> list[Finding]:
    return [f for f in result.findings if f.rule == rule]


@pytest.fixture
def roce() -> dict[str, Any]:
    return copy.deepcopy(ROCE)


@pytest.fixture
def ib() -> dict[str, Any]:
    return copy.deepcopy(IB)


@pytest.fixture
def run_cli() -> Callable[..., subprocess.CompletedProcess[str]]:
    def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*CLI, *args], capture_output=True, text=True, cwd=cwd, timeout=120, check=False
        )

    return run
