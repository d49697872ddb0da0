"""Rendering of the mlnxos_ib platform (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch
from fabriccfg.inventory.models import IbIntent
from fabriccfg.render.derive import PARTITION_KEYWORDS, facts, natural_key
from fabriccfg.render.filters import colon_guid

_MLNX_KEYWORDS = {"ALL": "all", "ALL_CAS": "all"}
"""Partition keywords MLNX-OS understands (``member all``); ALL_SWITCHES, ALL_ROUTERS, SELF have no form."""


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Embedded SM on/off with priority, partitions with colon GUIDs, HDR100 splits."""

    ib = fabric.ib or IbIntent()
    ibf = facts(fabric).ib
    parts = []
    for p in ibf.partitions:
        members: list[tuple[str, str]] = []
        skipped: list[str] = []
        for spec, membership in p.members:
            if spec in PARTITION_KEYWORDS:
                if spec in _MLNX_KEYWORDS:
                    members.append((_MLNX_KEYWORDS[spec], membership))
                else:
                    skipped.append(spec)
            else:
                members.append((colon_guid(spec), membership))
        parts.append({"name": p.name, "pkey": p.pkey, "ipoib": p.ipoib, "mtu": p.mtu,
                      "members": list(dict.fromkeys(members)), "skipped": skipped})
    switch: Switch = device  # type: ignore[assignment]
    splits = sorted((port for port, mode in switch.breakouts.items() if mode.lower() == "2x100g"),
                    key=natural_key)
    return {
        "device": device,
        "fabric_name": fabric.fabric.name,
        "runs_sm": device.name in ibf.sm_priority,
        "sm_priority": ibf.sm_priority.get(device.name, 0),
        "partitions": parts,
        "mtu": ib.mtu,
        "splits": splits,
    }


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={"config.txt": "mlnxos-ib/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="GENERIC",
        # MLNX-OS prints every command indented by three spaces under '##' banners: flat commands
        ignore=(r"^\s*##.*", r"^\s*#.*", r"^\s+"),
        idempotent=(
            (r"^ib smnode (\S+) sm-priority ",),
            (r"^ib partition (\S+) pkey ",),
            (r"^ib partition (\S+) mtu ",),
            (r"^ib partition (\S+) member (\S+) type ",),
            (r"^interface ib (\S+) module-type ",),
        ),
        absent_negations=(r"^no ib sm$",),
    ),
)
