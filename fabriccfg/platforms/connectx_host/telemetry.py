"""Telemetry of the connectx_host platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.telemetry import commands as _tc
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

TELEMETRY = _TelemetrySpec(cli=(*_tc.IB_FABRIC_TOOLS, _tc.ETHTOOL, _tc.PERFQUERY_LOCAL))
