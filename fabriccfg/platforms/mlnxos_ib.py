"""NVIDIA Quantum MQM8700: managed HDR switch running MLNX-OS (netmiko ``mellanox_mlnxos``)."""

from __future__ import annotations

from fabriccfg.platforms.base import PlatformInfo


def ib_port_number(port: str) -> int | None:
    """'1/5' -> 5; a split '1/5/2' -> 10 (split-ready numbering: 2 x (N-1) + lane)."""
    parts = port.split("/")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return None
    if len(nums) == 2:
        return nums[1]
    if len(nums) == 3:
        return 2 * (nums[1] - 1) + nums[2]
    return None


PLATFORM = PlatformInfo(
    name="mlnxos-ib",
    kind="switch",
    technologies=frozenset({"infiniband"}),
    device_type="mellanox_mlnxos",
    config_style="cli",
    port_name=lambda n: f"1/{n}",
    subport_name=lambda n, lane, lanes: f"1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x100G"}),
    fabric_port_number=ib_port_number,
)

# --- render (owned by fabriccfg.render) ---
RENDER = None

# --- push (owned by fabriccfg.push) ---
TRANSACTION = None

# --- telemetry (owned by fabriccfg.telemetry) ---
TELEMETRY = None
