"""Cumulus NVUE: ``nv show interface PORT qos roce counters``, ``nv show interface PORT qos
pfc-watchdog`` and ``nv show interface PORT qos buffer`` (one port per command; the RoCE counters are
those of the RoCE traffic class; the buffer tables carry the peak occupancy, "Max Usage")."""

from __future__ import annotations

import functools
import itertools
import operator
import re
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import Sample, label
from fabriccfg.telemetry.parsers._table import data_lines, num
from fabriccfg.text import split_lines

_UNITS = {"bytes": 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30, "tb": 1 << 40}
"""NVUE prints sizes in binary units: 150000 B shows as ``146.48 KB``, 1500000 B as ``1.43 MB``."""
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)\s+(Bytes|B|KB|MB|GB|TB)$", re.IGNORECASE)


def _value(text: str) -> int | None:
    """``693777677344`` -> int; ``56.52 MB`` -> bytes (as precise as the two printed decimals)."""
    t = text.strip()
    if (v := num(t)) is not None:
        return v
    m = _SIZE.match(t)
    return round(float(m.group(1)) * _UNITS[m.group(2).lower()]) if m else None


def _columns(rule: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]


def parse_roce_counters(text: str, leaves: frozenset[str] | None = None) -> dict[str, int]:
    """Flattened ``section.subsection.name`` -> value (indentation gives the nesting).

    The columns (name, operational, applied, description) are cut at the header rule's dash runs, so a
    description never passes for a value; sizes are converted to bytes. ``leaves``: only counters of
    these names (sections are always followed), so the collector does not cut the columns of the ~35
    rows per port it does not use."""
    out: dict[str, int] = {}
    path: list[tuple[int, str]] = []
    cols: list[tuple[int, int]] = []
    for line in text.splitlines():
        s = line.strip()
        if not s:
            continue
        if s[0] == "-" and not s.strip("- "):
            cols = _columns(line)
            continue
        if not cols:
            continue  # the header line above the rule
        if leaves is not None:
            first, _, rest = s.partition(" ")
            if rest and first not in leaves:
                continue  # a counter row (name then value) that is not wanted; section rows have no value
        name_end = cols[1][0] if len(cols) > 1 else len(line)
        name = line[:name_end].rstrip()
        op = line[name_end:cols[2][0] if len(cols) > 2 else len(line)].strip() if len(cols) > 1 else ""
        indent = len(name) - len(name.lstrip())
        while path and path[-1][0] >= indent:
            path.pop()
        if op and (v := _value(op)) is not None:
            out[".".join([p for _, p in path] + [name.strip()])] = v
        elif not op:
            path.append((indent, name.strip()))
    return out


_BANNER = re.compile(r"^-+\r?\n\s*Interface:\s*(\S+)\s*\r?\n-+\s*$", re.MULTILINE)
_BANNER_WINDOW = 4096
"""How far before ``Interface:`` a banner's dash rule may start."""


def split_interfaces(text: str) -> list[tuple[str, str]]:
    """``nv show interface qos-roce-counters`` (all interfaces) -> ``[(port, that port's table), ...]``.

    Each interface's table follows a banner (a dash rule, ``Interface: swp1``, a dash rule), as in the
    all-interfaces ``qos-roce-status-pool-map`` example of NVIDIA's RoCE page; text before the first
    banner is ignored. Banners are looked for where ``Interface:`` occurs: the banner regex searched over
    a 200 kB reply tried every line (every table's header rule starts with dashes)."""
    marks = []
    at = text.find("Interface:")
    while at >= 0:
        start = max(0, at - _BANNER_WINDOW)
        before = text[start:at].rstrip()  # up to the end of the dash rule
        rule = len(before) - len(before.rstrip("-"))
        m = _BANNER.match(text, start + len(before) - rule) if rule else None
        if m is not None:
            marks.append(m)
        at = text.find("Interface:", m.end() if m is not None else at + 1)
    return [(m.group(1), text[m.end():marks[i + 1].start() if i + 1 < len(marks) else len(text)])
            for i, m in enumerate(marks)]


def parse_roce_counters_all(text: str) -> dict[str, dict[str, int]]:
    """port -> :func:`parse_roce_counters` of its table."""
    return {port: parse_roce_counters(table) for port, table in split_interfaces(text)}


def parse_watchdog(text: str) -> dict[str, dict[str, int | str]]:
    """traffic class -> {status, deadlock_count}."""
    out: dict[str, dict[str, int | str]] = {}
    for row in data_lines(text):
        if len(row) >= 3 and row[0].isdigit() and (v := num(row[2])) is not None:
            out[row[0]] = {"status": row[1].lower(), "deadlock_count": v}
    return out


ROCE_MAP: dict[str, tuple[str, str]] = {
    "rx-stats.rx-pfc-stats.pause-packets": ("pfc_rx_pause", "prio"),
    "rx-stats.rx-pfc-stats.pause-duration": ("pfc_rx_pause_duration", "prio"),
    "tx-stats.tx-pfc-stats.pause-packets": ("pfc_tx_pause", "prio"),
    "tx-stats.tx-pfc-stats.pause-duration": ("pfc_tx_pause_duration", "prio"),
    "tx-stats.tx-ecn-stats.ecn-marked-packets": ("ecn_marked", "tc"),
    # "Tx buffer discards for RoCE traffic": NVIDIA's RoCE page (Cumulus Linux 5.16, 'Verify RoCE
    # Configuration', nv show interface <id> qos roce counters)
    "tx-stats.tx-roce-stats.unicast-no-buffer-discard": ("tc_no_buffer_discard", "tc"),
}
"""ECN marks, lossless-class drops and (``with_pfc=True``) PFC: Cumulus' snmpd serves no PFC or queue MIB
(its Supported MIBs page), so on Cumulus this command is the source of all of them."""


_LEAVES = frozenset(key.rsplit(".", 1)[-1] for key in ROCE_MAP)


def roce_samples(device: str, port: str | None, text: str, roce_tc: int, *,
                 with_pfc: bool = False) -> list[Sample]:
    return _roce_samples(device, port, parse_roce_counters(text, _LEAVES), roce_tc, with_pfc)


def roce_samples_all(device: str, text: str, roce_tc: int, *, with_pfc: bool = False) -> list[Sample]:
    """Samples of every interface in ``nv show interface qos-roce-counters``."""
    out: list[Sample] = []
    for port, table in split_interfaces(text):
        out.extend(_roce_samples(device, port, parse_roce_counters(table, _LEAVES), roce_tc, with_pfc))
    return out


def _roce_samples(device: str, port: str | None, values: dict[str, int], roce_tc: int,
                  with_pfc: bool) -> list[Sample]:
    out = []
    for key, value in values.items():
        mapped = ROCE_MAP.get(key)
        if mapped is None or (mapped[1] == "prio" and not with_pfc):
            continue
        metric, name = mapped
        out.append(Sample(device, port, metric, label(name, roce_tc), value, "counter64"))
    return out


def watchdog_samples(device: str, port: str | None, text: str) -> list[Sample]:
    out = []
    for tc, d in parse_watchdog(text).items():
        lbl = label("prio", tc)
        out.append(Sample(device, port, "pfcwd_storm_detected", lbl, int(d["deadlock_count"]), "counter64"))
        status = "stormed" if d["status"] in ("deadlock", "stormed") else str(d["status"])
        out.append(Sample(device, port, "pfcwd_status", lbl, status, "state"))
    return out


_BUFFER_SECTIONS = {"ingress priority group": "ingress_pg", "egress traffic class": "egress_tc"}
_BUFFER_COLUMNS = {"max usage": "max_usage", "hr": "headroom", "hr/pl max": "headroom_max_usage"}
"""Columns kept (header text, two header lines joined): the peak shared use ("Max Usage"), the PG's
headroom ("HR") and its peak use ("HR/PL Max")."""


def _cells(line: str, starts: list[int]) -> list[str]:
    ends = [*starts[1:], max(len(line), starts[-1])]
    return [line[a:b].strip() for a, b in zip(starts, ends, strict=True)]


def parse_qos_buffer(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """``nv show interface PORT qos buffer`` -> {``ingress_pg``|``egress_tc``: {id: {column: bytes}}}.

    Each section is a title, a ``===`` line, one or two header lines, a dash rule and rows. Columns are
    cut where the rule's dash runs start (headers are truncated with ``…``); a cell too wide for its
    column continues on the next line (``18.98`` / ``KB``), so a line with an empty first column extends
    the row above. Sizes are converted to bytes (binary units, as NVUE prints them).

    A leaf sends 64 of these per round: sections other than the two kept are skipped by the title
    search, a header's layout is worked out once per distinct header, and only the kept columns are
    cut."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    lines = split_lines(text)
    # the few lines holding "===" are found in C (a leaf's 64 tables are ~4,000 lines a round)
    found = itertools.compress(itertools.count(), map(operator.contains, lines, itertools.repeat("===")))
    rules = [i for i in found if not lines[i].strip().strip("=")]
    for k, at in enumerate(rules):
        title = lines[at - 1].strip().lower() if at > 0 else ""
        section = next((v for key, v in _BUFFER_SECTIONS.items() if key in title), None)
        if section is None:
            continue
        rows = _buffer_rows(lines[at + 1:rules[k + 1] - 1 if k + 1 < len(rules) else len(lines)])
        if rows:
            out.setdefault(section, {}).update(rows)
    return out


def _buffer_rows(lines: list[str]) -> dict[str, dict[str, int]]:
    header: list[str] = []
    layout: tuple[int, tuple[tuple[int, int | None, str], ...]] | None = None
    cells: list[list[str]] = []  # per row: id, then the kept columns
    for line in lines:
        if layout is None:
            s = line.strip()
            if not s:
                continue
            if set(s) <= _RULE_CHARS:
                if not header:
                    return {}
                layout = _buffer_layout(tuple(header), line)
                continue
            header.append(line)
            continue
        first_end, kept = layout
        first = line[:first_end].strip()
        row = [line[a:b].strip() for a, b, _ in kept]
        if first:
            cells.append([first, *row])
        elif cells and any(row):
            prev = cells[-1]
            cells[-1] = [prev[0], *(f"{x} {y}".strip() for x, y in zip(prev[1:], row, strict=True))]
    if layout is None:
        return {}
    names = [name for _, _, name in layout[1]]
    out: dict[str, dict[str, int]] = {}
    for row in cells:
        if row[0].isdigit():
            out[row[0]] = {n: v for n, cell in zip(names, row[1:], strict=True)
                           if (v := _size(cell)) is not None}
    return out


_RULE_CHARS = frozenset("-… ")


@functools.lru_cache(maxsize=64)
def _buffer_layout(header: tuple[str, ...], rule: str) -> tuple[int, tuple[tuple[int, int | None, str], ...]]:
    """(end of the id column, (start, end, name) of each kept column) for one header and rule."""
    starts = [m.start() for m in re.finditer(r"\S+", rule)]
    if not starts:
        return 0, ()
    header_cells = [_cells(h, starts) for h in header]
    names = [" ".join(" ".join(h[i] for h in header_cells).split()).lower() for i in range(len(starts))]
    kept = tuple((starts[i], starts[i + 1] if i + 1 < len(starts) else None, _BUFFER_COLUMNS[n])
                 for i, n in enumerate(names) if n in _BUFFER_COLUMNS)
    return (starts[1] if len(starts) > 1 else 1 << 30), kept


@functools.lru_cache(maxsize=4096)
def _size(cell: str) -> int | None:
    """:func:`_value`, remembered: a leaf's 64 buffer tables repeat the same few cells (``0 Bytes``)."""
    return _value(cell)


def buffer_samples(device: str, port: str | None, text: str) -> list[Sample]:
    """Watermarks of one port: egress TC 0-7 "Max Usage" (queue), ingress PG 0-7 "Max Usage" (shared)
    and "HR/PL Max" (headroom); the PG number is taken as the priority (the RoCE lossless PG)."""
    out = []
    parsed = parse_qos_buffer(text)
    for tc, d in parsed.get("egress_tc", {}).items():
        if int(tc) < 8 and "max_usage" in d:
            out.append(Sample(device, port, "queue_watermark_bytes", label("tc", tc), d["max_usage"],
                              "gauge"))
    for pg, d in parsed.get("ingress_pg", {}).items():
        if int(pg) >= 8:
            continue
        if "max_usage" in d:
            out.append(Sample(device, port, "pg_shared_watermark_bytes", label("prio", pg), d["max_usage"],
                              "gauge"))
        if "headroom_max_usage" in d:
            out.append(Sample(device, port, "pg_headroom_watermark_bytes", label("prio", pg),
                              d["headroom_max_usage"], "gauge"))
    return out


PARSERS: dict[str, Callable[[str], Any]] = {
    "nvue_roce": parse_roce_counters,
    "nvue_qos_buffer": parse_qos_buffer,
    "nvue_pfcwd": parse_watchdog,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
