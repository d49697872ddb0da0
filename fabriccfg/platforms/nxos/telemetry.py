"""Telemetry of the nxos platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.nxos import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show as _show
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

SHOW = (
    _show("nxos-queuing", "show queuing interface", _parse.queuing_samples),
    _show("nxos-pfcwd", "show queuing pfc-queue detail", _parse.pfc_queue_samples),
)
"""Per-queue ECN/drop counters, PFC per CoS and PFC-watchdog state: one command each for every interface
(Cisco's NX-API schema makes the interface optional; before, one command per port: 2 x 64 per leaf)."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.LLDP), cli=SHOW)
"""IF-MIB and LLDP-MIB over SNMP. The Nexus 9000 agent does not serve IEEE8021-PFC-MIB (absent from Cisco's
MIB support list, telemetry/oids.py); it serves CISCO-PFC-EXT-MIB per priority, but ``show queuing interface``
(needed anyway for the queues) already carries PFC per CoS, so polling both would report every PFC
counter twice."""
