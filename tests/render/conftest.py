"""Fixtures for the render tests: the example inventories, loaded and rendered once per session."""

from __future__ import annotations

import pytest
from render_helpers import EXAMPLES, INVENTORIES

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import RenderedDevice, render_fabric


@pytest.fixture(scope="session")
def fabrics() -> dict[str, Fabric]:
    return {name: load_fabric(INVENTORIES / f"{name}.yaml") for name in EXAMPLES}


@pytest.fixture(scope="session")
def rendered(fabrics: dict[str, Fabric]) -> dict[str, dict[str, RenderedDevice]]:
    """inventory -> device -> RenderedDevice."""
    return {name: {d.name: d for d in render_fabric(f)} for name, f in fabrics.items()}
