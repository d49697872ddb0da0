"""Telemetry of the cumulus_nvue platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.cumulus_nvue import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show_port as _show_port
from fabriccfg.telemetry.model import Sample as _Sample
from fabriccfg.telemetry.spec import CliCommand as _CliCommand
from fabriccfg.telemetry.spec import CliContext as _CliContext
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec


def _roce_counters(text: str, ctx: _CliContext) -> list[_Sample]:
    """The RoCE counters do not name the lossless class: the parser needs the fabric's priority. PFC rows
    too: Cumulus' snmpd serves no PFC MIB, so this command is where the pause counters come from."""
    return _parse.roce_samples(ctx.device, ctx.port, text, ctx.roce_prio, with_pfc=True)


SHOW = (
    _CliCommand("nvue-roce", "nv show interface {port} qos roce counters", _roce_counters, per="port"),
    _show_port("nvue-pfcwd", "nv show interface {port} qos pfc-watchdog", _parse.watchdog_samples),
    _show_port("nvue-buffer", "nv show interface {port} qos buffer", _parse.buffer_samples),
)
"""ECN marks (RoCE counters), PFC-watchdog counters and buffer watermarks ("Max Usage" of the egress
traffic classes and ingress priority groups; NVUE reference, Show Commands / QoS, Cumulus Linux 5.4+)
per port: what the SNMP tables lack."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.LLDP), cli=SHOW)
"""Cumulus' snmpd serves IF-MIB and LLDP-MIB (lldpd AgentX) but no PFC or queue MIB (its "Supported MIBs"
page, telemetry/oids.py): PFC, ECN and watchdog counters come from the NVUE show commands."""
