"""Telemetry of the unmanaged_ib platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

# No CLI and no SNMP: its ports are read in-band from the SM host (ibqueryerrors, ibnetdiscover).
TELEMETRY = _TelemetrySpec()
