"""NVIDIA Cumulus Linux 5.x configured with NVUE (netmiko ``cumulus_linux``)."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo

PLATFORM = PlatformInfo(
    name="cumulus-nvue",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cumulus_linux",
    config_style="cli",
    port_name=lambda n: f"swp{n}",
    subport_name=lambda n, lane, lanes: f"swp{n}s{lane}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)
