"""Telemetry of the cumulus_nvue platform (see the package docstring)."""

from __future__ import annotations

import dataclasses as _dc

from fabriccfg.platforms.cumulus_nvue import parsers as _parse
from fabriccfg.platforms.cumulus_nvue.render import CURRENT_RELEASE as _CURRENT
from fabriccfg.platforms.cumulus_nvue.render import cumulus_release as _release
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show_port as _show_port
from fabriccfg.telemetry.model import Sample as _Sample
from fabriccfg.telemetry.spec import CliCommand as _CliCommand
from fabriccfg.telemetry.spec import CliContext as _CliContext
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

ALL_INTERFACES_SINCE = (5, 14)
"""``nv show interface qos-roce-counters`` ("to show the counters for all interfaces", Cumulus Linux RoCE
page, 5.16) is listed among the new NVUE commands of Cumulus Linux 5.14 (What's New, 5.14)."""


def _all_interfaces(device: object) -> bool:
    """True when the switch's release (default: the newest documented) has the all-interfaces command."""
    return (_release(getattr(device, "os_release", None)) or _CURRENT) >= ALL_INTERFACES_SINCE


def _per_port(device: object) -> bool:
    return not _all_interfaces(device)


def _roce_counters(text: str, ctx: _CliContext) -> list[_Sample]:
    """The RoCE counters do not name the lossless class: the parser needs the fabric's priority. PFC rows
    too: Cumulus' snmpd serves no PFC MIB, so this command is where the pause counters come from."""
    return _parse.roce_samples(ctx.device, ctx.port, text, ctx.roce_prio, with_pfc=True)


def _roce_counters_all(text: str, ctx: _CliContext) -> list[_Sample]:
    return _parse.roce_samples_all(ctx.device, text, ctx.roce_prio, with_pfc=True)


SHOW = (
    # one command per switch on 5.14+; before that one per port, all ports in one shell line
    _CliCommand("nvue-roce", "nv show interface qos-roce-counters", _roce_counters_all, when=_all_interfaces),
    _CliCommand("nvue-roce", "nv show interface {port} qos roce counters", _roce_counters, per="port",
                batch=True, when=_per_port),
    # NVUE has no all-interfaces watchdog or buffer view (NVUE reference, QoS): per port, in one shell line
    _dc.replace(_show_port("nvue-pfcwd", "nv show interface {port} qos pfc-watchdog",
                           _parse.watchdog_samples), batch=True),
    _dc.replace(_show_port("nvue-buffer", "nv show interface {port} qos buffer", _parse.buffer_samples),
                batch=True),
)
"""ECN marks (RoCE counters), PFC-watchdog counters and buffer watermarks ("Max Usage" of the egress
traffic classes and ingress priority groups; NVUE reference, Show Commands / QoS, Cumulus Linux 5.4+):
what the SNMP tables lack. Cumulus' CLI is bash, so per-port commands run in one command line
(:mod:`fabriccfg.telemetry.batch`)."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.LLDP), cli=SHOW)
"""Cumulus' snmpd serves IF-MIB and LLDP-MIB (lldpd AgentX) but no PFC or queue MIB (its "Supported MIBs"
page, telemetry/oids.py): PFC, ECN and watchdog counters come from the NVUE show commands."""
