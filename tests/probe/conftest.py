from __future__ import annotations

from pathlib import Path

import pytest

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import load_fabric, loads
from fabriccfg.inventory.models import Fabric

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def roce() -> Fabric:
    return load_fabric(ROOT / "inventories" / "roce-lab.yaml")


@pytest.fixture(scope="session")
def ib() -> Fabric:
    return load_fabric(ROOT / "inventories" / "ib-lab-mqm8790.yaml")


@pytest.fixture(scope="session")
def ib8700() -> Fabric:
    return load_fabric(ROOT / "inventories" / "ib-lab-mqm8700.yaml")


def generated(gpus: int, technology: str) -> Fabric:
    res = loads(dump_yaml(generate(gpus, technology)), f"gen-{technology}-{gpus}", rules=False)  # type: ignore[arg-type]
    assert res.fabric is not None
    return res.fabric
