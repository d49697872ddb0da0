"""Cumulus NVUE grammar oracle: every rendered ``nv set`` line is a documented path with a documented value.

The judge is ``oracles/nvue_grammar.yaml``, a table written by hand from NVIDIA's NVUE command reference and
Cumulus user guides (one source URL per row), not from our templates. Lines come from every Cumulus switch
of the example inventories and of generated fabrics; a path the table does not know, a value outside its
enum/range, a path newer than the device's release, or a broken cross-line rule (DWRR total, pool total,
pool pair) fails the test.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from render_helpers import fabric_from, rendered_examples

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import loads
from fabriccfg.inventory.models import Fabric, Switch
from fabriccfg.render.engine import render_fabric

GRAMMAR_FILE = Path(__file__).parent / "oracles" / "nvue_grammar.yaml"
DEFAULT_RELEASE = (5, 16)
"""The release the templates assume without ``os_release`` (docs/render.md); the table's 'since' is checked
against it."""


@cache
def grammar() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(GRAMMAR_FILE.read_text(encoding="utf-8"))
    return data


def _release(text: str) -> tuple[int, int]:
    m = re.match(r"(\d+)\.(\d+)", text)
    assert m, text
    return int(m.group(1)), int(m.group(2))


def _accepts(spec: dict[str, Any], word: str) -> bool:
    if "enum" in spec:
        return word in spec["enum"]
    if "int" in spec:
        lo, hi = spec["int"]
        return bool(re.fullmatch(r"\d+", word)) and int(word) >= lo and (hi is None or int(word) <= hi)
    if "regex" in spec:
        return re.fullmatch(spec["regex"], word) is not None
    if "ref" in spec:
        return _accepts(grammar()["placeholders"][spec["ref"]], word)
    raise AssertionError(f"unknown value spec {spec}")


def check_line(line: str, release: tuple[int, int]) -> str | None:
    """None when ``line`` is a documented path and value for ``release``, else why not."""
    words = line.split()
    if words[:2] != ["nv", "set"]:
        return "not an 'nv set' line"
    words = words[2:]
    holders = grammar()["placeholders"]
    for row in grammar()["paths"]:
        path = row["path"]
        if len(words) != len(path) + 1:
            continue
        ok = True
        for want, got in zip(path, words, strict=False):
            ok = _accepts(holders[want[1:-1]], got) if want.startswith("<") else want == got
            if not ok:
                break
        if not ok:
            continue
        if not _accepts(row["value"], words[-1]):
            return f"value {words[-1]!r} not allowed by {row['value']} ({row['source']})"
        if release < _release(row["since"]):
            return f"path introduced in Cumulus Linux {row['since']}, device runs {release[0]}.{release[1]}"
        return None
    return "unknown path"


def check_config(text: str, release: tuple[int, int]) -> list[str]:
    """Every problem of one rendered config.txt: per line, then the documented cross-line rules."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith("nv ")]
    problems = [f"{ln}: {why}" for ln in lines if (why := check_line(ln, release))]
    rules = {c["rule"]: c for c in grammar()["constraints"]}
    mode = {tc: "dwrr" for tc in range(8)}
    bw = {int(k): v for k, v in rules["dwrr-total-at-most-100"]["factory"].items()}
    for tcs, key, value in re.findall(
            r"^nv set qos egress-scheduler default-global traffic-class (\S+) (mode|bw-percent) (\S+)$",
            "\n".join(lines), re.M):
        for tc in (int(x) for x in tcs.split(",")):
            if key == "mode":
                mode[tc] = value
            else:
                bw[tc] = int(value)
    total = sum(bw[tc] for tc in range(8) if mode[tc] == "dwrr")
    if total > 100:
        problems.append(f"DWRR total {total} % > 100 % ({rules['dwrr-total-at-most-100']['source']})")
    pools = {m.group(1): int(m.group(2)) for ln in lines
             if (m := re.match(r"nv set qos traffic-pool (\S+) memory-percent (\d+)$", ln))}
    if sum(pools.values()) > 100:
        problems.append(f"traffic-pool total {sum(pools.values())} % > 100 %")
    roce_mode = any(ln.startswith("nv set qos roce") for ln in lines)
    if "roce-lossless" in pools and not roce_mode:
        problems.append("roce-lossless pool without 'nv set qos roce' mode (granular PFC: default-lossless)")
    if "default-lossless" in pools and roce_mode:
        problems.append("default-lossless pool next to 'nv set qos roce' mode (its pool is roce-lossless)")
    return problems


def _generated(gpus: int, ratio: str) -> Fabric:
    result = loads(dump_yaml(generate(gpus, "roce", oversubscription=ratio)), f"gen-{gpus}.yaml")
    assert result.fabric is not None
    return result.fabric


def _configs() -> Iterator[tuple[str, str, tuple[int, int]]]:
    sources: list[tuple[str, dict[str, Any]]] = [
        (name, {d.name: d for d in devs.values()}) for name, devs in rendered_examples().items()]
    for gpus, ratio in ((64, "1:1"), (256, "2:1")):
        fabric = _generated(gpus, ratio)
        sources.append((f"gen-{gpus}-{ratio}", {d.name: d for d in render_fabric(fabric)}))
        sources[-1][1]["__fabric__"] = fabric
    old = fabric_from("roce-lab", ("mgmt: 192.0.2.11,", "mgmt: 192.0.2.11, os_release: '5.4.2',"))
    sources.append(("roce-lab-cl5.4", {d.name: d for d in render_fabric(old)}))
    sources[-1][1]["__fabric__"] = old
    for name, devs in sources:
        fabric = devs.pop("__fabric__", None)
        for dev in devs.values():
            if dev.platform != "cumulus-nvue":
                continue
            release = DEFAULT_RELEASE
            if fabric is not None:
                sw = fabric.device(dev.name)
                if isinstance(sw, Switch) and sw.os_release:
                    release = _release(sw.os_release)
            yield f"{name}/{dev.name}", dev.files["config.txt"], release


CONFIGS = list(_configs())


def test_configs_cover_every_row_source() -> None:
    assert len(CONFIGS) >= 4
    assert any("cl5.4" in name for name, _, _ in CONFIGS)


@pytest.mark.parametrize(("name", "text", "release"), CONFIGS, ids=[c[0] for c in CONFIGS])
def test_oracle_nvue_grammar(name: str, text: str, release: tuple[int, int]) -> None:
    problems = check_config(text, release)
    assert not problems, f"{name}: {len(problems)} line(s) outside the NVUE grammar, first: {problems[:5]}"


@pytest.mark.parametrize(("line", "why"), [
    ("nv set interface swp1 qos pfc-watchdog", "unknown path"),              # the old bare form
    ("nv set qos egress-scheduler default-global traffic-class 3 bw-percent 0", "not allowed"),
    ("nv set qos congestion-control default-global traffic-class 3 probability 101", "not allowed"),
    ("nv set interface swp1 link mtu 9217", "not allowed"),
    ("nv set qos traffic-pool roce-lossy2 memory-percent 10", "unknown path"),
])
def test_oracle_rejects_what_the_docs_do_not_allow(line: str, why: str) -> None:
    assert why in (check_line(line, DEFAULT_RELEASE) or "accepted")


def test_oracle_rejects_paths_newer_than_the_release_and_broken_totals() -> None:
    assert "introduced in Cumulus Linux 5.6" in (
        check_line("nv set interface swp1 qos pfc-watchdog state enable", (5, 4)) or "")
    old_scheduler = "\n".join([
        "nv set qos egress-scheduler default-global traffic-class 3 mode dwrr",
        "nv set qos egress-scheduler default-global traffic-class 3 bw-percent 50",
        "nv set qos egress-scheduler default-global traffic-class 0 mode dwrr",
        "nv set qos egress-scheduler default-global traffic-class 0 bw-percent 50",
        "nv set qos traffic-pool roce-lossless memory-percent 60",
        "nv set qos traffic-pool default-lossy memory-percent 40",
    ])
    problems = check_config(old_scheduler, DEFAULT_RELEASE)
    assert any("DWRR total" in p for p in problems)
    assert any("roce-lossless pool without" in p for p in problems)
