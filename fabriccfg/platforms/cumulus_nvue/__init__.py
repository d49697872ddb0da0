"""NVIDIA Cumulus Linux 5.x configured with NVUE (netmiko ``cumulus_linux``)."""

from __future__ import annotations

from fabriccfg.catalog import AsicInfo, ExampleHardware, PlatformInfo

_KB = 1024
_MB = 1024 * _KB

PLATFORM = PlatformInfo(
    name="cumulus-nvue",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cumulus_linux",
    config_style="cli",
    port_name=lambda n: f"swp{n}",
    subport_name=lambda n, lane, lanes: f"swp{n}s{lane}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
    example_hardware=ExampleHardware("SN5400", "spectrum-4", 64),
    asics=(  # chip packet buffer (datasheets) and a conservative per-port headroom budget
        AsicInfo("spectrum", 16 * _MB, 192 * _KB),
        AsicInfo("spectrum-2", 42 * _MB, 384 * _KB),
        AsicInfo("spectrum-3", 64 * _MB, 512 * _KB),
        AsicInfo("spectrum-4", 160 * _MB, 1024 * _KB),
    ),
)
