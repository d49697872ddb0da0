"""The watch exposition in the Prometheus text format, with each series' name and labels kept between rounds.

``prometheus_client.generate_latest`` builds a metric object, a sample tuple, a label dict and an escaped
label string for every series on every round: at 2,000 devices (~900,000 series) that was a third of the
round's CPU. A series' ``name{labels}`` prefix does not change between rounds, so it is built once and
only the value is formatted per round (with the library's own ``floatToGoString``). The output is
byte-for-byte what ``generate_latest`` prints for the same families (tests/verify/test_exposition.py
holds it to the library); prefixes of series that vanish are dropped at the next round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import cast

from prometheus_client import utils

from fabriccfg.verify.output import Family

_value = cast(Callable[[float], str], utils.floatToGoString)
"""The library's value formatting (Go's float format: ``+Inf``, ``NaN``, exponent from 1e+21)."""


def _escape(value: str) -> str:
    """Label value escaping of the text format: backslash, double quote, line feed."""
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _help(doc: str) -> str:
    return doc.replace("\\", "\\\\").replace("\n", "\\n")


class Renderer:
    """Renders one round's families; keeps the series prefixes the last round used."""

    def __init__(self) -> None:
        self._prefix: dict[tuple[str, ...], str] = {}

    def __len__(self) -> int:
        return len(self._prefix)

    def render(self, families: Iterable[Family]) -> bytes:
        old, new = self._prefix, {}
        out: list[str] = []
        for fam in families:
            out.append(f"# HELP {fam.name} {_help(fam.doc)}\n# TYPE {fam.name} {fam.kind}\n")
            names = fam.labelnames
            order = sorted(range(len(names)), key=names.__getitem__)
            for row, value in fam.rows:
                key = (fam.name, *row)
                prefix = old.get(key)
                if prefix is None:
                    labels = ",".join(f'{names[i]}="{_escape(row[i])}"' for i in order)
                    prefix = f"{fam.name}{{{labels}}} " if labels else f"{fam.name} "
                new[key] = prefix
                out.append(f"{prefix}{_value(value)}\n")
        self._prefix = new
        return "".join(out).encode("utf-8")
