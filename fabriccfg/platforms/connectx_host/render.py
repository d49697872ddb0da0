"""Rendering of the connectx_host platform (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import Context, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Host
from fabriccfg.inventory.derive import DEFAULT_CABLE_M, effective_nic_qos, roce_intent
from fabriccfg.render.derive import facts, headroom, pause_quanta
from fabriccfg.render.filters import cable, tos

RP_KEYS = ("clamp_tgt_rate", "clamp_tgt_rate_ati", "rpg_time_reset", "rpg_byte_reset", "rpg_threshold",
           "rpg_max_rate", "rpg_ai_rate", "rpg_hai_rate", "rpg_gd", "rpg_min_dec_fac", "rpg_min_rate",
           "rate_to_set_on_first_cnp", "dce_tcp_g", "dce_tcp_rtt", "rate_reduce_monitor_period",
           "initial_alpha_value")
"""DCQCN reaction-point knobs in MLNX_OFED sysfs ``ecn/roce_rp/`` order (roce.md §6.2)."""
DEBUGFS = {
    "clamp_tgt_rate": "rp_clamp_tgt_rate", "clamp_tgt_rate_ati": "rp_clamp_tgt_rate_ati",
    "rpg_time_reset": "rp_time_reset", "rpg_byte_reset": "rp_byte_reset", "rpg_threshold": "rp_threshold",
    "rpg_max_rate": "rp_max_rate", "rpg_ai_rate": "rp_ai_rate", "rpg_hai_rate": "rp_hai_rate",
    "rpg_gd": "rp_gd", "rpg_min_dec_fac": "rp_min_dec_fac", "rpg_min_rate": "rp_min_rate",
    "rate_to_set_on_first_cnp": "rp_rate_to_set_on_first_cnp", "dce_tcp_g": "rp_dce_tcp_g",
    "dce_tcp_rtt": "rp_dce_tcp_rtt", "rate_reduce_monitor_period": "rp_rate_reduce_monitor_period",
    "initial_alpha_value": "rp_initial_alpha_value",
    "min_time_between_cnps": "np_min_time_between_cnps", "cnp_dscp": "np_cnp_dscp",
    "cnp_802p_prio": "np_cnp_prio",
}
"""MLNX_OFED sysfs name -> mainline debugfs ``/sys/kernel/debug/mlx5/<pci>/cc_params/`` name, as listed in
``mlx5_ib_dbg_cc_name[]`` of the kernel's ``drivers/infiniband/hw/mlx5/cong.c`` (torvalds/linux, read
2026-12-01). Only the per-priority ``enable/<prio>`` files have no mainline equivalent (firmware
``ROCE_CC_PRIO_MASK`` decides there), so the read-back prints them as ``unavailable``."""
UNAVAILABLE = "unavailable"
"""What roce-readback.sh prints for a value the running driver does not expose."""
INSTALL_DIR = "/usr/local/sbin"


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Per-NIC effective QoS, ToS byte, PFC vector, DCQCN values, cable length and expected headroom."""

    host: Host = device  # type: ignore[assignment]
    roce = roce_intent(fabric)
    f = facts(fabric)
    dcqcn = roce.dcqcn
    nics = []
    ends = f.device_ends(host.name)
    for nic in host.nics:
        if not nic.netdev:
            continue
        q = effective_nic_qos(fabric, nic)
        end = ends.get(nic.name) or ends.get(nic.netdev or "")
        if end is not None:
            peer, speed, length = f"{end.peer_device}:{end.peer_port}", end.speed_gbps, end.length_m
        else:
            peer, speed, length = "unknown", nic.speed or fabric.fabric.link_speed, DEFAULT_CABLE_M
        dscp2prio = [(d, p) for d, p in ((q.roce_dscp, roce.roce_priority), (q.cnp_dscp, q.cnp_priority))
                     if d >> 3 != p]
        nics.append({
            "name": nic.name, "netdev": nic.netdev, "rail": nic.rail, "speed": speed, "peer": peer,
            "cable_m": cable(length), "mtu": q.mtu, "trust": q.trust, "pfc": q.pfc_priorities,
            "roce_dscp": q.roce_dscp, "tos": tos(q.roce_dscp), "dscp2prio": dscp2prio,
            "headroom_bytes": headroom(speed, length, q.mtu), "pause_quanta": pause_quanta(speed),
            "cc_priorities": sorted(set(q.pfc_priorities) | {roce.roce_priority}),
            "np": [("min_time_between_cnps", dcqcn.min_time_between_cnps), ("cnp_dscp", q.cnp_dscp),
                   ("cnp_802p_prio", q.cnp_priority)],
        })
    return {
        "device": device,
        "fabric_name": fabric.fabric.name,
        "nics": nics,
        "rp": f.memo("connectx-host.rp", lambda: [(key, getattr(dcqcn, key)) for key in RP_KEYS]),
        "debugfs": DEBUGFS,
    }


def _render_applies(fabric: Fabric, device: Device) -> bool:
    """RoCE fabrics only: an InfiniBand GPU host has nothing to configure here."""
    return fabric.fabric.technology == "roce"


def _render_select(ctx: Context) -> list[str]:
    """Nothing for a host without RoCE netdevs."""
    return ["roce-setup.sh", "roce-readback.sh", "roce-expected.txt"] if ctx["nics"] else []


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={
        "roce-setup.sh": "connectx-host/roce-setup.sh.j2",
        "roce-readback.sh": "connectx-host/roce-readback.sh.j2",
        "roce-expected.txt": "connectx-host/roce-expected.txt.j2",
    },
    context=_render_context,
    applies=_render_applies,
    select=_render_select,
    install_paths={
        "roce-setup.sh": f"{INSTALL_DIR}/fabriccfg-roce-setup.sh",
        "roce-readback.sh": f"{INSTALL_DIR}/fabriccfg-roce-readback.sh",
        "roce-expected.txt": "/etc/fabriccfg/roce-expected.txt",
    },
)
