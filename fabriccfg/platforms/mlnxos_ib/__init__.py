"""NVIDIA Quantum MQM8700: managed HDR switch running MLNX-OS (netmiko ``mellanox_mlnxos``)."""

from __future__ import annotations

from fabriccfg.catalog import PlatformInfo, quantum_port_number

PLATFORM = PlatformInfo(
    name="mlnxos-ib",
    kind="switch",
    technologies=frozenset({"infiniband"}),
    device_type="mellanox_mlnxos",
    config_style="cli",
    port_name=lambda n: f"1/{n}",
    subport_name=lambda n, lane, lanes: f"1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x100G"}),
    fabric_port_number=quantum_port_number,
    cli_prompt=r"[>#]",
)
