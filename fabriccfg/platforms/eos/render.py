"""Rendering of the eos platform (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch
from fabriccfg.render.roce import roce_switch_context

EOS_MAX_MTU = 9214
"""Arista examples use 9214 (roce.md §7.4); a larger switch MTU in the intent is capped here."""
_UC_QUEUE_ASICS = ("tomahawk", "trident")
"""ASIC families with separate unicast/multicast queues (``uc-tx-queue``); others use ``tx-queue``."""
_WD_ACTIONS = {"drop": ("drop", None), "forward": (None, "notify-only"), "alert": (None, "notify-only")}
"""Watchdog action -> (global ``action``, per-port ``port action``); EOS's own default is errdisable.

EOS offers ``drop | errdisable | notify-only`` globally and ``drop | notify-only`` per port (AVD's
``eos_cli_config_gen`` schema, checked by ``test_oracle_eos_pyavd``): there is no 'forward' (the old
``action no-drop`` is not an EOS keyword). 'forward' renders notify-only, with a WARNING comment."""


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """EOS units: ECN thresholds in bytes (exact, no KB ambiguity), watchdog times in seconds."""

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    asic = (switch.asic or "").lower()
    ctx["queue_kw"] = "uc-tx-queue" if asic.startswith(_UC_QUEUE_ASICS) else "tx-queue"
    ctx["eos_mtu"] = min(ctx["mtu"], EOS_MAX_MTU)
    ctx["wd_global_action"], ctx["wd_port_action"] = _WD_ACTIONS[ctx["wd"].action]
    return ctx


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
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
            (r"^interface (\S+)", r"^((?:uc-)?tx-queue \d+)", r"^random-detect ecn minimum-threshold "),
        ),
    ),
)
