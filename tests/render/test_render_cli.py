"""`fabriccfg render` and `fabriccfg diff --against`: files on disk, summary, exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
from render_helpers import INVENTORIES
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.commands import render as render_cmds
from fabriccfg.inventory.load import load

GOLDEN = Path(__file__).parent / "golden"
runner = CliRunner()


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_render_writes_golden_tree(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(app, ["render", str(INVENTORIES / "roce-lab.yaml"), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "leaf-r1" in result.output and "config_db.json" in result.output and "14 devices" in result.output
    assert _files(out) == _files(GOLDEN / "roce-lab")
    assert (out / "gpu01" / "roce-setup.sh").stat().st_mode & 0o111
    assert not list(out.rglob("*.tmp"))


def test_render_twice_is_byte_identical(tmp_path: Path) -> None:
    for run in ("a", "b"):
        inv = str(INVENTORIES / "ib-lab-mqm8790.yaml")
        result = runner.invoke(app, ["render", inv, "-o", str(tmp_path / run)])
        assert result.exit_code == 0, result.output
    assert _files(tmp_path / "a") == _files(tmp_path / "b")


def test_render_selects_devices_and_role(tmp_path: Path) -> None:
    inv = str(INVENTORIES / "roce-lab.yaml")
    result = runner.invoke(app, ["render", inv, "-o", str(tmp_path / "d"),
                                 "--device", "leaf-r2", "--device", "gpu03"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == ["gpu03", "leaf-r2"]
    result = runner.invoke(app, ["render", inv, "-o", str(tmp_path / "r"), "--role", "spine"])
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["spine1", "spine2"]
    result = runner.invoke(app, ["render", inv, "-o", str(tmp_path / "x"), "--device", "ghost"])
    assert result.exit_code == 2 and "no device named 'ghost'" in result.output  # a usage error


def test_invalid_inventory_exits_1_with_validate_findings(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text((INVENTORIES / "roce-lab.yaml").read_text().replace("roce_dscp: 26", "roce_dscp: 99")
                   .replace("ports: 32\n  spine:", "portz: 32\n  spine:"))
    result = runner.invoke(app, ["render", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 1
    expected = [f.format() for f in load(bad).findings]
    assert expected and result.output.splitlines() == expected
    assert not (tmp_path / "out").exists()


def test_user_templates_option(tmp_path: Path) -> None:
    (tmp_path / "tpl" / "nxos").mkdir(parents=True)
    (tmp_path / "tpl" / "nxos" / "config.txt.j2").write_text("hostname {{ device.name }}\n")
    result = runner.invoke(app, ["render", str(INVENTORIES / "roce-lab.yaml"), "-o", str(tmp_path / "o"),
                                 "--templates", str(tmp_path / "tpl"), "--device", "leaf-r3"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "o" / "leaf-r3" / "config.txt").read_text() == "hostname leaf-r3\n"


def test_diff_against_saved_configs(tmp_path: Path) -> None:
    inv = str(INVENTORIES / "roce-lab.yaml")
    saved = tmp_path / "saved"
    assert runner.invoke(app, ["render", inv, "-o", str(saved)]).exit_code == 0
    result = runner.invoke(app, ["diff", inv, "--against", str(saved)])
    assert result.exit_code == 0, result.output
    assert "0 of 14 devices differ" in result.output
    cfg = saved / "leaf-r3" / "config.txt"
    cfg.write_text(cfg.read_text().replace("mtu 9216", "mtu 1500"))
    (saved / "gpu02" / "roce-setup.sh").unlink()
    result = runner.invoke(app, ["diff", inv, "--against", str(saved)])
    assert result.exit_code == 1, result.output
    assert "leaf-r3" in result.output and "+ mtu 9216" in result.output and "gpu02" in result.output
    assert runner.invoke(app, ["diff", inv, "--against", str(tmp_path / "nowhere")]).exit_code == 2


def test_write_atomic_keeps_old_file_on_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "dev" / "config.txt"
    render_cmds.write_atomic(target, "old\n")
    assert target.read_text() == "old\n"

    def boom(self: Path, other: Path) -> Path:
        raise OSError("disk full")

    monkeypatch.setattr(Path, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        render_cmds.write_atomic(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in target.parent.iterdir()] == ["config.txt"]  # no temp file left behind
