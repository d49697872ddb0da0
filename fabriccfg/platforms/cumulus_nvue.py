"""NVIDIA Cumulus Linux 5.x configured with NVUE (netmiko ``cumulus_linux``)."""

from __future__ import annotations

from fabriccfg.platforms.base import PlatformInfo


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

# --- render (owned by fabriccfg.render) ---
RENDER = None

# --- push (owned by fabriccfg.push) ---
TRANSACTION = None

# --- telemetry (owned by fabriccfg.telemetry) ---
TELEMETRY = None
