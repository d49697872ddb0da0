"""Arista EOS (netmiko ``arista_eos``)."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo

PLATFORM = PlatformInfo(
    name="eos",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="arista_eos",
    config_style="cli",
    port_name=lambda n: f"Ethernet{n}/1",
    subport_name=lambda n, lane, lanes: f"Ethernet{n}/{lane * (8 // lanes) + 1}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)
