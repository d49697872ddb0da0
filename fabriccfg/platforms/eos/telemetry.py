"""Telemetry of the eos platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.eos import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show as _show
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

SHOW = (
    _show("eos-ecn", "show interfaces counters ecn", _parse.ecn_samples),
    _show("eos-pfc", "show priority-flow-control counters", _parse.pfc_samples),
    _show("eos-pfcwd", "show priority-flow-control counters watchdog", _parse.watchdog_samples),
)
"""ECN marks, per-priority PFC and PFC-watchdog counters: what the SNMP tables lack."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.ARISTA_QUEUE, _tt.LLDP), cli=SHOW)
