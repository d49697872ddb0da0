from __future__ import annotations

from pathlib import Path

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import loads
from fabriccfg.inventory.models import Fabric

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"


def generated(gpus: int, technology: str) -> Fabric:
    res = loads(dump_yaml(generate(gpus, technology)), f"gen-{technology}-{gpus}", rules=False)  # type: ignore[arg-type]
    assert res.fabric is not None
    return res.fabric
