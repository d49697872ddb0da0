"""Show-command renderers of the eos mock: what the real NOS prints, from the traffic model (the
parsers in ``parsers.py`` read it back; tests hold both to the published captures)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from fabriccfg.mock.cli_telemetry import (
    eth_counters,
    lossless_tc,
    ports_of,
    wd_state,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel


# ----- EOS
# The ``| json`` forms the collector runs (keys from Arista's ANTA test vectors; see
# tests/telemetry/fixtures/eos_*/SOURCE). EOS prints JSON indented by four spaces.
def _eos_json(doc: dict[str, object]) -> tuple[str, int]:
    return json.dumps(doc, indent=4) + "\n", 0


def eos_ecn_counters(model: TrafficModel, device: str, port: str | None, t: float) -> tuple[str, int]:
    """``show qos interfaces [IF] ecn counters queue | json``: ECN-marked packets per tx-queue as strings;
    ``-`` where ECN counting is not configured (the templates count on the lossless queue only)."""
    ports = ports_of(model, device, port)
    if ports is None:
        return f"% Invalid input (at token 3: '{port}')\n", 1
    p = lossless_tc(model)
    intfs: dict[str, object] = {}
    for name in ports:
        c = eth_counters(model, device, name, t)
        counts = {str(q): str(c[f"ecn_marked.{q}"]) if q == p else "-" for q in range(8)}
        intfs[name] = {"queueCounters": counts}
    return _eos_json({"intfQueueCounters": intfs})


def eos_pfc_counters(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show priority-flow-control counters | json``: PFC frames received/sent per port (all priorities)."""
    intfs: dict[str, object] = {}
    for name in model.ports(device):
        c = eth_counters(model, device, name, t)
        intfs[name] = {"rxFrames": c["pfc_indications"], "txFrames": c["pfc_requests"]}  # all-priority sums
    return _eos_json({"interfaceCounters": intfs})


def eos_pfc_watchdog(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show priority-flow-control counters watchdog | json``: stuck/recovery counts per tx-queue, only
    for interfaces the watchdog has fired on (EOS answers ``{"interfaces": {}}`` before any event)."""
    p = lossless_tc(model)
    intfs: dict[str, object] = {}
    for name in model.ports(device):
        det, res, _storm = wd_state(eth_counters(model, device, name, t), p)
        if det:
            intfs[name] = {"txQueues": {str(p): {"stuckCount": det, "recoveryCount": res}}}
    return _eos_json({"interfaces": intfs})


def eos_queue_monitor_length(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show queue-monitor length [limit N seconds] | json`` (LANZ): polling records ("P"), one per egress
    queue and per 10 s polling period of the last 30 s that the traffic model gives a watermark,
    ``queueLength`` = that period's watermark. Answers as the only published reply does (Arista's goeapi
    fixture, platform 'Sand', lengths in bytes), although this mock's ``show version`` names a 7060X5: no
    published Strata reply says how its segments are reported."""
    entries: list[dict[str, object]] = []
    ports = model.ports(device)
    for back in (0.0, 10.0, 20.0):
        at = round(t - back, 6)
        for name in ports:
            feeders = [p for p in ports if p != name][:4] or [name]
            for key, v in sorted(model.watermarks(device, name, at).items()):
                metric, _, tc = key.partition(".")
                if metric != "queue_watermark_bytes" or v <= 0:
                    continue
                entries.append({
                    "entryTimeUsecs": int(at * 1_000_000), "globalProtectionModeEnabled": True,
                    "entryTime": at, "ingressPortSet": feeders, "interface": name, "duration": 1,
                    "durationUsecs": 1000000, "entryType": "P", "queueLength": v, "trafficClass": int(tc),
                })
    return _eos_json({"reportTime": round(t, 6), "bytesPerTxmpSegment": 512, "globalHitCount": 0,
                      "lanzEnabled": True, "platformName": "Sand", "entryList": entries})
