"""Telemetry of the mlnxos_ib platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.MLNX_IF_VPI))
