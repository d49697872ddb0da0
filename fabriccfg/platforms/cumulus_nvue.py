"""NVIDIA Cumulus Linux 5.x configured with NVUE (netmiko ``cumulus_linux``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


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
def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Granular NVUE knobs: one PFC profile per cable length, watchdog robustness from detection time."""
    from fabriccfg.platforms.base import parse_breakout
    from fabriccfg.render.derive import natural_key
    from fabriccfg.render.roce import roce_switch_context

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    wd = ctx["wd"]
    lengths = sorted({p.cable_m for p in ctx["ports"]})
    ctx["pfc_profile"] = {length: f"roce-{length}m" for length in lengths}
    ctx["headroom"] = {p.cable_m: p.headroom_bytes for p in sorted(ctx["ports"], key=lambda p: p.speed_gbps)}
    ctx["wd_robustness"] = max(1, math.ceil(wd.detection_ms / wd.poll_ms))
    ctx["breakouts"] = [(port, parsed[0]) for port in sorted(switch.breakouts, key=natural_key)
                        if (parsed := parse_breakout(switch.breakouts[port]))]
    return ctx


RENDER = RenderSpec(
    files={"config.txt": "cumulus-nvue/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="GENERIC",
        ignore=(r"^\s*#.*",),
        # NVUE paths are leaves: 'nv set <path> <value>' replaces the previous value at <path>
        idempotent=((r"^(nv set \S+ \S+ \S+ .*) \S+$",),),
    ),
)

# --- push (owned by fabriccfg.push) ---
from fabriccfg.push.tx.nvue import NvueTransaction as TRANSACTION  # noqa: E402, F401 (the platform seam)

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import commands as _tc  # noqa: E402 (the platform seam)
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.MLNX_QOS_PFC, _tt.MLNX_QOS_TC, _tt.LLDP),
                           cli=_tc.NVUE_SHOW)
