"""The loader never raises on user input, keeps positions, and expands profiles and one-line links."""

from __future__ import annotations

import copy
import os
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fabriccfg.inventory.load import InventoryError, load, load_fabric, loads

from .conftest import IB, ROCE, dump, load_data, only

BASE_TEXTS = [dump(ROCE), dump(IB)]
EXAMPLES = int(os.environ.get("FABRICCFG_HYPOTHESIS_EXAMPLES", "150"))


def test_positions_follow_the_file() -> None:
    text = dump(ROCE).replace("ports: 32", "ports: -1", 1)
    result = loads(text, "x.yaml")
    hits = [f for f in result.findings if f.rule == "out-of-range"]
    assert len(hits) == 1  # the profile's value, inherited by two leaves, is reported once
    f = hits[0]
    assert "ports: -1" in text.splitlines()[f.line - 1] and "1 more devices" in f.message
    assert f.format().startswith(f"x.yaml:{f.line}:{f.col}: error[out-of-range]: ")


def test_profile_value_errors_point_at_the_profile() -> None:
    data = copy.deepcopy(ROCE)
    data["profiles"]["leaf"]["ports"] = "lots"
    text = dump(data)
    result = loads(text)
    hits = [f for f in result.findings if f.rule == "wrong-type"]
    assert hits and all("ports: lots" in text.splitlines()[f.line - 1] for f in hits)


def test_profile_inheritance_and_cycles() -> None:
    data = copy.deepcopy(ROCE)
    data["profiles"]["base"] = {"asic": "spectrum-4", "model": "SN5600"}
    data["profiles"]["leaf"] = {"inherits": "base", "role": "leaf", "ports": 32}
    result = load_data(data)
    assert result.ok and result.fabric is not None
    assert result.fabric.switches[0].asic == "spectrum-4"
    data["profiles"]["base"]["inherits"] = "leaf"
    assert only(load_data(data), "profile-cycle")


def test_one_line_links() -> None:
    result = load_data(IB)
    assert result.fabric is not None
    link = result.fabric.links[0]
    assert (link.a, link.b, link.length_m) == ("gpu1:mlx5_0", "leaf1:1/1", 3)
    data = copy.deepcopy(IB)
    data["links"][0] = "gpu1:mlx5_0 <-> leaf1:1/1 2.5m speed=HDR"
    result = load_data(data)
    assert result.ok and result.fabric is not None
    assert result.fabric.links[0].length_m == 2.5 and result.fabric.links[0].speed == 200
    data["links"][0] = "gpu1:mlx5_0 <-> leaf1:1/1 three-metres"
    assert only(load_data(data), "invalid-value")


def test_duplicate_yaml_key() -> None:
    result = loads("fabric: {name: a, technology: roce, link_speed: 400G}\nfabric: {}\n")
    assert only(result, "duplicate-key")


def test_load_fabric_raises_inventory_error(tmp_path: Any) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("fabric: {name: a, technology: roce}\n")
    try:
        load_fabric(f)
    except InventoryError as exc:
        assert "link_speed" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("no InventoryError")
    assert load(tmp_path / "nope.yaml").findings[0].rule == "file-not-found"


def test_hostile_yaml_is_a_finding() -> None:
    cases = {
        "a: &a [*a]": "yaml-syntax",
        "a: 2024-13-45": "yaml-syntax",
        "[" * 3000: "yaml-syntax",
        "x: !!python/object:os.system {}": "yaml-syntax",
        "x: !!python/name:os.system ''": "yaml-syntax",
        "x: !custom [1]": "yaml-syntax",
        "\x00": "yaml-syntax",
    }
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi", strict=True)
    )
    cases[bomb] = "yaml-too-large"
    for text, rule in cases.items():
        result = loads(text)
        assert result.fabric is None
        assert result.findings[0].rule == rule, (text[:40], result.findings)


# ----------------------------------------------------------------- hypothesis: the loader never raises
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(["400G", "HDR", "0x7fff", "env:X", "a:b", "x <-> y", "leaf1:swp1", "ALL"]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from([ROCE, IB]), data=st.data())
def test_loader_survives_mutated_data(base: dict[str, Any], data: st.DataObject) -> None:
    doc = copy.deepcopy(base)
    paths = _paths(doc)
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(paths))
        cur: Any = doc
        try:
            for p in path[:-1]:
                cur = cur[p]
            action = data.draw(st.sampled_from(["set", "delete", "dup"]))
            if action == "set":
                cur[path[-1]] = data.draw(_values)
            elif action == "delete":
                del cur[path[-1]]
            elif isinstance(cur, list):
                cur.append(copy.deepcopy(cur[path[-1]]))
        except (KeyError, IndexError, TypeError):
            continue
    try:
        text = yaml.safe_dump(doc, sort_keys=False)
    except yaml.YAMLError:
        return
    result = loads(text, "m.yaml")
    for f in result.findings:
        assert f.line >= 1 and f.col >= 1 and f.rule and f.message


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASE_TEXTS), data=st.data())
def test_loader_survives_mutated_text(base: str, data: st.DataObject) -> None:
    text = base
    for _ in range(data.draw(st.integers(1, 5))):
        pos = data.draw(st.integers(0, len(text)))
        action = data.draw(st.sampled_from(["insert", "delete", "replace"]))
        chunk = data.draw(
            st.sampled_from(
                [
                    ":",
                    "-",
                    " ",
                    "\n",
                    "\t",
                    "[",
                    "{",
                    "'",
                    '"',
                    "&a",
                    "*a",
                    "!!",
                    "#",
                    "<<: ",
                    "0x",
                    "?",
                    "|",
                    ">",
                    "%",
                    "@",
                    "\x00",
                    "é",
                    "~",
                ]
            )
        )
        if action == "insert":
            text = text[:pos] + chunk + text[pos:]
        elif action == "delete":
            text = text[:pos] + text[pos + len(chunk) :]
        else:
            text = text[:pos] + chunk + text[pos + 1 :]
    result = loads(text, "m.yaml")
    assert all(f.line >= 1 for f in result.findings)


def test_profile_mistake_reported_once() -> None:
    data = copy.deepcopy(ROCE)
    data["profiles"]["leaf"]["prots"] = 32
    hits = only(load_data(data), "unknown-key")
    assert len(hits) == 1
    assert "did you mean 'ports'" in hits[0].message and "1 more devices" in hits[0].message
