"""Rendering of the sonic platform (see the package docstring)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch
from fabriccfg.render.roce import roce_switch_context

ABNF_BEFORE = 202106
"""Releases older than this write references as ABNF ``[TABLE|name]`` (the 202012 docs still do,
roce.md §3.2); from 202106 on CONFIG_DB uses bare names as today's templates do."""
MAP_NAME = "ROCE"
WRED_NAME = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "ROCE_DWRR", "lossy": "LOSSY_DWRR", "cnp": "CNP_STRICT"}


def uses_abnf(os_release: str | None) -> bool:
    """True when ``os_release`` (e.g. '202012', '202305.2') predates bare-name references."""
    digits = re.match(r"\d{6}", os_release or "")
    return digits is not None and int(digits.group(0)) < ABNF_BEFORE


def lossless_profile_name(speed_gbps: int, cable_m: int) -> str:
    """SONiC's lossless PG profile name, e.g. ``pg_lossless_400000_5m_profile`` (speed in Mb/s)."""
    return f"pg_lossless_{speed_gbps * 1000}_{cable_m}m_profile"


def _kb_up(value: int) -> int:
    return -(-value // 1024) * 1024


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """CONFIG_DB tables for the lossless class, with release-specific references and profile names."""

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    abnf = uses_abnf(switch.os_release)

    def ref(table: str, name: str) -> str:
        return f"[{table}|{name}]" if abnf else name

    static = ctx["roce"].buffer.model == "static"
    profiles: dict[str, dict[str, int]] = {}
    pg_ref: dict[str, str] = {}
    for p in ctx["ports"]:
        if static:
            name = lossless_profile_name(p.speed_gbps, p.cable_m)
            xoff, xon = _kb_up(p.headroom_bytes), _kb_up(2 * ctx["mtu"])
            profiles[name] = {"xon": xon, "xoff": xoff, "size": xon + xoff, "dynamic_th": 0}
            pg_ref[p.name] = ref("BUFFER_PROFILE", name)
        else:
            pg_ref[p.name] = "NULL"  # dynamic model: buffermgrd sizes the PG from speed, cable and MTU
    ctx.update(
        release=switch.os_release or "current",
        abnf=abnf,
        map_name=MAP_NAME,
        wred_name=WRED_NAME,
        sched=SCHEDULERS,
        refs={
            "dscp_to_tc": ref("DSCP_TO_TC_MAP", MAP_NAME),
            "tc_to_pg": ref("TC_TO_PRIORITY_GROUP_MAP", MAP_NAME),
            "tc_to_queue": ref("TC_TO_QUEUE_MAP", MAP_NAME),
            "pfc_to_queue": ref("MAP_PFC_PRIORITY_TO_QUEUE", MAP_NAME),
            "pfc_to_pg": ref("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", MAP_NAME),
            "wred": ref("WRED_PROFILE", WRED_NAME),
            "sched_roce": ref("SCHEDULER", SCHEDULERS["roce"]),
            "sched_lossy": ref("SCHEDULER", SCHEDULERS["lossy"]),
            "sched_cnp": ref("SCHEDULER", SCHEDULERS["cnp"]),
            "lossless_pool": ref("BUFFER_POOL", "ingress_lossless_pool"),
        },
        static_buffers=static,
        buffer_profiles=sorted(profiles.items()),
        pg_profile_ref=pg_ref,
        pfc_enable=str(ctx["roce_tc"]) if ctx["lossless"] else "",
        pfcwd_sw_enable=str(ctx["roce_tc"]) if ctx["wd_enabled"] else "",
    )
    ports, lossless = ctx["ports"], ctx["lossless"]
    present = {
        "BUFFER_PG": bool(lossless and ports),
        "BUFFER_PROFILE": bool(lossless and static and ports),
        "CABLE_LENGTH": bool(ports),
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": True,
        "PFC_WD": bool(ctx["wd_enabled"] and ports),
        "TC_TO_QUEUE_MAP": True,
        "WRED_PROFILE": bool(ctx["ecn_enabled"]),
    }
    ctx["tables"] = [name for name, on in present.items() if on]
    ctx["last_table"] = ctx["tables"][-1]
    return ctx


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={"config_db.json": "sonic/config_db.json.j2"},
    context=_render_context,
)
