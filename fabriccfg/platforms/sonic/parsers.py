"""SONiC show commands: ``show pfcwd stats``, ``show queue counters``, ``show queue wredcounters``,
``show pfc counters``, and the watermarks (``show queue watermark unicast``, ``show priority-group
watermark shared|headroom``). Numbers carry thousands separators; ``N/A`` is skipped."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import Sample, label
from fabriccfg.telemetry.parsers._table import data_lines, num

_QUEUE = re.compile(r"^(?P<port>\S+):(?P<q>\d+)$")
_TXQ = re.compile(r"^(UC|MC|ALL)?(\d+)$")


def _pair(text: str) -> tuple[int, int] | None:
    a, sep, b = text.partition("/")
    x, y = num(a), num(b)
    return (x, y) if sep and x is not None and y is not None else None


def parse_pfcwd(text: str) -> dict[str, dict[str, dict[str, int | str]]]:
    """port -> {prio: {status, detected, restored, tx_ok, tx_drop, rx_ok, rx_drop}}."""
    out: dict[str, dict[str, dict[str, int | str]]] = {}
    for row in data_lines(text):
        m = _QUEUE.match(row[0]) if row else None
        if not m or len(row) < 5:
            continue
        storm, tx, rx = _pair(row[2]), _pair(row[3]), _pair(row[4])
        if storm is None or tx is None or rx is None:
            continue
        out.setdefault(m.group("port"), {})[m.group("q")] = {
            "status": row[1], "detected": storm[0], "restored": storm[1], "tx_ok": tx[0], "tx_drop": tx[1],
            "rx_ok": rx[0], "rx_drop": rx[1]}
    return out


def _queue_rows(text: str, ncols: int) -> list[tuple[str, str, str, list[int | None]]]:
    """(port, queue type UC/MC, queue number, numbers) rows of ``show queue ...`` tables."""
    out = []
    for row in data_lines(text):
        if len(row) < 2 + ncols:
            continue
        m = _TXQ.match(row[1])
        if not m:
            continue
        # 'ALL<n>' rows are the all-traffic queues of VOQ/multi-ASIC systems (N/A elsewhere): not unicast
        out.append((row[0], m.group(1) or "UC", m.group(2), [num(x) for x in row[2:2 + ncols]]))
    return out


def _unicast_table(text: str, keys: tuple[str, ...]) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {queue: {key: value}} of a per-queue table whose counter columns are ``keys`` (UC queues)."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for port, qtype, q, vals in _queue_rows(text, len(keys)):
        if qtype == "UC" and any(v is not None for v in vals):
            out.setdefault(port, {})[q] = {k: v for k, v in zip(keys, vals, strict=True) if v is not None}
    return out


def parse_queue_counters(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {queue: {pkts, bytes, drop_pkts, drop_bytes}} (unicast queues)."""
    return _unicast_table(text, ("pkts", "bytes", "drop_pkts", "drop_bytes"))


def parse_wred(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {queue: {wred_drop_pkts, wred_drop_bytes, ecn_marked_pkts, ecn_marked_bytes}}."""
    return _unicast_table(text, ("wred_drop_pkts", "wred_drop_bytes", "ecn_marked_pkts", "ecn_marked_bytes"))


def parse_pfc(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {prio: {"rx": n, "tx": n}} from the Rx and Tx tables of ``show pfc counters``."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    direction = None
    for line in text.splitlines():
        s = line.split()
        if len(s) >= 2 and s[0] == "Port" and s[1] in ("Rx", "Tx"):
            direction = s[1].lower()
            continue
        if direction is None or len(s) != 9 or set(line.strip()) <= set("- "):
            continue
        for prio, cell in enumerate(s[1:]):
            v = num(cell)
            if v is not None:
                out.setdefault(s[0], {}).setdefault(str(prio), {})[direction] = v
    return out


def pfcwd_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, qs in parse_pfcwd(text).items():
        for q, d in qs.items():
            lbl = label("prio", q)
            out.append(Sample(device, port, "pfcwd_storm_detected", lbl, int(d["detected"]), "counter64"))
            out.append(Sample(device, port, "pfcwd_storm_restored", lbl, int(d["restored"]), "counter64"))
            out.append(Sample(device, port, "pfcwd_tx_drop", lbl, int(d["tx_drop"]), "counter64"))
            out.append(Sample(device, port, "pfcwd_status", lbl, str(d["status"]), "state"))
    return out


def queue_samples(device: str, text: str) -> list[Sample]:
    out: list[Sample] = []
    names = {"pkts": "tc_tx_pkts", "bytes": "tc_tx_bytes", "drop_pkts": "tc_tx_discard"}
    for port, qs in parse_queue_counters(text).items():
        for q, d in qs.items():
            out.extend(Sample(device, port, metric, label("tc", q), d[key], "counter64")
                       for key, metric in names.items() if key in d)
    return out


def ecn_samples(device: str, text: str) -> list[Sample]:
    """ECN marks from ``show queue wredcounters`` (WRED drops come from SNMP on SONiC)."""
    return [Sample(device, port, "ecn_marked", label("tc", q), d["ecn_marked_pkts"], "counter64")
            for port, qs in parse_wred(text).items() for q, d in qs.items() if "ecn_marked_pkts" in d]


_WM_COLUMN = re.compile(r"^(UC|MC|ALL|PG)(\d+)$")


def parse_watermark(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """``watermarkstat`` tables -> {kind: {port: {index: bytes}}}, kind ``UC``/``MC``/``ALL``/``PG``.

    One table per ASIC namespace (a title line, ``Port UC0 UC1 ...`` / ``Port PG0 ...``, a rule, rows);
    the values are bytes (the SAI ``*_WATERMARK_BYTES`` statistics); ``N/A`` (not polled) is skipped."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    cols: list[tuple[str, str] | None] = []
    for line in text.splitlines():
        row = line.split()
        if not row or set(line.strip()) <= set("- "):
            continue
        if row[0] == "Port" and len(row) > 1:
            found = [_WM_COLUMN.match(c) for c in row[1:]]
            cols = [(m.group(1), m.group(2)) if m else None for m in found]
            continue
        if len(row) != len(cols) + 1 or not cols:
            continue
        for col, cell in zip(cols, row[1:], strict=True):
            v = num(cell)
            if col is not None and v is not None:
                out.setdefault(col[0], {}).setdefault(row[0], {})[col[1]] = v
    return out


def _wm_samples(device: str, text: str, kind: str, metric: str, name: str) -> list[Sample]:
    return [Sample(device, port, metric, label(name, i), v, "gauge")
            for port, vals in parse_watermark(text).get(kind, {}).items() for i, v in vals.items()]


def queue_wm_samples(device: str, text: str) -> list[Sample]:
    """``show queue watermark unicast``: peak egress occupancy per unicast queue (bytes)."""
    return _wm_samples(device, text, "UC", "queue_watermark_bytes", "tc")


def pg_shared_wm_samples(device: str, text: str) -> list[Sample]:
    """``show priority-group watermark shared``: peak shared-pool use per ingress PG (bytes)."""
    return _wm_samples(device, text, "PG", "pg_shared_watermark_bytes", "prio")


def pg_headroom_wm_samples(device: str, text: str) -> list[Sample]:
    """``show priority-group watermark headroom``: peak headroom (xoff room) use per ingress PG (bytes)."""
    return _wm_samples(device, text, "PG", "pg_headroom_watermark_bytes", "prio")


PARSERS: dict[str, Callable[[str], Any]] = {
    "sonic_pfcwd": parse_pfcwd,
    "sonic_queue": parse_queue_counters,
    "sonic_wred": parse_wred,
    "sonic_pfc": parse_pfc,
    "sonic_queue_wm": parse_watermark,
    "sonic_pg_shared_wm": parse_watermark,
    "sonic_pg_headroom_wm": parse_watermark,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
