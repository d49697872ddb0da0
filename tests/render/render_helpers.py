"""Shared helpers of the render tests (a uniquely named module: several test folders have a conftest)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from fabriccfg.inventory.load import load_fabric, loads
from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import RenderedDevice, render_fabric

REPO = Path(__file__).resolve().parents[2]
INVENTORIES = REPO / "inventories"
EXAMPLES = sorted(p.stem for p in INVENTORIES.glob("*.yaml"))


def fabric_from(example: str, *replacements: tuple[str, str]) -> Fabric:
    """An example inventory with text replacements applied (variants for focused tests)."""
    text = (INVENTORIES / f"{example}.yaml").read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new)
    result = loads(text, f"{example}-variant.yaml")
    assert result.fabric is not None, [f.format() for f in result.findings]
    return result.fabric


def by_platform(rendered: dict[str, dict[str, RenderedDevice]], platform: str) -> list[RenderedDevice]:
    return [d for devs in rendered.values() for d in devs.values() if d.platform == platform]


@cache
def rendered_examples() -> dict[str, dict[str, RenderedDevice]]:
    """inventory -> device -> RenderedDevice, for parametrize lists built at collection time."""
    return {name: {d.name: d for d in render_fabric(load_fabric(INVENTORIES / f"{name}.yaml"))}
            for name in EXAMPLES}
