"""Telemetry of the eos platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.eos import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show as _show
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

SHOW = (
    _show("eos-ecn", "show qos interfaces ecn counters queue | json", _parse.ecn_samples),
    _show("eos-pfc", "show priority-flow-control counters | json", _parse.pfc_samples),
    _show("eos-pfcwd", "show priority-flow-control counters watchdog | json", _parse.watchdog_samples),
    _show("eos-lanz", f"show queue-monitor length limit {_parse.LANZ_WINDOW_S} seconds | json",
          _parse.lanz_samples),
)
"""ECN marks per tx-queue, PFC frames per port, PFC-watchdog counters and LANZ queue-length watermarks (what
the SNMP tables lack), in the JSON form whose keys Arista's own test data pin down (ANTA, goeapi); one
command per device for all ports."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.ARISTA_QUEUE, _tt.LLDP), cli=SHOW)
