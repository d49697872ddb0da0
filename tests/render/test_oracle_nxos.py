"""NX-OS oracle: every rendered NX-OS line is a command of Cisco's grammar (``oracles/nxos_grammar.yaml``).

The grammar table is written from the Nexus 9000 QoS configuration guide (a URL per row) and the AI/ML
blueprint config (roce.md §5). Each line must match exactly one row whose parent (the enclosing command
path) matches, and every captured value must meet the row's constraint (ranges, enums, max >= min, the
sum of 'bandwidth remaining percent' per policy). Comments ('!') are skipped. No fabriccfg code judges.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from render_helpers import fabric_from

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import loads
from fabriccfg.render.engine import render_fabric

GRAMMAR = Path(__file__).parent / "oracles" / "nxos_grammar.yaml"
_NAME = re.compile(r"[A-Za-z0-9][-A-Za-z0-9_./:]{0,39}")


@cache
def grammar() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load(GRAMMAR.read_text(encoding="utf-8"))["rows"]
    return rows


def parse(text: str) -> list[tuple[str, str]]:
    """NX-OS running-config text -> (parent path, line) pairs; the path joins enclosing commands by ' / '."""
    out: list[tuple[str, str]] = []
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body.startswith("!"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        out.append((" / ".join(s for _, s in stack), body))
        stack.append((indent, body))
    return out


def _ints(text: str) -> list[int] | None:
    vals: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if not m:
            return None
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi < lo:
            return None
        vals += range(lo, hi + 1)
    return vals


def _value_errors(row: dict[str, Any], groups: dict[str, str]) -> list[str]:
    errs = []
    for key, rule in (row.get("values") or {}).items():
        v = groups[key]
        if "int" in rule:
            lo, hi = rule["int"]
            if not lo <= int(v) <= hi:
                errs.append(f"{key}={v} outside {lo}..{hi}")
            if "ge" in rule and int(v) < int(groups[rule["ge"]]):
                errs.append(f"{key}={v} < {rule['ge']}={groups[rule['ge']]}")
        elif "ints" in rule:
            lo, hi = rule["ints"]
            vals = _ints(v)
            if vals is None or not all(lo <= n <= hi for n in vals):
                errs.append(f"{key}={v} is not a list of {lo}..{hi}")
        elif "enum" in rule:
            if v not in rule["enum"]:
                errs.append(f"{key}={v} not in {rule['enum']}")
        elif "name" in rule:
            if not _NAME.fullmatch(v):
                errs.append(f"{key}={v!r} is not an NX-OS object name")
        elif "text" in rule and len(v) > rule["text"]:
            errs.append(f"{key} longer than {rule['text']}")
    return errs


def check(text: str) -> list[str]:
    errors: list[str] = []
    sums: dict[tuple[str, str], int] = {}
    for parent, line in parse(text):
        hits = [(row, m) for row in grammar()
                if (m := re.fullmatch(row["pattern"], line))
                and ((row["parent"] is None and not parent)
                     or (row["parent"] is not None and parent and re.search(row["parent"], parent)))]
        if len(hits) != 1:
            errors.append(f"{parent or '(top)'} / {line}: matches {len(hits)} grammar rows")
            continue
        row, m = hits[0]
        errors += [f"{line}: {e} ({row['id']}, {row['source']})" for e in _value_errors(row, m.groupdict())]
        if "sum_per_parent_le" in row:
            policy = parent.split(" / ")[0]
            key = (policy, row["id"])
            sums[key] = sums.get(key, 0) + int(next(iter(m.groupdict().values())))
            if sums[key] > row["sum_per_parent_le"]:
                errors.append(f"{policy}: {row['id']} sums to {sums[key]} > {row['sum_per_parent_le']}")
    return errors


def _cases() -> list[tuple[str, str]]:
    lab = "roce-lab"
    wd = "enabled: true, detection_ms: 200"
    gen = loads(dump_yaml(generate(64, "roce", gpus_per_node=8, rails=2, platform="nxos")), "gen-nxos.yaml")
    assert gen.fabric is not None
    variants = {
        "lab": fabric_from(lab),
        "lossy-wd-off": fabric_from(lab, ("host_mtu: 4200", "host_mtu: 4200\n  mode: lossy"),
                                    (wd, wd.replace("true", "false"))),
        "ecn-off-not-strict": fabric_from(
            lab, ("host_mtu: 4200", "host_mtu: 4200\n  cnp_strict: false\n  roce_bandwidth_percent: 70"),
            ("asic: cloudscale-gx2,", "asic: cloudscale-gx2, qos: {ecn_enabled: false},")),
        "gen": gen.fabric,
    }
    return [(f"{label}/{d.name}", d.files["config.txt"]) for label, f in variants.items()
            for d in render_fabric(f) if d.platform == "nxos"]


CASES = _cases()


@pytest.mark.parametrize(("name", "text"), CASES, ids=[c[0] for c in CASES])
def test_oracle_nxos_grammar(name: str, text: str) -> None:
    errors = check(text)
    assert not errors, f"{name}: lines outside Cisco's grammar:\n" + "\n".join(errors)


def test_oracle_nxos_grammar_rows_cite_cisco() -> None:
    for row in grammar():
        assert row["source"].startswith(("https://www.cisco.com/", "https://cisco.com/")), row["id"]


@pytest.mark.parametrize(("old", "new", "expect"), [
    ("drop-probability 100 weight 0 ecn", "drop-probability 100 weight 16 ecn", "weight=16"),
    ("150 kbytes maximum-threshold 1500 kbytes", "150 kbytes maximum-threshold 1500 bytes", "matches 0"),
    ("pause pfc-cos 3", "pause pfc-cos 8", "not a list"),
    ("  class type queuing c-out-8q-q1\n    bandwidth remaining percent 0",
     "  class type queuing c-out-8q-q1\n    bandwidth remaining percent 10", "sums to 110"),
    ("  mtu 9216\n  priority-flow-control mode on", "  mtu 9300\n  priority-flow-control mode on", "9300"),
    ("priority-flow-control mode on", "priority-flow-control on", "matches 0"),
])
def test_oracle_nxos_grammar_catches(old: str, new: str, expect: str) -> None:
    text = CASES[0][1]
    assert old in text and not check(text)
    assert any(expect in e for e in check(text.replace(old, new, 1))), check(text.replace(old, new, 1))
