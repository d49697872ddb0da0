"""Cisco NX-OS: ``show queuing interface PORT`` (egress queues per QOS group, ECN marks, PFC per
CoS) and ``show queuing pfc-queue interface PORT detail`` (PFC watchdog)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._table import num

_GROUP = re.compile(r"QOS GROUP (\d+)")
_ROW = re.compile(r"^\s*\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<uc>[\d,]+)\s*\|\s*(?P<mc>[\d,]+)\s*\|")
_PFC = re.compile(r"^\s*(?P<cos>\d)\s+(?P<group>\d+)\s+\S+\s+(?P<tx>\d+)\s+\S+\s+(?P<rx>\d+)\s*$")
_WD_GROUP = re.compile(r"QOS GROUP (\d+).*PFC-COS \[(\d+)\]")
_WD_ROW = re.compile(r"^\|\s*(?P<name>[^|]+?)\s*\|\s*(?P<v>[\d,]+)\s*\|")
_STATE = re.compile(r"QOS GROUP \d+ \[(?P<state>[^\]]+)\]")

QUEUE_ROWS = {"Tx Pkts": "tc_tx_pkts", "Tx Byts": "tc_tx_bytes", "WRED/AFD & Tail Drop Pkts": "tc_tx_discard",
              "ECN Marked Pkts": "ecn_marked", "WD & Tail Drop Pkts": "tc_wd_tail_drop"}


def parse_queuing(text: str) -> dict[str, object]:
    """{"queues": {group: {row name: unicast value}}, "pfc": {cos: {"tx", "rx"}}}."""
    queues: dict[str, dict[str, int]] = {}
    pfc: dict[str, dict[str, int]] = {}
    group: str | None = None
    for line in text.splitlines():
        m = _GROUP.search(line)
        if m:
            group = m.group(1)
            queues.setdefault(group, {})
            continue
        r = _ROW.match(line)
        if r and group is not None:
            v = num(r.group("uc"))
            if v is not None:
                queues[group][r.group("name")] = v
            continue
        p = _PFC.match(line)
        if p:
            pfc[p.group("cos")] = {"tx": int(p.group("tx")), "rx": int(p.group("rx"))}
    return {"queues": queues, "pfc": pfc}


def parse_pfc_queue(text: str) -> dict[str, dict[str, int | str]]:
    """cos -> {state, Shutdown, Restored, Total pkts dropped, ...}."""
    out: dict[str, dict[str, int | str]] = {}
    cos: str | None = None
    for line in text.splitlines():
        m = _WD_GROUP.search(line)
        if m:
            cos = m.group(2)
            st = _STATE.search(line)
            out[cos] = {"state": st.group("state") if st else ""}
            continue
        r = _WD_ROW.match(line.strip())
        if r and cos is not None:
            v = num(r.group("v"))
            if v is not None:
                out[cos][r.group("name")] = v
    return out


def queuing_samples(device: str, port: str | None, text: str) -> list[Sample]:
    data = parse_queuing(text)
    out = []
    queues = data["queues"]
    assert isinstance(queues, dict)
    for group, rows in queues.items():
        for name, metric in QUEUE_ROWS.items():
            if name in rows:
                out.append(Sample(device, port, metric, labels(tc=group), rows[name], "counter64"))
    pfc = data["pfc"]
    assert isinstance(pfc, dict)
    for cos, d in pfc.items():
        out.append(Sample(device, port, "pfc_rx_pause", labels(prio=cos), d["rx"], "counter64"))
        out.append(Sample(device, port, "pfc_tx_pause", labels(prio=cos), d["tx"], "counter64"))
    return out


def pfc_queue_samples(device: str, port: str | None, text: str) -> list[Sample]:
    out = []
    for cos, d in parse_pfc_queue(text).items():
        lbl = labels(prio=cos)
        for key, metric in (("Shutdown", "pfcwd_storm_detected"), ("Restored", "pfcwd_storm_restored"),
                            ("Total pkts dropped", "pfcwd_tx_drop")):
            if isinstance(d.get(key), int):
                out.append(Sample(device, port, metric, lbl, int(d[key]), "counter64"))
        state = str(d.get("state", "")).lower()
        status = "stormed" if state == "shutdown" else "operational"
        out.append(Sample(device, port, "pfcwd_status", lbl, status, "state"))
    return out


PARSERS: dict[str, Callable[[str], Any]] = {
    "nxos_queuing": parse_queuing,
    "nxos_pfc_queue": parse_pfc_queue,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
