"""Cisco NX-OS on Nexus 9000 (netmiko ``cisco_nxos``)."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo

PLATFORM = PlatformInfo(
    name="nxos",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cisco_nxos",
    config_style="cli",
    port_name=lambda n: f"Ethernet1/{n}",
    subport_name=lambda n, lane, lanes: f"Ethernet1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)
