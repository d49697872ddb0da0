"""NVIDIA Quantum MQM8790: externally managed HDR switch, no CLI and no SNMP.

Its fabric is configured on the subnet-manager host (``opensm-host``); it renders nothing
and can never be a push target."""

from __future__ import annotations

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.platforms.mlnxos_ib import ib_port_number

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
    fabric_port_number=ib_port_number,
)

# --- render (owned by fabriccfg.render) ---
RENDER = None

# --- push (owned by fabriccfg.push) ---
TRANSACTION = None

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

# No CLI and no SNMP: its ports are read in-band from the SM host (ibqueryerrors, ibnetdiscover).
TELEMETRY = _TelemetrySpec()
