"""The watch exposition in the Prometheus text format, with each series' name and labels kept between rounds.

``prometheus_client.generate_latest`` builds a metric object, a sample tuple, a label dict and an escaped
label string for every series on every round: at 2,000 devices (~900,000 series) that was a third of the
round's CPU. A series' ``name{labels}`` prefix does not change between rounds, so it is built once and
only the value is formatted per round (with the library's own ``floatToGoString``). The output is
byte-for-byte what ``generate_latest`` prints for the same families (tests/verify/test_exposition.py
holds it to the library); prefixes of series that vanish are dropped at the next round.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import cast

from prometheus_client import utils

from fabriccfg.telemetry.model import Sample
from fabriccfg.verify.output import Exported, Family, SeriesHead, SeriesLayout

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
        return self.render_round(families, (), None, ())[0]

    def render_round(self, head: Iterable[Family], samples: Iterable[Sample],
                     keep: dict[str, frozenset[str]] | None, tail: Iterable[Family]) -> tuple[bytes, int]:
        """``head``, then the per-port series of ``samples`` (as
        :func:`~fabriccfg.verify.output.sample_families` makes them, written straight from the samples:
        no family rows in between), then ``tail``; with the number of series."""
        old, new = self._prefix, dict[tuple[str, ...], str]()
        out: list[str] = []
        n = self._families(head, old, new, out)
        n += _samples(samples, keep, out)
        n += self._families(tail, old, new, out)
        self._prefix = new
        return "".join(out).encode("utf-8"), n

    @staticmethod
    def _families(families: Iterable[Family], old: dict[tuple[str, ...], str],
                  new: dict[tuple[str, ...], str], out: list[str]) -> int:
        n = 0
        for fam in families:
            out.append(_header(fam.name, fam.doc, fam.kind))
            names = fam.labelnames
            order = sorted(range(len(names)), key=names.__getitem__)
            for row, value in fam.rows:
                key = (fam.name, *row)
                prefix = old.get(key)
                if prefix is None:
                    prefix = _prefix(fam.name, names, order, row)
                new[key] = prefix
                out.append(f"{prefix}{_value(value)}\n")
            n += len(fam.rows)
        return n


def _header(name: str, doc: str, kind: str) -> str:
    return f"# HELP {name} {_help(doc)}\n# TYPE {name} {kind}\n"


def _prefix(name: str, names: Sequence[str], order: Sequence[int], row: Sequence[str]) -> str:
    labels = ",".join(f'{names[i]}="{_escape(row[i])}"' for i in order)
    return f"{name}{{{labels}}} " if labels else f"{name} "


def _template(head: SeriesHead) -> tuple[str, str, str] | None:
    """(pre, mid, post) with prefix = pre + device + mid + port + post ("device" sorts before "port"), or
    None: a state's value is a label too, and a label value that holds a marker would cut wrongly."""
    if head.names[-1] == "state":
        return None
    order = sorted(range(len(head.names)), key=head.names.__getitem__)
    text = _prefix(head.spec.name, head.names, order, ["\x00", "\x01", *head.rest])
    if text.count("\x00") != 1 or text.count("\x01") != 1:
        return None
    pre, _, after = text.partition("\x00")
    mid, _, post = after.partition("\x01")
    return pre, mid, post


def _samples(samples: Iterable[Sample], keep: dict[str, frozenset[str]] | None, out: list[str]) -> int:
    """The per-port series of ``samples``: the rows and families of ``sample_families`` (the same
    :class:`~fabriccfg.verify.output.SeriesLayout`), rendered without building the rows."""
    layout = SeriesLayout(samples)
    templates: dict[SeriesHead, tuple[str, str, str] | None] = {}
    fams: dict[str, tuple[Exported, tuple[str, ...], list[int], list[str]]] = {}
    seen: set[str] = set()
    escaped: dict[str, str] = {}
    for s in layout.samples:
        head = layout.head(s[2], s[5], s[3])
        v = head.value(s, keep)
        if v is None:
            continue
        spec = head.spec
        fam = fams.get(spec.name)
        if fam is None:
            order = sorted(range(len(head.names)), key=head.names.__getitem__)
            fam = fams[spec.name] = (spec, head.names, order, [])
        if head in templates:
            template = templates[head]
        else:
            template = templates[head] = _template(head)
        if template is None or fam[1] != head.names:
            prefix = _prefix(spec.name, fam[1], fam[2], head.cells(s))
        else:
            device, port = s[0], s[1] or ""
            dev = escaped.get(device)
            if dev is None:
                dev = escaped[device] = _escape(device)
            prt = escaped.get(port)
            if prt is None:
                prt = escaped[port] = _escape(port)
            prefix = template[0] + dev + template[1] + prt + template[2]
        if prefix in seen:  # the same series twice (two sources): one sample per series
            continue
        seen.add(prefix)
        fam[3].append(f"{prefix}{_value(v)}\n")
    n = 0
    for spec, _names, _order, lines in fams.values():
        out.append(_header(spec.name, spec.doc, spec.kind))
        out.extend(lines)
        n += len(lines)
    return n
