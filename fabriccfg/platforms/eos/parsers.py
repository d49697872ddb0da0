"""Arista EOS show commands in their ``| json`` form, one command per device for all interfaces:

- ``show qos interfaces ecn counters queue | json``:
  ``{"intfQueueCounters": {IF: {"queueCounters": {TXQ: "N" | "-"}}}}``; the counts are strings and
  ``-`` means ECN counting is not configured on that tx-queue (``random-detect ecn count``).
- ``show priority-flow-control counters | json``:
  ``{"interfaceCounters": {IF: {"rxFrames": N, "txFrames": N}}}``: PFC frames per port, all priorities.
- ``show priority-flow-control counters watchdog | json``:
  ``{"interfaces": {IF: {"txQueues": {TXQ: {"stuckCount": N, "recoveryCount": N}}}}}``; EOS lists an
  interface (and a queue) only once the watchdog has fired on it.
- ``show queue-monitor length limit N seconds | json`` (LANZ): ``{"platformName", "bytesPerTxmpSegment",
  "entryList": [{"interface", "trafficClass", "queueLength", "entryType", "entryTime", ...}]}``: one entry
  per congestion record (P polling, S/U/E start/update/end) in the last N seconds; the highest
  ``queueLength`` per interface and traffic class is that queue's watermark over the window.

The first two are pinned by Arista's own test vectors (ANTA, ``tests/units/anta_tests/test_interfaces.py``),
LANZ by Arista's goeapi fixture (a 'Sand' platform); the watchdog keys only by public code that reads them
(see ``tests/telemetry/fixtures/eos_*/SOURCE``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.model import Sample, label


def _reply(text: str) -> Any:
    """An EOS JSON reply decoded; None for an empty reply or an EOS error line (``% ...``): the collector
    reports that line. Anything else that is not JSON is a one-line ValueError."""
    body = text.strip()
    if not body or body.startswith("%"):
        return None
    try:
        return json.loads(body)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not EOS JSON (line {exc.lineno} col {exc.colno}: {exc.msg})") from None


def _document(text: str, top: str) -> dict[str, Any]:
    """The ``top`` member of an EOS JSON reply; {} for an error line (:func:`_reply`)."""
    doc = _reply(text)
    if doc is None:
        return {}
    if not isinstance(doc, dict) or not isinstance(doc.get(top, {}), dict):
        raise ValueError(f"EOS JSON without a {top!r} object")
    value: dict[str, Any] = doc.get(top, {})
    return value


def _count(v: object) -> int | None:
    """A counter as EOS prints it in JSON: an integer, or a decimal string ('-' = not counted)."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and v.strip().isdigit():
        return int(v)
    return None


def parse_ecn(text: str) -> dict[str, dict[str, int]]:
    """port -> {tx-queue: ECN-marked packets}; queues showing ``-`` (not counted) are left out."""
    out: dict[str, dict[str, int]] = {}
    for port, d in _document(text, "intfQueueCounters").items():
        queues = d.get("queueCounters", {}) if isinstance(d, dict) else {}
        if not isinstance(queues, dict):
            continue
        counted = {str(q): n for q, v in queues.items() if (n := _count(v)) is not None}
        if counted:
            out[str(port)] = counted
    return out


def parse_pfc(text: str) -> dict[str, dict[str, int]]:
    """port -> {"rx": PFC frames received, "tx": PFC frames sent} (all priorities)."""
    out: dict[str, dict[str, int]] = {}
    for port, d in _document(text, "interfaceCounters").items():
        if not isinstance(d, dict):
            continue
        rx, tx = _count(d.get("rxFrames")), _count(d.get("txFrames"))
        if rx is not None and tx is not None:
            out[str(port)] = {"rx": rx, "tx": tx}
    return out


def parse_watchdog(text: str) -> dict[str, dict[str, dict[str, int]]]:
    """port -> {tx-queue: {"stuck", "recovered"}} for the ports/queues the watchdog has fired on."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for port, d in _document(text, "interfaces").items():
        queues = d.get("txQueues", {}) if isinstance(d, dict) else {}
        if not isinstance(queues, dict):
            continue
        for q, qd in queues.items():
            if not isinstance(qd, dict):
                continue
            stuck, rec = _count(qd.get("stuckCount", 0)), _count(qd.get("recoveryCount", 0))
            if stuck is not None and rec is not None:
                out.setdefault(str(port), {})[str(q)] = {"stuck": stuck, "recovered": rec}
    return out


LANZ_WINDOW_S = 30
"""The LANZ window the collector asks for (``limit 30 seconds``): one ``watch`` round at its default
period."""
_BYTES_PLATFORMS = frozenset({"Sand"})
"""LANZ platforms whose queueLength is in bytes: Arista's goeapi capture of a 'Sand' (Jericho) switch
prints 'Queue Length (bytes)'. Elsewhere LANZ counts segments: there the reply's own
``bytesPerTxmpSegment`` is taken as the segment size (UNVERIFIED: no published non-Sand reply was found)."""


def parse_lanz(text: str) -> dict[str, dict[str, int]]:
    """port -> {traffic class: peak queue length in bytes over the entries of the reply}."""
    doc = _reply(text)
    if doc is None:
        return {}
    if not isinstance(doc, dict) or not isinstance(doc.get("entryList", []), list):
        raise ValueError("EOS JSON without an 'entryList' list")
    if doc.get("platformName") in _BYTES_PLATFORMS:
        unit = 1
    else:
        seg = _count(doc.get("bytesPerTxmpSegment"))
        if not seg:
            return {}  # segments of unknown size: no honest byte value
        unit = seg
    out: dict[str, dict[str, int]] = {}
    for e in doc.get("entryList", []):
        if not isinstance(e, dict):
            continue
        port, tc, length = e.get("interface"), _count(e.get("trafficClass")), _count(e.get("queueLength"))
        if not isinstance(port, str) or tc is None or length is None:
            continue
        q = out.setdefault(port, {})
        q[str(tc)] = max(q.get(str(tc), 0), length * unit)
    return out


def lanz_samples(device: str, text: str) -> list[Sample]:
    """``queue_watermark_bytes{tc}`` (gauge): LANZ reports egress queues only, so no priority-group
    watermarks on EOS; a queue without a LANZ record in the window has no sample (below the LANZ
    threshold, not zero)."""
    return [Sample(device, port, "queue_watermark_bytes", label("tc", tc), v, "gauge")
            for port, tcs in parse_lanz(text).items() for tc, v in tcs.items()]


def ecn_samples(device: str, text: str) -> list[Sample]:
    return [Sample(device, port, "ecn_marked", label("tc", tc), v, "counter64")
            for port, tcs in parse_ecn(text).items() for tc, v in tcs.items()]


def pfc_samples(device: str, text: str) -> list[Sample]:
    """Port totals, no ``prio`` label: a check scoped to the lossless priority reads them as that
    priority's (the RoCE design has one no-drop priority; the engine matches unlabelled samples)."""
    out = []
    for port, d in parse_pfc(text).items():
        out.append(Sample(device, port, "pfc_rx_pause", (), d["rx"], "counter64"))
        out.append(Sample(device, port, "pfc_tx_pause", (), d["tx"], "counter64"))
    return out


def watchdog_samples(device: str, text: str) -> list[Sample]:
    """Tx-queue = priority on EOS (the RoCE templates map priority N to tx-queue N)."""
    out = []
    for port, prios in parse_watchdog(text).items():
        for prio, d in prios.items():
            lbl = label("prio", prio)
            out.append(Sample(device, port, "pfcwd_storm_detected", lbl, d["stuck"], "counter64"))
            out.append(Sample(device, port, "pfcwd_storm_restored", lbl, d["recovered"], "counter64"))
            state = "stormed" if d["stuck"] > d["recovered"] else "operational"
            out.append(Sample(device, port, "pfcwd_status", lbl, state, "state"))
    return out


PARSERS: dict[str, Callable[[str], Any]] = {
    "eos_ecn": parse_ecn,
    "eos_pfc": parse_pfc,
    "eos_pfcwd": parse_watchdog,
    "eos_lanz": parse_lanz,
}
"""Tool name (the fixture folder under tests/telemetry/fixtures) -> structured parser."""
