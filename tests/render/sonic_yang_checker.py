"""A small checker of CONFIG_DB documents against ``oracles/sonic_yang_constraints.yaml``.

The table transcribes the SONiC YANG models (model file and leaf per row); this module only interprets it:
keys, leaf types and ranges, patterns (full match, as YANG's are anchored), enums, mandatory leaves,
leafrefs between tables (or to tables the device already has), and the few ``must`` forms the models use
for the tables we write. No fabriccfg code is used, so the renderer is never its own judge.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

import yaml

CONSTRAINTS = Path(__file__).parent / "oracles" / "sonic_yang_constraints.yaml"
_ABNF = re.compile(r"^\[([A-Z_]+)\|(.+)\]$")


@cache
def constraints() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(CONSTRAINTS.read_text(encoding="utf-8"))
    return data


class Checker:
    """``check(doc)`` -> list of violations, each 'TABLE|key.leaf: what (model leaf)'.

    ``device_names``: names of tables the device has but the document does not write (PORT from the
    inventory). ``abnf``: releases before 202106 write references as ``[TABLE|name]``."""

    def __init__(self, device_names: dict[str, Iterable[str]], *, abnf: bool = False) -> None:
        c = constraints()
        self.tables: dict[str, Any] = c["tables"]
        self.device: dict[str, set[str]] = {}
        for table, spec in c["device_tables"].items():
            names = spec["names"]
            self.device[table] = set(device_names[table]) if names == "from-inventory" else set(names)
        self.abnf = abnf

    def check(self, doc: dict[str, Any]) -> list[str]:
        errors: list[str] = []
        for table, rows in doc.items():
            spec = self.tables.get(table)
            if spec is None:
                errors.append(f"{table}: no SONiC YANG model in the constraint table")
                continue
            if not isinstance(rows, dict) or not rows:
                errors.append(f"{table}: must be a non-empty object ({spec['model']})")
                continue
            for key, row in rows.items():
                where = f"{table}|{key}"
                errors += self._key(doc, spec, where, key)
                if not isinstance(row, dict) or not all(isinstance(v, str) for v in row.values()):
                    errors.append(f"{where}: fields must be strings (CONFIG_DB)")
                    continue
                if "map" in spec:
                    for k, v in row.items():
                        errors += self._leaf(doc, spec["map"]["key"], f"{where}.{k}", k, spec["model"])
                        errors += self._leaf(doc, spec["map"]["value"], f"{where}.{k}", v, spec["model"])
                    continue
                errors += self._row(doc, spec, where, key, row, rows)
        return errors

    def _key(self, doc: dict[str, Any], spec: dict[str, Any], where: str, key: str) -> list[str]:
        parts = key.split("|")
        leaves = spec["keys"]
        if len(parts) != len(leaves):
            return [f"{where}: key needs {len(leaves)} part(s) ({' | '.join(k['leaf'] for k in leaves)})"]
        out: list[str] = []
        for part, leaf in zip(parts, leaves, strict=True):
            out += self._leaf(doc, leaf, f"{where}.<{leaf['leaf']}>", part, spec["model"], is_key=True)
        return out

    def _row(self, doc: dict[str, Any], spec: dict[str, Any], where: str, key: str, row: dict[str, str],
             rows: dict[str, Any]) -> list[str]:
        out: list[str] = []
        leaves: dict[str, Any] = spec["leaves"]
        for name, leaf in leaves.items():
            if leaf.get("mandatory") and name not in row:
                out.append(f"{where}: mandatory leaf {name} missing ({spec['model']})")
        for name, value in row.items():
            leaf = leaves.get(name)
            if leaf is None:
                out.append(f"{where}: {name} is not a leaf of {spec['model']} {spec['list']}")
                continue
            out += self._leaf(doc, {**leaf, "leaf": name}, f"{where}.{name}", value, spec["model"])
            must = leaf.get("must", {})
            if "key_is" in must and key != must["key_is"]:
                out.append(f"{where}.{name}: only allowed on {must['key_is']} ({spec['model']} must)")
            if "key_is_not" in must and key == must["key_is_not"]:
                out.append(f"{where}.{name}: not allowed on {must['key_is_not']} ({spec['model']} must)")
            other = must.get("ge_leaf")
            if other and other in row and _int(value) is not None and _int(row[other]) is not None \
                    and int(value) < int(row[other]):
                out.append(f"{where}.{name}: {value} < {other} {row[other]} ({spec['model']} must)")
            glob = must.get("ge_global")
            g = rows.get("GLOBAL", {}).get(glob) if glob else None
            if g is not None and _int(value) is not None and _int(g) is not None and int(value) < int(g):
                out.append(f"{where}.{name}: {value} < GLOBAL {glob} {g} ({spec['model']} must)")
        return out

    def _leaf(self, doc: dict[str, Any], leaf: dict[str, Any], where: str, value: str, model: str,
              *, is_key: bool = False) -> list[str]:
        kind = leaf["type"]
        cite = f"({model} {leaf.get('leaf', '')})".replace(" )", ")")
        if kind == "union":
            for branch in leaf["any"]:
                if not self._leaf(doc, {**branch, "leaf": leaf.get("leaf")}, where, value, model):
                    return []
            return [f"{where}: {value!r} matches no branch of the union {cite}"]
        if kind in ("uint", "int"):
            n = _int(value)
            lo, hi = leaf["range"]
            if n is None or (kind == "uint" and value.startswith("-")):
                return [f"{where}: {value!r} is not an {kind} {cite}"]
            if not lo <= n <= hi:
                return [f"{where}: {n} outside {lo}..{hi} {cite}"]
            return []
        if kind == "boolean":
            return [] if value in ("true", "false") else [f"{where}: {value!r} is not a boolean {cite}"]
        if kind == "enum":
            return [] if value in leaf["values"] else [f"{where}: {value!r} not in {leaf['values']} {cite}"]
        if kind == "string":
            if "pattern" in leaf and not re.fullmatch(leaf["pattern"], value):
                return [f"{where}: {value!r} does not match {leaf['pattern']!r} {cite}"]
            if "length" in leaf and not leaf["length"][0] <= len(value) <= leaf["length"][1]:
                return [f"{where}: length of {value!r} outside {leaf['length']} {cite}"]
            return []
        if kind == "leafref":
            target = leaf["table"]
            name = value
            m = _ABNF.match(value)
            if m and self.abnf and not is_key:
                if m.group(1) != target:
                    return [f"{where}: {value!r} names {m.group(1)}, the model wants {target} {cite}"]
                name = m.group(2)
            names = set(doc.get(target, {})) | self.device.get(target, set())
            if name not in names:
                return [f"{where}: {name!r} is not a key of {target} (leafref) {cite}"]
            return []
        raise ValueError(f"unknown leaf type {kind} in {CONSTRAINTS.name}")


def _int(text: str) -> int | None:
    return int(text) if re.fullmatch(r"-?\d+", text) else None
