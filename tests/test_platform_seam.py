"""The platform seam holds: platform specifics live in the platform module (and its mock profile), and
loading every platform module stays cheap (``fabriccfg validate`` never imports the device libraries)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import fabriccfg
from fabriccfg import platforms

PKG = Path(fabriccfg.__file__).parent
ALLOWED = {
    "inventory/models.py": "default platforms of GPU hosts and SM hosts "
                           "(allowed names come from the registry)",
    "inventory/gen.py": "the fat-tree generator's example hardware per RoCE platform (model, ASIC, ports)",
}
"""Files outside platforms/ and mock/profiles/ that may spell a platform name, and why."""


def test_no_platform_names_outside_the_seam() -> None:
    names = "|".join(re.escape(n) for n in platforms.names())
    quoted = re.compile(rf"""["']({names})["']""")
    offenders = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel.startswith(("platforms/", "mock/profiles/")) or rel in ALLOWED:
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if quoted.search(line):
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == [], "platform names outside the platform seam:\n" + "\n".join(offenders)


@pytest.mark.parametrize("name", platforms.names())
def test_each_platform_module_owns_its_capabilities(name: str) -> None:
    mod = platforms.module(name)
    assert mod.PLATFORM.name == name
    for attr in ("RENDER", "TRANSACTION", "TELEMETRY"):
        assert hasattr(mod, attr), f"{name}: no {attr}"
    tx = mod.TRANSACTION
    if mod.PLATFORM.device_type is None:
        assert tx is None, f"{name} has no CLI and cannot be a push target"
    else:
        assert tx.__module__ == mod.__name__, f"{name}: TRANSACTION is defined in {tx.__module__}"


_VALIDATE = """
import sys
from typer.testing import CliRunner
from fabriccfg import platforms
from fabriccfg.cli import app
for name in platforms.names():
    platforms.module(name)
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
