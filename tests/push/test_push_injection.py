"""Regression for issue 10 §1: a text field with U+2028 once added ``hostname PWNED-EOS`` to an EOS switch.

Reproduced through the real CLI against the real mock fabric (asyncssh EOS CLI): ``validate`` must refuse
the inventory with ``error[unsafe-text]`` naming the code point, ``render`` and ``push`` must refuse it,
and the switch's running config must never gain the injected line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import fabriccfg
from fabriccfg.cli import app

ROCE = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"
EXPLOIT = 'model: "7060X5-64\\u2028hostname PWNED-EOS\\u2028!"'


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _hostile_inventory(tmp_path: Path) -> Path:
    text = ROCE.read_text()
    good = "platform: eos, model: 7060X5-64,"
    assert good in text  # the example fabric still has its EOS leaf
    path = tmp_path / "roce-lab.yaml"
    path.write_text(text.replace(good, f"platform: eos, {EXPLOIT},"))
    return path


def test_exploit_is_refused_by_validate_render_and_push(lab: Any, roce: Any, tmp_path: Path) -> None:
    inv = _hostile_inventory(tmp_path)
    line = next(n for n, ln in enumerate(inv.read_text().splitlines(), 1) if "PWNED" in ln)

    res = run("validate", str(inv))
    assert res.exit_code == 1, res.output
    assert f"{inv}:{line}:" in res.output
    assert "error[unsafe-text]" in res.output and "U+2028 LINE SEPARATOR" in res.output

    res = run("render", str(inv), "-o", str(tmp_path / "out"), "-d", "leaf-r2")
    assert res.exit_code == 1, res.output
    assert "U+2028 LINE SEPARATOR" in res.output
    assert not (tmp_path / "out" / "leaf-r2").exists()

    with lab(roce) as lb:
        res = run("push", str(inv), "--endpoints", str(lb.mock.endpoints_file), "-d", "leaf-r2", "--yes",
                  "--run-dir", str(tmp_path / "runs"))
        assert res.exit_code == 1, res.output
        assert "error[unsafe-text]" in res.output and "U+2028" in res.output
        running = lb.running(["leaf-r2"])["leaf-r2"]
    text = "".join(running.values())
    assert "PWNED" not in text
    assert "hostname leaf-r2" in text  # the mock prints its hostname: the check above reads real config
