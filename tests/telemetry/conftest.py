"""Shared fixtures: the RoCE lab inventory and its traffic model (the mock agents serve it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric

INVENTORIES = Path(__file__).resolve().parents[2] / "fabriccfg" / "data" / "inventories"
V3_USER = {"user": "fabric", "auth_key": "authpass123", "priv_key": "privpass123"}


@pytest.fixture(scope="session")
def roce_fabric() -> Fabric:
    return load_fabric(INVENTORIES / "roce-lab.yaml")


@pytest.fixture(scope="session")
def ib_fabric() -> Fabric:
    return load_fabric(INVENTORIES / "ib-lab-mqm8790.yaml")
