"""A Linux host running OpenSM and, when SHARP is on, the SHARP aggregation manager."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo

PLATFORM = PlatformInfo(
    name="opensm-host",
    kind="sm-host",
    technologies=frozenset({"infiniband"}),
    device_type="linux",
    has_snmp=False,
    config_style="files",
)
