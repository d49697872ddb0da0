"""Telemetry of the nxos platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.nxos import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show_port as _show_port
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

SHOW = (
    _show_port("nxos-queuing", "show queuing interface {port}", _parse.queuing_samples),
    _show_port("nxos-pfcwd", "show queuing pfc-queue interface {port} detail", _parse.pfc_queue_samples),
)
"""Per-queue ECN/drop counters and PFC-watchdog state per port."""
# The standard MIBs only; per-queue counters come from show commands.
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.LLDP), cli=SHOW)
