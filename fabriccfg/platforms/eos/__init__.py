"""Arista EOS (netmiko ``arista_eos``)."""

from __future__ import annotations

from fabriccfg.catalog import AsicInfo, ExampleHardware, PlatformInfo

_KB = 1024
_MB = 1024 * _KB

PLATFORM = PlatformInfo(
    name="eos",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="arista_eos",
    config_style="cli",
    port_name=lambda n: f"Ethernet{n}/1",
    subport_name=lambda n, lane, lanes: f"Ethernet{n}/{lane * (8 // lanes) + 1}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
    example_hardware=ExampleHardware("7060X5-64", "tomahawk-4", 64),
    asics=(  # chip packet buffer (datasheets) and a conservative per-port headroom budget
        AsicInfo("tomahawk-3", 64 * _MB, 384 * _KB),
        AsicInfo("tomahawk-4", 113 * _MB, 512 * _KB),
        AsicInfo("tomahawk-5", 165 * _MB, 1024 * _KB),
        AsicInfo("trident-4", 132 * _MB, 512 * _KB),
        AsicInfo("jericho-2", 8 * 1024 * _MB, 1024 * _KB),
    ),
)
