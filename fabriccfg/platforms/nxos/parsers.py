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

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._table import num

_IFACE = re.compile(r"^\s*(?:Egress|Ingress) Queuing for (?P<port>\S+)")
_GROUP = re.compile(r"QOS GROUP (\d+)")
_ROW = re.compile(r"^\s*\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<uc>[\d,]+)\s*\|\s*(?P<mc>[\d,]+)\s*\|")
_PFC_HEAD = re.compile(r"^\s*PFC_COS\s+QOS_Group\b")
_PFC = re.compile(r"^\s*(?P<cos>\d)\s+(?P<group>\d+|-)\s+\S+\s+(?P<tx>[\d,]+)\s+\S+\s+(?P<rx>[\d,]+)\s*$")
_WD_IFACE = re.compile(r"^\s*(?P<port>\S+) Interface PFC watchdog:")
_WD_GROUP = re.compile(r"QOS GROUP (\d+)(?: \[(?P<state>[^\]]+)\])?.*PFC-COS \[(\d+)\]")
_WD_ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<v>[\d,]+)\s*\|")

QUEUE_ROWS = {"Tx Pkts": "tc_tx_pkts", "Tx Byts": "tc_tx_bytes", "WRED/AFD & Tail Drop Pkts": "tc_tx_discard",
              "ECN Marked Pkts": "ecn_marked", "WD & Tail Drop Pkts": "tc_wd_tail_drop"}
"""Egress rows -> metrics. 'Q Depth Byts' is the queue's current depth, not a peak: not a watermark."""


def _first_port(text: str, pattern: re.Pattern[str]) -> str | None:
    for line in text.splitlines():
        if m := pattern.match(line):
            return m.group("port")
    return None


def parse_queuing(text: str) -> dict[str, dict[str, dict[str, dict[str, int]]]]:
    """port -> {"queues": {qos group: {row name: unicast value}}, "pfc": {cos: {"tx", "rx"}}}."""
    out: dict[str, dict[str, dict[str, dict[str, int]]]] = {}
    port = _first_port(text, _IFACE)
    group: str | None = None
    in_pfc = False
    for line in text.splitlines():
        if m := _IFACE.match(line):
            port, group, in_pfc = m.group("port"), None, False
            continue
        if port is None:
            continue
        entry = out.setdefault(port, {"queues": {}, "pfc": {}})
        if m := _GROUP.search(line):
            group = m.group(1)
            continue
        if _PFC_HEAD.match(line):
            in_pfc = True
            continue
        if (r := _ROW.match(line)) and group is not None:
            v = num(r.group("uc"))
            if v is not None:
                entry["queues"].setdefault(group, {})[r.group("name")] = v
            continue
        if in_pfc and (p := _PFC.match(line)):
            tx, rx = num(p.group("tx")), num(p.group("rx"))
            if tx is not None and rx is not None:
                entry["pfc"][p.group("cos")] = {"tx": tx, "rx": rx}
    return {p: e for p, e in out.items() if e["queues"] or e["pfc"]}


def parse_pfc_queue(text: str) -> dict[str, dict[str, dict[str, int | str]]]:
    """port -> {pfc cos: {"state", "Shutdown", "Restored", "Total pkts dropped", ...}}."""
    out: dict[str, dict[str, dict[str, int | str]]] = {}
    port = _first_port(text, _WD_IFACE)
    cos: str | None = None
    for line in text.splitlines():
        if m := _WD_IFACE.match(line):
            port, cos = m.group("port"), None
            continue
        if port is None:
            continue
        if m := _WD_GROUP.search(line):
            cos = m.group(3)
            out.setdefault(port, {})[cos] = {"state": m.group("state") or ""}
            continue
        r = _WD_ROW.match(line.strip())
        if r and cos is not None:
            v = num(r.group("v"))
            if v is not None:
                out[port][cos][r.group("name")] = v
    return out


def queuing_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, data in parse_queuing(text).items():
        for group, rows in data["queues"].items():
            for name, metric in QUEUE_ROWS.items():
                if name in rows:
                    out.append(Sample(device, port, metric, labels(tc=group), rows[name], "counter64"))
        for cos, d in data["pfc"].items():
            out.append(Sample(device, port, "pfc_rx_pause", labels(prio=cos), d["rx"], "counter64"))
            out.append(Sample(device, port, "pfc_tx_pause", labels(prio=cos), d["tx"], "counter64"))
    return out


def pfc_queue_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, groups in parse_pfc_queue(text).items():
        for cos, d in groups.items():
            lbl = labels(prio=cos)
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
