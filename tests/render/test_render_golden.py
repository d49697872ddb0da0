"""Golden files: every rendered file of every example inventory, byte for byte.

Regenerate after an intended change with ``FABRICCFG_REGEN_GOLDEN=1 .venv/bin/pytest tests/render -k golden``
and review the diff of ``tests/render/golden/``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from render_helpers import EXAMPLES

from fabriccfg.render.engine import RenderedDevice

GOLDEN = Path(__file__).parent / "golden"
REGEN = os.environ.get("FABRICCFG_REGEN_GOLDEN") == "1"


@pytest.mark.parametrize("example", EXAMPLES)
def test_golden(example: str, rendered: dict[str, dict[str, RenderedDevice]]) -> None:
    root = GOLDEN / example
    got = {f"{dev}/{name}": text for dev, d in rendered[example].items() for name, text in d.files.items()}
    if REGEN:
        for stale in root.rglob("*"):
            if stale.is_file():
                stale.unlink()
        for rel, text in got.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
    expected = {str(p.relative_to(root)): p.read_text(encoding="utf-8")
                for p in root.rglob("*") if p.is_file()}
    hint = "FABRICCFG_REGEN_GOLDEN=1 to accept"
    assert sorted(got) == sorted(expected), f"rendered file set differs from golden ({hint})"
    for rel, text in got.items():
        assert text == expected[rel], f"{example}/{rel} differs from golden ({hint})"


def test_every_configurable_platform_has_golden_files(rendered: dict[str, dict[str, RenderedDevice]]) -> None:
    platforms = {d.platform for devs in rendered.values() for d in devs.values()}
    assert platforms == {"opensm-host", "mlnxos-ib", "cumulus-nvue", "sonic", "eos", "nxos", "connectx-host"}


def test_mqm8790_renders_nothing(rendered: dict[str, dict[str, RenderedDevice]]) -> None:
    assert not [d for d in rendered["ib-lab-mqm8790"].values() if d.platform == "unmanaged-ib"]
