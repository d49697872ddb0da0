"""`fabriccfg plan` end to end on the real mock fabric (SSH CLIs, SNMP agents, the real push transactions).

Each plan below starts a mock seeded with the configs rendered from the shipped RoCE lab (today's fabric)
and tries a change; the oracles are the inventory edit itself (which lines must change, where) and the
mock platforms' own refusal texts, never the plan code's output about itself.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

import fabriccfg
from fabriccfg.inventory.load import load_fabric
from fabriccfg.plan.report import to_junit, to_markdown
from fabriccfg.plan.run import DevicePlan, Plan, PlanOptions, run_plan
from fabriccfg.render.engine import environment, render_device

DATA = Path(fabriccfg.__file__).parent / "data"
LAB = DATA / "inventories" / "roce-lab.yaml"


def _edit(tmp: Path, name: str, old: str, new: str) -> Path:
    text = LAB.read_text(encoding="utf-8")
    assert old in text
    out = tmp / name
    out.write_text(text.replace(old, new, 1), encoding="utf-8")
    return out


def _override(tmp: Path, platform: str, file: str, old: str, new: str) -> Path:
    env = environment()  # the shipped template, as the engine finds it (each platform package's templates/)
    assert env.loader is not None
    src = env.loader.get_source(env, f"{platform}/{file}")[0]
    assert old in src
    folder = tmp / "templates"
    (folder / platform).mkdir(parents=True, exist_ok=True)
    (folder / platform / file).write_text(src.replace(old, new, 1), encoding="utf-8")
    return folder


def _plan(inventory: Path, tmp: Path, **kw: object) -> Plan:
    opts = PlanOptions(inventory=inventory, base_inventory=LAB, interval=0.5, **kw)  # type: ignore[arg-type]
    return run_plan(opts, workdir=tmp)


@pytest.fixture(scope="module")
def ecn_plan(tmp_path_factory: pytest.TempPathFactory) -> Plan:
    tmp = tmp_path_factory.mktemp("ecn")
    inv = _edit(tmp, "ecn.yaml", "kmin_bytes: 150000", "kmin_bytes: 200000")
    return _plan(inv, tmp)


def test_no_change_exits_0_and_says_so(tmp_path: Path) -> None:
    md = tmp_path / "plan.md"
    cmd = [sys.executable, "-m", "fabriccfg.cli", "plan", str(LAB), "--base-inventory", str(LAB),
           "--interval", "0.5", "-o", str(md)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    text = md.read_text(encoding="utf-8")
    assert "no change" in text
    assert "| leaf-r2 | eos | unchanged | 0 | 0 |" in text
    assert "no change" in proc.stderr


def test_ecn_change_shows_exactly_the_affected_lines(ecn_plan: Plan) -> None:
    assert ecn_plan.exit_code == 2
    by = {d.name: d for d in ecn_plan.devices}
    changed = {n for n, d in by.items() if d.state == "change"}
    # every switch carries the lossless queue's ECN min threshold; hosts do not
    assert changed == {"spine1", "spine2", "leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3"}
    assert all(by[f"gpu0{i}"].state == "unchanged" for i in range(1, 9))
    eos = by["leaf-r2"]
    base = render_device(load_fabric(LAB), "leaf-r2").files["config.txt"]
    ecn_ports = base.count("random-detect ecn minimum-threshold 150000 bytes")  # one per cabled port
    assert ecn_ports == 16
    assert len(eos.added) == len(eos.removed) == ecn_ports
    for line in eos.added:
        assert re.fullmatch(r"interface Ethernet\d+/1 > uc-tx-queue 3 > random-detect ecn minimum-threshold "
                            r"200000 bytes maximum-threshold 1500000 bytes max-mark-probability 100 weight 0",
                            line), line
    assert {ln.replace("150000 bytes", "200000 bytes", 1) for ln in eos.removed} == set(eos.added)
    nxos = by["leaf-r3"]
    assert nxos.added == ["policy-map type queuing QOS_EGRESS_PORT > class type queuing c-out-8q-q3 > "
                          "random-detect minimum-threshold 200 kbytes maximum-threshold 1500 kbytes "
                          "drop-probability 100 weight 0 ecn"]
    nv_line = "nv set qos congestion-control default-global traffic-class 3 min-threshold {}"
    for nv in ("spine1", "leaf-r0"):
        assert by[nv].added == [nv_line.format(200000)]
        assert by[nv].removed == [nv_line.format(150000)]
    for sonic in ("spine2", "leaf-r1"):
        want = ['"green_min_threshold": "200000",', '"red_min_threshold": "200000",',
                '"yellow_min_threshold": "200000"']
        assert sorted(by[sonic].added) == want
    assert eos.transaction.startswith("configure session")
    assert not ecn_plan.new_findings
    assert ecn_plan.verify_after["status"] == "OK"


def test_markdown_report_sections(ecn_plan: Plan) -> None:
    md = to_markdown(ecn_plan)
    for section in ("## fabriccfg plan: roce-lab", "### Rule findings", "### Verify on the mock",
                    "| before the change | OK |", "| after the change | OK |", "### Devices",
                    "### leaf-r2 (eos): changes", "- transaction: configure session + commit timer",
                    "- lines: +16 -16", "```diff"):
        assert section in md, section
    block = md.split("### leaf-r2 (eos): changes", 1)[1].split("```diff", 1)[1].split("```", 1)[0]
    marked = [ln for ln in block.splitlines() if ln.startswith(("+", "-"))]
    assert len(marked) == 32 and all("random-detect ecn minimum-threshold" in ln for ln in marked)
    junit = to_junit(ecn_plan)
    assert 'failures="0"' in junit and 'name="leaf-r2"' in junit
    doc = json.loads(json.dumps(ecn_plan.to_dict()))
    assert doc["exit_code"] == 2


def test_lossy_priority_in_the_inventory_is_a_rule_finding(tmp_path: Path) -> None:
    inv = _edit(tmp_path, "lossy.yaml", "- {name: leaf-r2, profile: leaf,",
                "- {name: leaf-r2, profile: leaf, qos: {roce_priority: 0},")
    plan = _plan(inv, tmp_path)
    assert plan.exit_code == 1
    assert [f["rule"] for f in plan.rule_findings if f["severity"] == "error"] == ["lossless-mismatch"]
    assert "validation errors" in plan.stopped
    assert "lossless-mismatch" in to_markdown(plan) and "<failure" in to_junit(plan)


def test_template_that_breaks_the_lossless_class_fails_post_change_verify(tmp_path: Path) -> None:
    """validate cannot see a template override: the mock's traffic model follows leaf-r2's running config
    (RoCE DSCP into traffic-class 0) and verify after the change finds it."""
    tpl = _override(tmp_path, "eos", "config.txt.j2",
                    "qos map dscp {{ qos.roce_dscp }} to traffic-class {{ roce_tc }}",
                    "qos map dscp {{ qos.roce_dscp }} to traffic-class 0")
    plan = _plan(LAB, tmp_path, templates=tpl)
    assert plan.exit_code == 1
    assert not plan.rule_findings
    by = {d.name: d for d in plan.devices}
    assert by["leaf-r2"].state == "change"
    assert by["leaf-r2"].added == ["qos map dscp 26 to traffic-class 0"]
    assert plan.verify_before["status"] == "OK"
    assert {(f["check"], f["device"]) for f in plan.new_findings} == {("lossless-class-bypassed", "leaf-r2")}
    md = to_markdown(plan)
    assert "plan FAILED" in md
    assert "**new after the change**: CRITICAL lossless-class-bypassed on leaf-r2" in md


def test_platform_rejected_line_fails_with_the_device_error(tmp_path: Path) -> None:
    tpl = _override(tmp_path, "sonic", "config_db.json.j2", '"pfc_enable": "{{ pfc_enable }}"',
                    '"pfc_enable": "{{ pfc_enable }},8"')
    plan = _plan(LAB, tmp_path, templates=tpl)
    assert plan.exit_code == 1
    failed = {d.name: d for d in plan.devices if d.state == "failed"}
    assert set(failed) == {"spine2", "leaf-r1"}
    for d in failed.values():
        assert "pfc_enable: invalid value '3,8'" in d.error
    assert "the mock device refused the change" in to_markdown(plan)


def test_markdown_stays_within_a_github_comment_and_puts_failures_first() -> None:
    """A change that touches hundreds of devices still fits one PR comment (65536 characters)."""
    devices = [DevicePlan(name=f"leaf{i:03d}", platform="eos", state="change", transaction="session",
                          added=["x"] * 150, removed=["y"] * 150,
                          diff="\n".join(["-    random-detect ecn minimum-threshold 150000 bytes"] * 150
                                         + ["+    random-detect ecn minimum-threshold 200000 bytes"] * 150))
               for i in range(100)]
    devices.append(DevicePlan(name="leaf999", platform="sonic", state="failed", error="Error: invalid value"))
    plan = Plan(inventory="big.yaml", fabric="big", devices=devices, verify_before={"status": "OK"},
                verify_after={"status": "OK"})
    md = to_markdown(plan)
    assert len(md) <= 65536
    assert md.index("### leaf999 (sonic): **FAILED**") < md.index("### leaf000 (eos): changes")
    assert "report cut at 60000 characters" in md and "see the JSON report" in md
    assert "leaf099" in md.split("report cut", 1)[1]
    assert plan.exit_code == 1
    junit = ET.fromstring(to_junit(plan))
    assert junit.get("failures") == "1" and junit.get("tests") == str(1 + 2 * len(devices))
