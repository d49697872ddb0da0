"""Rendering of the cumulus_nvue platform (see the package docstring)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch
from fabriccfg.catalog import parse_breakout
from fabriccfg.render.derive import natural_key
from fabriccfg.render.roce import roce_switch_context

CURRENT_RELEASE = (5, 16)
"""The Cumulus Linux release assumed when a switch has no ``os_release``: the newest the NVUE reference
(CumulusNetworks/docs ``content/nvue-reference``) documented when the templates were checked (2026-12-01)."""
WATCHDOG_SINCE = (5, 6)
"""NVUE reference, QoS: ``nv set interface <id> qos pfc-watchdog state`` and ``nv set qos pfc-watchdog
polling-interval|robustness`` were introduced in Cumulus Linux 5.6.0; earlier releases have no NVUE
watchdog."""
_RELEASE = re.compile(r"(\d+)\.(\d+)")


def cumulus_release(os_release: str | None) -> tuple[int, int] | None:
    """``'5.9.1'`` -> (5, 9); None when absent or not a ``MAJOR.MINOR[...]`` release string."""
    m = _RELEASE.match((os_release or "").strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def egress_scheduler(roce_tc: int, cnp_tc: int, lossy_tc: int, roce_bw: int,
                     cnp_strict: bool) -> list[tuple[int, str, int | None]]:
    """(tc, mode, bw-percent) for all eight classes with a DWRR total of exactly 100 %.

    NVUE reference, QoS ``egress-scheduler <profile> traffic-class <id> bw-percent``: 1..100 per class, and
    "the combined total of values you assign must be less than or equal to 100"; a class not set keeps the
    factory 12/13 %. So every class is set: CNP strict (or DWRR 1 %), each class nothing maps to DWRR 1 %,
    RoCE its intent (capped so every other DWRR class keeps its 1 %), the lossy class the remainder.
    """
    rows: dict[int, tuple[str, int | None]] = {}
    for tc in range(8):
        if tc not in (roce_tc, lossy_tc):
            rows[tc] = ("strict", None) if tc == cnp_tc and cnp_strict else ("dwrr", 1)
    others = sum(bw or 0 for _, bw in rows.values())
    roce = max(1, min(roce_bw, 100 - others - 1))
    rows[roce_tc] = ("dwrr", roce)
    rows[lossy_tc] = ("dwrr", 100 - others - roce)
    return [(tc, *rows[tc]) for tc in range(8)]


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Granular NVUE knobs: one PFC profile per cable length, watchdog robustness from detection time,
    every class scheduled and mapped, syntax by Cumulus release."""

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    wd = ctx["wd"]
    lengths = sorted({p.cable_m for p in ctx["ports"]})
    release = cumulus_release(switch.os_release)
    ctx["release"] = release or CURRENT_RELEASE
    ctx["release_text"] = (f"{release[0]}.{release[1]}" if release else
                           f"{CURRENT_RELEASE[0]}.{CURRENT_RELEASE[1]} (default: no os_release)")
    ctx["wd_rendered"] = ctx["wd_enabled"] and ctx["release"] >= WATCHDOG_SINCE
    ctx["pfc_profile"] = {length: f"roce-{length}m" for length in lengths}
    ctx["headroom"] = {p.cable_m: p.headroom_bytes for p in sorted(ctx["ports"], key=lambda p: p.speed_gbps)}
    ctx["wd_robustness"] = max(1, math.ceil(wd.detection_ms / wd.poll_ms))
    ctx["breakouts"] = [(port, parsed[0]) for port in sorted(switch.breakouts, key=natural_key)
                        if (parsed := parse_breakout(switch.breakouts[port]))]
    own = {ctx["roce_tc"]: ctx["roce_tc"], ctx["cnp_tc"]: ctx["cnp_tc"]}
    ctx["sp_to_tc"] = [(sp, own.get(sp, ctx["lossy_tc"])) for sp in range(8)]
    ctx["scheduler"] = egress_scheduler(ctx["roce_tc"], ctx["cnp_tc"], ctx["lossy_tc"], ctx["roce_bw"],
                                        ctx["cnp_strict"])
    return ctx


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={"config.txt": "cumulus-nvue/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="GENERIC",
        ignore=(r"^\s*#.*",),
        # NVUE paths are leaves: 'nv set <path> <value>' replaces the previous value at <path>
        idempotent=((r"^(nv set \S+ \S+ \S+ .*) \S+$",),),
    ),
)
