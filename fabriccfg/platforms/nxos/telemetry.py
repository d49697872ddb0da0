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
# The standard MIBs only; per-queue counters come from show commands.
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.LLDP), cli=SHOW)
