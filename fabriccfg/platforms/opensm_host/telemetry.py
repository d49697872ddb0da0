"""Telemetry of the opensm_host platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.telemetry import commands as _tc
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

TELEMETRY = _TelemetrySpec(cli=(_tc.IBNETDISCOVER, _tc.IBQUERYERRORS, _tc.SMINFO, _tc.SM_APPLIED,
                              _tc.PERFQUERY_LOCAL,
                              *_tc.services("opensm", "opensmd", "sharp_am")))
