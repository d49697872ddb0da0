"""Community SONiC: CONFIG_DB JSON over a bash shell (netmiko ``linux``)."""

from __future__ import annotations

from fabriccfg.catalog import ExampleHardware, PlatformInfo

PLATFORM = PlatformInfo(
    name="sonic",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="linux",
    config_style="json",
    port_name=lambda n: f"Ethernet{(n - 1) * 8}",
    subport_name=lambda n, lane, lanes: f"Ethernet{(n - 1) * 8 + lane * (8 // lanes)}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
    example_hardware=ExampleHardware("SN5400", "spectrum-4", 64),
)
