"""NVIDIA Quantum MQM8790: externally managed HDR switch, no CLI and no SNMP.

Its fabric is configured on the subnet-manager host (``opensm-host``); it renders nothing
and can never be a push target."""

from __future__ import annotations

from fabriccfg.catalog import ExampleHardware, PlatformInfo, quantum_port_number

PLATFORM = PlatformInfo(
    name="unmanaged-ib",
    kind="switch",
    technologies=frozenset({"infiniband"}),
    device_type=None,
    has_snmp=False,
    needs_mgmt=False,
    config_style="none",
    port_name=lambda n: f"1/{n}",
    subport_name=lambda n, lane, lanes: f"1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x100G"}),
    fabric_port_number=quantum_port_number,
    not_a_target="NVIDIA Quantum MQM8790: externally managed HDR switch, no CLI and no SNMP",
    example_hardware=ExampleHardware("MQM8790-HS2F", "quantum", 40),
)
