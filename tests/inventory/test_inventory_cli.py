"""The real `fabriccfg` CLI on a corpus of bad inventories, the examples, json output, schema, gen, rules."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from .conftest import REPO

Run = Callable[..., subprocess.CompletedProcess[str]]

GOOD = """\
fabric:
  name: lab
  technology: roce
  link_speed: 400G
credentials:
  ssh: {username: admin, password: env:FABRIC_SSH_PASSWORD}
roce:
  ecn: {kmin_bytes: 150000, kmax_bytes: 1500000}
switches:
  - {name: leaf1, platform: cumulus-nvue, role: leaf, ports: 32, mgmt: 192.0.2.11, rail: 0}
hosts:
  - name: gpu1
    mgmt: 192.0.2.101
    nics:
      - {name: mlx5_0, rail: 0}
  - name: gpu2
    mgmt: 192.0.2.102
    nics:
      - {name: mlx5_0, rail: 0}
links:
  - {a: gpu1:mlx5_0, b: leaf1:swp1, length_m: 3}
  - {a: gpu2:mlx5_0, b: leaf1:swp2, length_m: 3}
"""

SECRET = "Sup3r-s3cret-Passw0rd"

# name -> (text, rule id, 1-based line the finding must point at, or None for "any")
CORPUS: dict[str, tuple[str, str, int | None]] = {
    "unknown-key": (
        GOOD.replace("    ports: 32", "    ports: 32").replace("ports: 32,", "portz: 32, ports: 32,"),
        "unknown-key",
        10,
    ),
    "unknown-top-key": (GOOD + "switchs: []\n", "unknown-key", 23),
    "wrong-type": (GOOD.replace("ports: 32", "ports: many"), "wrong-type", 10),
    "duplicate-device": (GOOD.replace("  - name: gpu2", "  - name: gpu1"), "unique-names", 16),
    "dangling-link-end": (GOOD.replace("b: leaf1:swp2", "b: leaf9:swp2"), "dangling-link-end", 22),
    "ecn-min-over-max": (GOOD.replace("kmin_bytes: 150000", "kmin_bytes: 1600000"), "ecn-thresholds", 8),
    "lossless-prio-one-nic": (
        GOOD.replace(
            "      - {name: mlx5_0, rail: 0}\nlinks",
            "      - {name: mlx5_0, rail: 0, qos: {pfc_priorities: [4]}}\nlinks",
        ),
        "lossless-mismatch",
        19,
    ),
    "newline-in-field": (
        GOOD.replace("rail: 0}\nhosts", 'rail: 0, description: "up\\nreload"}\nhosts'),
        "unsafe-text",
        10,
    ),
    "literal-secret": (
        GOOD.replace("password: env:FABRIC_SSH_PASSWORD", f"password: {SECRET}"),
        "literal-secret",
        6,
    ),
    "empty-file": ("", "empty-inventory", 1),
    "comments-only": ("# nothing here\n", "empty-inventory", 1),
    "broken-yaml": (GOOD.replace("  name: lab", "  name: [lab"), "yaml-syntax", None),
    "tab-indent": (GOOD.replace("  name: lab", "\tname: lab"), "yaml-syntax", 2),
    "top-level-list": ("- a\n- b\n", "wrong-type", 1),
    "bad-link-line": (GOOD + "  - gpu1:mlx5_0 leaf1:swp3\n", "invalid-value", 23),
    "unknown-profile": (
        GOOD.replace("  - {name: leaf1,", "  - {profile: laef, name: leaf1,"),
        "unknown-profile",
        10,
    ),
    "missing-fabric": ("switches: []\n", "missing-key", 1),
}


def test_good_inventory_is_valid(tmp_path: Path, run_cli: Run) -> None:
    f = tmp_path / "good.yaml"
    f.write_text(GOOD)
    res = run_cli("validate", str(f))
    assert res.returncode == 0, res.stdout + res.stderr
    assert "error[" not in res.stdout


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_input_exits_1_with_rule_and_position(tmp_path: Path, run_cli: Run, name: str) -> None:
    text, rule, line = CORPUS[name]
    f = tmp_path / f"{name}.yaml"
    f.write_text(text)
    res = run_cli("validate", str(f))
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "Traceback" not in out
    m = re.search(
        rf"^{re.escape(str(f))}:(\d+):(\d+): error\[{re.escape(rule)}\]: .+$", res.stdout, re.MULTILINE
    )
    assert m, out
    if line is not None:
        assert int(m.group(1)) == line, out
    assert SECRET not in out


def test_unknown_key_suggests_closest(tmp_path: Path, run_cli: Run) -> None:
    f = tmp_path / "typo.yaml"
    f.write_text(CORPUS["unknown-key"][0])
    res = run_cli("validate", str(f))
    assert "did you mean 'ports'" in res.stdout


def test_secret_never_printed_even_misplaced(tmp_path: Path, run_cli: Run) -> None:
    text = GOOD.replace("password: env:FABRIC_SSH_PASSWORD", f"pasword: {SECRET}")
    text = text.replace("  name: lab", f"  name: lab\n  secret: {SECRET}")
    f = tmp_path / "s.yaml"
    f.write_text(text)
    for fmt in ("text", "json"):
        res = run_cli("validate", "--format", fmt, str(f))
        assert res.returncode == 1
        assert SECRET not in res.stdout + res.stderr


def test_examples_validate(run_cli: Run) -> None:
    files = sorted(str(p) for p in (REPO / "inventories").glob("*.yaml"))
    assert files
    res = run_cli("validate", *files)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "error[" not in res.stdout


def test_json_format(tmp_path: Path, run_cli: Run) -> None:
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD)
    bad.write_text(CORPUS["ecn-min-over-max"][0])
    res = run_cli("validate", "--format", "json", str(good), str(bad))
    assert res.returncode == 1
    doc = json.loads(res.stdout)
    by_file = {item["file"]: item for item in doc["files"]}
    assert by_file[str(good)]["valid"] is True
    assert by_file[str(bad)]["valid"] is False
    (finding,) = [x for x in by_file[str(bad)]["findings"] if x["rule"] == "ecn-thresholds"]
    assert (
        finding["line"] == 8 and finding["severity"] == "error" and finding["path"] == "roce.ecn.kmin_bytes"
    )


def test_usage_errors_exit_2(tmp_path: Path, run_cli: Run) -> None:
    res = run_cli("validate", str(tmp_path / "missing.yaml"))
    assert res.returncode == 2 and "Traceback" not in res.stdout + res.stderr
    res = run_cli("validate", "--format", "xml", str(tmp_path / "missing.yaml"))
    assert res.returncode == 2
    res = run_cli("gen", "--gpus", "0", "--technology", "roce", "-o", str(tmp_path / "x.yaml"))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    res = run_cli("gen", "--gpus", "8", "--technology", "roce", "--oversubscription", "1:2", "-o", "-")
    assert res.returncode == 2 and "oversubscription" in res.stderr


@pytest.mark.parametrize("technology", ["infiniband", "roce"])
def test_gen_round_trips_through_validate(tmp_path: Path, run_cli: Run, technology: str) -> None:
    out = tmp_path / f"{technology}.yaml"
    res = run_cli("gen", "--gpus", "256", "--technology", technology, "-o", str(out))
    assert res.returncode == 0, res.stderr
    res = run_cli("validate", str(out))
    assert res.returncode == 0, res.stdout
    assert "error[" not in res.stdout


def test_schema_describes_the_file(run_cli: Run) -> None:
    res = run_cli("schema")
    assert res.returncode == 0
    schema = json.loads(res.stdout)
    assert "profiles" in schema["properties"]
    assert "fabric" in schema["required"]
    switch = schema["$defs"]["Switch"]
    assert "profile" in switch["properties"] and switch["required"] == ["name"]
    assert switch["properties"]["port_speed"]["anyOf"]
    # every key used by the example inventories is known to the schema
    defs = schema["$defs"]
    for path in (REPO / "inventories").glob("*.yaml"):
        data = yaml.safe_load(path.read_text())
        assert set(data) <= set(schema["properties"]), path
        for sw in data.get("switches", []):
            assert set(sw) <= set(defs["Switch"]["properties"]), (path, sw)


def test_rules_command_lists_every_rule(run_cli: Run) -> None:
    res = run_cli("rules")
    assert res.returncode == 0
    for rid in ("unique-names", "pfc-headroom", "sm-master", "partition-default", "leaf-oversubscription"):
        assert re.search(rf"^{rid}\s+(error|warning)\s+\S", res.stdout, re.MULTILINE)


def test_documented_example_validates(tmp_path: Path, run_cli: Run) -> None:
    doc = (REPO / "docs" / "inventory.md").read_text()
    m = re.search(r"```yaml\n(.*?)```", doc, re.DOTALL)
    assert m
    f = tmp_path / "doc.yaml"
    f.write_text(m.group(1))
    res = run_cli("validate", str(f))
    assert res.returncode == 0, res.stdout
    assert not res.stdout.strip()
