"""Arista EOS show commands: ``show interfaces counters ecn``, ``show priority-flow-control counters``
and ``show priority-flow-control counters watchdog``. Port names come abbreviated (``Et1/1``); they
are expanded to the inventory's ``Ethernet1/1``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._table import data_lines, num

_ABBR = re.compile(r"^Et(?=\d)")
_TXQ = re.compile(r"^TxQ(\d+)$", re.IGNORECASE)


def port_name(text: str) -> str:
    return _ABBR.sub("Ethernet", text)


def parse_ecn(text: str) -> dict[str, dict[str, int]]:
    """port -> {tc: ECN-marked packets}."""
    out: dict[str, dict[str, int]] = {}
    for row in data_lines(text):
        if len(row) >= 3 and (m := _TXQ.match(row[1])) and (v := num(row[-1])) is not None:
            out.setdefault(port_name(row[0]), {})[m.group(1)] = v
    return out


def parse_pfc(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {prio: {"rx": n, "tx": n}}."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    port: str | None = None
    for line in text.splitlines():
        s = line.split()
        if not s:
            continue
        if len(s) == 1 and not s[0].isdigit():
            port = port_name(s[0])
            out.setdefault(port, {})
        elif port is not None and len(s) == 3 and s[0].isdigit():
            rx, tx = num(s[1]), num(s[2])
            if rx is not None and tx is not None:
                out[port][s[0]] = {"rx": rx, "tx": tx}
    return out


def parse_watchdog(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {prio: {"stuck", "recovered", "dropped_current", "dropped_total"}}."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for row in data_lines(text):
        if len(row) >= 6 and (m := _TXQ.match(row[1])):
            vals = [num(x) for x in row[2:6]]
            if all(v is not None for v in vals):
                stuck, rec, cur, agg = (int(v or 0) for v in vals)
                out.setdefault(port_name(row[0]), {})[m.group(1)] = {
                    "stuck": stuck, "recovered": rec, "dropped_current": cur, "dropped_total": agg}
    return out


def ecn_samples(device: str, text: str) -> list[Sample]:
    return [Sample(device, port, "ecn_marked", labels(tc=tc), v, "counter64")
            for port, tcs in parse_ecn(text).items() for tc, v in tcs.items()]


def pfc_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, prios in parse_pfc(text).items():
        for prio, d in prios.items():
            out.append(Sample(device, port, "pfc_rx_pause", labels(prio=prio), d["rx"], "counter64"))
            out.append(Sample(device, port, "pfc_tx_pause", labels(prio=prio), d["tx"], "counter64"))
    return out


def watchdog_samples(device: str, text: str) -> list[Sample]:
    out = []
    for port, prios in parse_watchdog(text).items():
        for prio, d in prios.items():
            lbl = labels(prio=prio)
            out.append(Sample(device, port, "pfcwd_storm_detected", lbl, d["stuck"], "counter64"))
            out.append(Sample(device, port, "pfcwd_storm_restored", lbl, d["recovered"], "counter64"))
            out.append(Sample(device, port, "pfcwd_tx_drop", lbl, d["dropped_total"], "counter64"))
            state = "stormed" if d["stuck"] > d["recovered"] else "operational"
            out.append(Sample(device, port, "pfcwd_status", lbl, state, "state"))
    return out


PARSERS: dict[str, Callable[[str], Any]] = {
    "eos_ecn": parse_ecn,
    "eos_pfc": parse_pfc,
    "eos_pfcwd": parse_watchdog,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
