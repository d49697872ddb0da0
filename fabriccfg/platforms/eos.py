"""Arista EOS (netmiko ``arista_eos``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


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

# --- render (owned by fabriccfg.render) ---
EOS_MAX_MTU = 9214
"""Arista examples use 9214 (roce.md §7.4); a larger switch MTU in the intent is capped here."""
_UC_QUEUE_ASICS = ("tomahawk", "trident")
"""ASIC families with separate unicast/multicast queues (``uc-tx-queue``); others use ``tx-queue``."""
_WD_ACTIONS = {"drop": ("drop", None), "forward": ("no-drop", None), "alert": (None, "notify-only")}
"""Watchdog action -> (global ``action``, per-port ``port action``); EOS's own default is errdisable."""


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """EOS units: ECN thresholds in bytes (exact, no KB ambiguity), watchdog times in seconds."""
    from fabriccfg.render.roce import roce_switch_context

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    asic = (switch.asic or "").lower()
    ctx["queue_kw"] = "uc-tx-queue" if asic.startswith(_UC_QUEUE_ASICS) else "tx-queue"
    ctx["eos_mtu"] = min(ctx["mtu"], EOS_MAX_MTU)
    ctx["wd_global_action"], ctx["wd_port_action"] = _WD_ACTIONS[ctx["wd"].action]
    return ctx


RENDER = RenderSpec(
    files={"config.txt": "eos/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="ARISTA_EOS",
        idempotent=(
            (r"^qos map dscp (\d+) to traffic-class ",),
            (r"^priority-flow-control pause watchdog default (\S+) ",),
            (r"^priority-flow-control pause watchdog action ",),
            (r"^interface (\S+)", r"^description "),
            (r"^interface (\S+)", r"^priority-flow-control pause watchdog port action "),
            (r"^interface (\S+)", r"^((?:uc-)?tx-queue \d+)", r"^bandwidth percent "),
            (r"^interface (\S+)", r"^((?:uc-)?tx-queue \d+)", r"^random-detect ecn "),
        ),
    ),
)

# --- push (owned by fabriccfg.push) ---
from fabriccfg.push.tx.eos import EosTransaction as TRANSACTION  # noqa: E402, F401 (the platform seam)

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import commands as _tc  # noqa: E402 (the platform seam)
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.ARISTA_QUEUE, _tt.LLDP), cli=_tc.EOS_SHOW)
