"""A GPU node with NVIDIA ConnectX NICs (trust, PFC, DCQCN via sysfs; netmiko ``linux``)."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo

PLATFORM = PlatformInfo(
    name="connectx-host",
    kind="gpu-host",
    technologies=frozenset({"roce", "infiniband"}),
    device_type="linux",
    has_snmp=False,
    config_style="files",
)
