"""Cisco NX-OS (Nexus 9000) queuing show commands, one command per device for every interface:

- ``show queuing interface``: per interface an ``Egress Queuing for IF [System]`` block (per QoS group a
  ``| Tx Pkts | unicast | multicast |`` box), then ``Ingress Queuing for IF`` with the pause-buffer table,
  per-port ingress drops and the ``PFC Statistics`` table per CoS.
- ``show queuing pfc-queue detail``: per interface ``IF Interface PFC watchdog: [Enabled]`` and per no-drop
  QoS group a ``| QOS GROUP n [state] PFC [YES] PFC-COS [c]`` box of watchdog counters.

Cisco's NX-API schema (Nexus 9000 Command Reference, Show Commands 9.3(x), chapter Q) makes the interface
optional in both (``show queuing [interface [<if_list>]]``, ``show queuing pfc-queue [interface <if_list>]
[detail]``) and returns one row per interface; the text layout is held to the published captures in
``tests/telemetry/fixtures/nxos_*/SOURCE``. A trimmed excerpt of one interface (``| grep``) may lack the
``Egress Queuing for`` line: rows before the first interface header belong to the first interface named.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import LabelSet, Sample, label
from fabriccfg.telemetry.parsers._table import num

_GROUP = re.compile(r"QOS GROUP (\d+)")
_PFC_ROW = re.compile(r"^(?P<cos>\d)\s+(?:\d+|-)\s+[A-Za-z]+\s*(?P<tx>[\d,]+)\s+[A-Za-z]+\s*(?P<rx>[\d,]+)$")
"""A PFC table row. Columns are fixed-width (7, 10, 10, 20, 10, 20 in the FX2 capture): a 20-digit count
touches the state word before it, so the row is matched, not split on blanks."""
_WD_GROUP = re.compile(r"QOS GROUP (\d+)(?: \[(?P<state>[^\]]+)\])?.*PFC-COS \[(\d+)\]")

QUEUE_ROWS = {"Tx Pkts": "tc_tx_pkts", "Tx Byts": "tc_tx_bytes", "WRED/AFD & Tail Drop Pkts": "tc_tx_discard",
              "ECN Marked Pkts": "ecn_marked", "WD & Tail Drop Pkts": "tc_wd_tail_drop"}
"""Egress rows -> metrics. 'Q Depth Byts' is the queue's current depth, not a peak: not a watermark."""


def _first_port(lines: list[str], heads: tuple[str, ...], tail: str = "") -> str | None:
    for line in lines:
        s = line.strip()
        if s.startswith(heads) and (not tail or tail in s):
            return _port_of(s, heads, tail)
    return None


def _port_of(s: str, heads: tuple[str, ...], tail: str) -> str | None:
    """The interface of a header line: after ``X Queuing for`` or before `` Interface PFC watchdog``."""
    if tail:
        return s.split(tail, 1)[0].strip() or None
    for h in heads:
        if s.startswith(h):
            rest = s[len(h):].split()
            return rest[0] if rest else None
    return None


_Q_HEADS = ("Egress Queuing for ", "Ingress Queuing for ")
_WD_TAIL = " Interface PFC watchdog:"


def parse_queuing(text: str) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """port -> {"queues": {qos group: {row name: unicast value}}, "pfc": {cos: {"tx", "rx"}}}.

    Plain string tests per line (no regex on the hot path): a 64-port reply is ~8,500 lines."""
    out: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    lines = text.splitlines()
    port = _first_port(lines, _Q_HEADS)
    entry = out.setdefault(port, {"queues": {}, "pfc": {}}) if port else None
    group: str | None = None
    in_pfc = False
    for line in lines:
        s = line.strip()
        if not s:
            continue
        head = s[0]
        if head == "|" and entry is not None:
            if "QOS GROUP" in s:
                m = _GROUP.search(s)
                group = m.group(1) if m else None
                continue
            parts = s.split("|")
            if group is not None and len(parts) >= 4:
                cell = parts[2].strip()
                v = int(cell) if cell.isdigit() else num(cell)
                if v is not None:
                    entry["queues"].setdefault(group, {})[parts[1].strip()] = v
            continue
        if head in "+-=":
            continue
        if s.startswith(_Q_HEADS):
            port, group, in_pfc = _port_of(s, _Q_HEADS, ""), None, False
            entry = out.setdefault(port, {"queues": {}, "pfc": {}}) if port else None
            continue
        if entry is None:
            continue
        if in_pfc:
            if m := _PFC_ROW.match(s):
                tx, rx = num(m.group("tx")), num(m.group("rx"))
                if tx is not None and rx is not None:
                    entry["pfc"][m.group("cos")] = {"tx": tx, "rx": rx}
            continue
        if s.startswith("PFC_COS") and "QOS_Group" in s:
            in_pfc = True
    return {p: e for p, e in out.items() if e["queues"] or e["pfc"]}


def parse_pfc_queue(text: str) -> dict[str, dict[str, dict[str, int | str]]]:
    """port -> {pfc cos: {"state", "Shutdown", "Restored", "Total pkts dropped", ...}}."""
    out: dict[str, dict[str, dict[str, int | str]]] = {}
    lines = text.splitlines()
    port = _first_port(lines, ("",), _WD_TAIL)
    cos: str | None = None
    for line in lines:
        s = line.strip()
        if not s or s[0] in "+-":
            continue
        if _WD_TAIL in s:
            port, cos = _port_of(s, ("",), _WD_TAIL), None
            continue
        if port is None or s[0] != "|":
            continue
        if "QOS GROUP" in s:
            m = _WD_GROUP.search(s)
            if m:
                cos = m.group(3)
                out.setdefault(port, {})[cos] = {"state": m.group("state") or ""}
            continue
        parts = s.split("|")
        if cos is not None and len(parts) >= 3:
            v = num(parts[2])
            if v is not None:
                out[port][cos][parts[1].strip()] = v
    return out


def queuing_samples(device: str, text: str) -> list[Sample]:
    out = []
    tc_labels: dict[str, LabelSet] = {}
    for port, data in parse_queuing(text).items():
        for group, rows in data["queues"].items():
            lbl = tc_labels.get(group) or tc_labels.setdefault(group, label("tc", group))
            for name, metric in QUEUE_ROWS.items():
                if name in rows:
                    out.append(Sample(device, port, metric, lbl, rows[name], "counter64"))
        for cos, d in data["pfc"].items():
            lbl = label("prio", cos)
            out.append(Sample(device, port, "pfc_rx_pause", lbl, d["rx"], "counter64"))
            out.append(Sample(device, port, "pfc_tx_pause", lbl, d["tx"], "counter64"))
    return out


def pfc_queue_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, groups in parse_pfc_queue(text).items():
        for cos, d in groups.items():
            lbl = label("prio", cos)
            for key, metric in (("Shutdown", "pfcwd_storm_detected"), ("Restored", "pfcwd_storm_restored"),
                                ("Total pkts dropped", "pfcwd_tx_drop")):
                if isinstance(d.get(key), int):
                    out.append(Sample(device, port, metric, lbl, int(d[key]), "counter64"))
            status = "stormed" if str(d.get("state", "")).lower() == "shutdown" else "operational"
            out.append(Sample(device, port, "pfcwd_status", lbl, status, "state"))
    return out


PARSERS: dict[str, Callable[[str], Any]] = {
    "nxos_queuing": parse_queuing,
    "nxos_pfc_queue": parse_pfc_queue,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
