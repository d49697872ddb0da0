"""The RoCE switch context every Ethernet platform starts from (effective QoS, ports, classes).

Platform modules add their own units and names on top (ECN in bytes or kbytes, watchdog times in
ms or s, SONiC references); the numbers themselves come from here, so every NOS renders the same
intent.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from fabriccfg.inventory.derive import effective_switch_qos, roce_intent
from fabriccfg.render.derive import facts

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric, Switch

LOSSY_TC = 0
"""Traffic class for everything that is neither RoCE nor CNP."""


@lru_cache(maxsize=64)
def dscp_to_tc(roce_dscp: int, roce_tc: int, cnp_dscp: int, cnp_tc: int) -> tuple[tuple[int, int], ...]:
    """All 64 DSCPs -> TC: RoCE and CNP to their classes, every other DSCP to the lossy class."""
    table = dict.fromkeys(range(64), LOSSY_TC)
    table[roce_dscp] = roce_tc
    table[cnp_dscp] = cnp_tc
    return tuple(sorted(table.items()))


def roce_switch_context(fabric: Fabric, switch: Switch) -> dict[str, Any]:
    """The platform-neutral part of a RoCE switch's template context."""
    roce = roce_intent(fabric)
    q = effective_switch_qos(fabric, switch)
    return {
        "device": switch,
        "fabric_name": fabric.fabric.name,
        "roce": roce,
        "qos": q,
        "ecn": roce.ecn,
        "ecn_enabled": q.ecn_enabled,
        "wd": roce.pfc_watchdog,
        "wd_enabled": roce.pfc_watchdog.enabled and q.pfc_enabled,
        "lossless": q.pfc_enabled,
        "roce_tc": q.roce_priority,
        "cnp_tc": q.cnp_priority,
        "lossy_tc": LOSSY_TC,
        "roce_bw": roce.roce_bandwidth_percent,
        "lossy_bw": 100 - roce.roce_bandwidth_percent,
        "cnp_strict": roce.cnp_strict,
        "mtu": q.mtu,
        "ports": facts(fabric).switch_ports(switch, q.mtu),
        "dscp_map": dscp_to_tc(q.roce_dscp, q.roce_priority, q.cnp_dscp, q.cnp_priority),
    }
