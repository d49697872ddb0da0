"""The example lab fabrics, loaded once per session for every test package that needs them.

A package may shadow a name with its own fixture (tests/inventory's ``roce``/``ib`` are raw documents).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric

INVENTORIES = Path(__file__).resolve().parents[1] / "inventories"


@pytest.fixture(scope="session")
def roce() -> Fabric:
    return load_fabric(INVENTORIES / "roce-lab.yaml")


@pytest.fixture(scope="session")
def ib() -> Fabric:
    return load_fabric(INVENTORIES / "ib-lab-mqm8790.yaml")


@pytest.fixture(scope="session")
def ib8790(ib: Fabric) -> Fabric:
    return ib


@pytest.fixture(scope="session")
def ib8700() -> Fabric:
    return load_fabric(INVENTORIES / "ib-lab-mqm8700.yaml")
