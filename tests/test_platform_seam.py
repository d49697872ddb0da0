"""The platform seam holds: each platform package holds its pieces, and loading every platform's facts and
render spec stays cheap (``fabriccfg validate`` never imports the device libraries). Which module may
import which is checked on the import graph in ``tests/structure/``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import fabriccfg
from fabriccfg import catalog, registry

PKG = Path(fabriccfg.__file__).parent
PIECES = {"render": "RENDER", "transaction": "TRANSACTION", "telemetry": "TELEMETRY"}
"""Submodule of a platform package -> the attribute the registry hands to the stage."""


@pytest.mark.parametrize("name", catalog.names())
def test_each_platform_package_owns_its_capabilities(name: str) -> None:
    """Facts in the package, each piece in its own submodule and defined there (not borrowed from a stage)."""
    assert catalog.info(name).name == name
    for part, attr in PIECES.items():
        mod = registry.submodule(name, part)
        piece = registry.piece(name, part, attr)
        if mod is None:
            assert piece is None
            continue
        assert hasattr(mod, attr), f"{name}: {mod.__name__} has no {attr}"
    tx = registry.transaction(name)
    if catalog.info(name).device_type is None:
        assert tx is None, f"{name} has no CLI and cannot be a push target"
        assert catalog.info(name).not_a_target, f"{name}: say why it is not a push target"
    else:
        assert isinstance(tx, type), f"{name}: no TRANSACTION class"
        assert tx.__module__ == f"{catalog.packages()[name]}.transaction", tx.__module__
        assert registry.mock_profile(name) is not None, f"{name} has a CLI and needs a mock profile"


_VALIDATE = """
import sys
from typer.testing import CliRunner
from fabriccfg import catalog, registry
from fabriccfg.cli import app
for name in catalog.names():
    catalog.info(name)
    registry.render(name)
for inv in sys.argv[1:]:
    res = CliRunner().invoke(app, ["validate", inv])
    assert res.exit_code in (0, 1), (inv, res.output)
print(",".join(sorted(m for m in ("netmiko", "paramiko", "pysnmp", "asyncssh") if m in sys.modules)))
"""


def test_validate_imports_no_device_library() -> None:
    """In a fresh interpreter: every platform module loaded and every shipped inventory validated."""
    inventories = [str(p) for p in sorted((PKG / "data" / "inventories").glob("*.yaml"))]
    out = subprocess.run([sys.executable, "-c", _VALIDATE, *inventories], capture_output=True, text=True,
                         timeout=120, check=True)
    assert out.stdout.strip() == "", f"fabriccfg validate imported {out.stdout.strip()}"
