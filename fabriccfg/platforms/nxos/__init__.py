"""Cisco NX-OS on Nexus 9000 (netmiko ``cisco_nxos``)."""

from __future__ import annotations

from fabriccfg.catalog import AsicInfo, ExampleHardware, PlatformInfo

_KB = 1024
_MB = 1024 * _KB

PLATFORM = PlatformInfo(
    name="nxos",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cisco_nxos",
    config_style="cli",
    port_name=lambda n: f"Ethernet1/{n}",
    subport_name=lambda n, lane, lanes: f"Ethernet1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
    example_hardware=ExampleHardware("N9364D-GX2A", "cloudscale-gx2", 64),
    asics=(  # chip packet buffer (datasheets) and a conservative per-port headroom budget
        AsicInfo("cloudscale-gx2", 120 * _MB, 512 * _KB),
        AsicInfo("silicon-one-g100", 144 * _MB, 512 * _KB),
    ),
)
