"""Community SONiC: CONFIG_DB JSON over a bash shell (netmiko ``linux``)."""

from __future__ import annotations

from fabriccfg.platforms.base import PlatformInfo


PLATFORM = PlatformInfo(
    name="sonic",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="linux",
    config_style="json",
    port_name=lambda n: f"Ethernet{(n - 1) * 8}",
    subport_name=lambda n, lane, lanes: f"Ethernet{(n - 1) * 8 + lane * (8 // lanes)}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)

# --- render (owned by fabriccfg.render) ---
RENDER = None

# --- push (owned by fabriccfg.push) ---
TRANSACTION = None

# --- telemetry (owned by fabriccfg.telemetry) ---
TELEMETRY = None
