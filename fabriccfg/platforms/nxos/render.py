"""Rendering of the nxos platform (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch
from fabriccfg.render.roce import roce_switch_context

NAMES = {"cm_roce": "ROCEv2", "cm_cnp": "CNP", "pm_qos": "QOS_CLASSIFICATION",
         "pm_queuing": "QOS_EGRESS_PORT", "pm_network": "qos_network"}
"""Class and policy names of Cisco's AI/ML blueprint (roce.md §5)."""


def _queue_class(tc: int) -> str:
    return "c-out-8q-q-default" if tc == 0 else f"c-out-8q-q{tc}"


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """MQC policies of the blueprint, with every queue of the 8q template given its share."""

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    queues: list[dict[str, Any]] = []
    for tc in (ctx["roce_tc"], ctx["lossy_tc"], *range(1, 8)):
        if any(q["tc"] == tc for q in queues):
            continue
        strict = ctx["cnp_strict"] and tc == ctx["cnp_tc"]
        bw = ctx["roce_bw"] if tc == ctx["roce_tc"] else ctx["lossy_bw"] if tc == ctx["lossy_tc"] else 0
        queues.append({"tc": tc, "cls": _queue_class(tc), "strict": strict, "bw": bw,
                       "ecn": ctx["ecn_enabled"] and tc == ctx["roce_tc"]})
    ctx.update(NAMES)
    ctx["queues"] = queues
    return ctx


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={"config.txt": "nxos/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="CISCO_NXOS",
        idempotent=(
            (r"^interface (\S+)", r"^description "),
            (r"^policy-map type queuing (\S+)", r"^class type queuing (\S+)",
             r"^bandwidth remaining percent "),
            (r"^policy-map type queuing (\S+)", r"^class type queuing (\S+)", r"^random-detect "),
            (r"^policy-map type network-qos (\S+)", r"^class type network-qos (\S+)", r"^mtu "),
            (r"^policy-map type qos (\S+)", r"^class (\S+)", r"^set qos-group "),
            (r"^system qos", r"^service-policy type (network-qos|queuing output) "),
        ),
    ),
)
