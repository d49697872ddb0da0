"""Telemetry of the sonic platform (see the package docstring)."""

from __future__ import annotations

from fabriccfg.platforms.sonic import parsers as _parse
from fabriccfg.telemetry import tables as _tt
from fabriccfg.telemetry.commands import show as _show
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec

SHOW = (
    _show("sonic-wred", "show queue wredcounters", _parse.ecn_samples),
    _show("sonic-queue", "show queue counters", _parse.queue_samples),
    _show("sonic-pfcwd", "show pfcwd stats", _parse.pfcwd_samples),
    _show("sonic-queue-wm", "show queue watermark unicast", _parse.queue_wm_samples),
    _show("sonic-pg-shared-wm", "show priority-group watermark shared", _parse.pg_shared_wm_samples),
    _show("sonic-pg-headroom-wm", "show priority-group watermark headroom", _parse.pg_headroom_wm_samples),
)
"""ECN marks, queue and PFC-watchdog counters, and the buffer watermarks (peak occupancy since the last
``sonic-clear ... watermark``; the persistent ones only clear at boot): what the SNMP tables lack.
Format and units: sonic-utilities doc/Command-Reference.md "Watermark Show commands"; bytes, the SAI
``*_WATERMARK_BYTES`` statistics the SONiC watermarks HLD names."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.CISCO_PFC_PRIO, _tt.CISCO_QOS_QUEUE, _tt.LLDP), cli=SHOW)
"""What sonic-snmpagent serves (IF-MIB, CISCO-PFC-EXT-MIB per priority, CISCO-SWITCH-QOS-MIB queues, LLDP-MIB;
telemetry/oids.py cites each); IEEE8021-PFC-MIB and MELLANOX-QOS-MIB are not implemented there."""
