"""`fabriccfg push` and the live `fabriccfg diff` through the CLI, against the real mock fabric."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

import fabriccfg
from fabriccfg.cli import app

ROCE = str(Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml")


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_push_json_then_live_diff_is_clean(lab: Any, roce: Any, tmp_path: Path) -> None:
    with lab(roce, faults=["leaf-r2:unreachable"]) as lb:
        ep = str(lb.mock.endpoints_file)
        res = run("diff", ROCE, "--endpoints", ep, "-d", "leaf-r3")
        assert res.exit_code == 1, res.output
        assert "leaf-r3" in res.output
        res = run("push", ROCE, "--endpoints", ep, "-d", "leaf-r3", "-d", "leaf-r0", "--yes",
                  "--format", "json", "--run-dir", str(tmp_path / "runs"))
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        assert {d["name"]: d["state"] for d in doc["devices"]} == {"leaf-r0": "applied", "leaf-r3": "applied"}
        assert Path(doc["run_dir"], "report.json").is_file()
        res = run("diff", ROCE, "--endpoints", ep, "-d", "leaf-r3", "-d", "leaf-r0")
        assert res.exit_code == 0, res.output
        res = run("diff", ROCE, "--endpoints", ep, "-d", "leaf-r2")
        assert res.exit_code == 3, res.output
        assert "cannot read" in res.output


def test_push_without_tty_or_yes_is_a_dry_run(lab: Any, roce: Any, tmp_path: Path) -> None:
    with lab(roce) as lb:
        ep = str(lb.mock.endpoints_file)
        res = run("push", ROCE, "--endpoints", ep, "-d", "leaf-r3", "--run-dir", str(tmp_path / "runs"))
        assert "running as --dry-run" in res.output
        assert res.exit_code == 1  # changes pending, none applied
        assert run("diff", ROCE, "--endpoints", ep, "-d", "leaf-r3").exit_code == 1


def test_push_usage_errors_exit_2(lab: Any, roce: Any, tmp_path: Path) -> None:
    res = run("push", ROCE, "--endpoints", str(tmp_path / "missing.json"), "--yes")
    assert res.exit_code == 2 and "no endpoints file" in res.output
    with lab(roce) as lb:
        res = run("push", ROCE, "--endpoints", str(lb.mock.endpoints_file), "-d", "nosuch", "--yes")
        assert res.exit_code == 2 and "no device named 'nosuch'" in res.output


def test_insecure_host_keys_is_loud(lab: Any, roce: Any, tmp_path: Path) -> None:
    with lab(roce, faults=["leaf-r3:hostkey-changed"]) as lb:
        ep = str(lb.mock.endpoints_file)
        res = run("push", ROCE, "--endpoints", ep, "-d", "leaf-r3", "--yes", "--run-dir", str(tmp_path / "r"))
        assert res.exit_code == 1 and "host key" in res.output
        res = run("push", ROCE, "--endpoints", ep, "-d", "leaf-r3", "--yes", "--insecure-host-keys",
                  "--run-dir", str(tmp_path / "r"))
        assert res.exit_code == 0, res.output
        assert "WARNING" in res.output and "NOT checked" in res.output
        newest = max(p for p in (tmp_path / "r").iterdir() if (p / "report.json").is_file())
        warnings = json.loads((newest / "report.json").read_text())["warnings"]
        assert any("--insecure-host-keys" in w for w in warnings)


def test_non_targets_fold_into_one_line_and_lines_stay_whole(lab: Any, ib8790: Any, tmp_path: Path,
                                                              monkeypatch: Any) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)  # xdist workers set COLUMNS=80
    inv = str(Path(fabriccfg.__file__).parent / "data" / "inventories" / "ib-lab-mqm8790.yaml")
    with lab(ib8790) as lb:
        res = run("push", inv, "--endpoints", str(lb.mock.endpoints_file), "-d", "sm1", "-d", "ib-spine1",
                  "-d", "ib-leaf-r0", "-d", "gpu01", "--dry-run", "--run-dir", str(tmp_path / "runs"))
    assert res.exit_code == 1, res.output  # sm1 would change
    lines = res.stdout.splitlines()
    folded = ("not push targets: 2 unmanaged-ib (externally managed HDR switch, no CLI and no SNMP), "
              "1 connectx-host (render nothing)")
    assert lines.count(folded) == 2  # the progress lines, and under the final table
    assert any(ln.startswith("[1/1] sm1 ") for ln in lines)
    listed = [ln for ln in lines if ln.startswith(("[", "│"))]  # progress lines and final-table rows
    assert len(listed) == 2 and all("sm1" in ln for ln in listed)
    report_line = next(ln for ln in lines if "report: " in ln)
    assert report_line.endswith("/report.json")  # not hard-wrapped at 80 columns
    doc = json.loads(Path(report_line.split("report: ")[1]).read_text())
    assert {d["name"]: (d["state"], d["target"]) for d in doc["devices"]} == {
        "sm1": ("skipped", True), "ib-spine1": ("skipped", False), "ib-leaf-r0": ("skipped", False),
        "gpu01": ("skipped", False)}
