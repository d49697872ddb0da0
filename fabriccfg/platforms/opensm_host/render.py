"""Rendering of the opensm_host platform (see the package docstring)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fabriccfg.render.spec import Context, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric
from fabriccfg.inventory.models import IbIntent
from fabriccfg.render.derive import facts

_OPENSM_DIR = "/etc/opensm"
_ROOT_ENGINES = frozenset({"ftree", "updn", "ar_ftree", "ar_updn"})
_CN_ENGINES = frozenset({"ftree", "ar_ftree", "sssp", "dfsssp"})


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Everything opensm.conf, partitions.conf, the GUID files and sharp_am.cfg need, computed once."""

    ib = fabric.ib or IbIntent()
    ibf = facts(fabric).ib
    engines = set(ib.routing_engines)
    mlnx = ib.opensm_flavour == "mlnx"
    return {
        "device": device,
        "fabric_name": fabric.fabric.name,
        "flavour": ib.opensm_flavour,
        "port_guid": device.port_guid,  # type: ignore[union-attr]
        "runs_sm": device.name in ibf.sm_priority,
        "sm_priority": ibf.sm_priority.get(device.name, 0),
        "routing_engine": ",".join(ib.routing_engines),
        "lmc": ib.lmc,
        "root_guids": ibf.root_guids,
        "cn_guids": ibf.cn_guids,
        "root_file": bool(engines & _ROOT_ENGINES and ibf.root_guids),
        "cn_file": bool(engines & _CN_ENGINES and ibf.cn_guids),
        "node_name_map": ib.node_name_map,
        "node_names": ibf.node_names,
        "partitions": ibf.partitions,
        "qos": ib.qos,
        "sweep_interval": ib.sweep_interval_s,
        "log_file": ib.log_file,
        "sharp_wanted": ib.sharp.enabled,
        "sharp": ib.sharp.enabled and mlnx,
        # every SM host runs an AM (standby next to a standby SM), not only am_host: after an SM
        # failover the new master's host must already have its sharp_am (docs/render.md, SHARP)
        "sharp_am": ib.sharp.enabled and (device.name in ibf.sm_priority or ib.sharp.am_host == device.name),
        "am_preferred": ib.sharp.am_host == device.name,
        "paths": RENDER.install_paths,
    }


def _render_select(ctx: Context) -> list[str]:
    files = []
    if ctx["runs_sm"]:
        files += ["opensm.conf", "partitions.conf"]
        files += ["root_guids.conf"] if ctx["root_file"] else []
        files += ["cn_guids.conf"] if ctx["cn_file"] else []
        files += ["node-name-map"] if ctx["node_name_map"] else []
    if ctx["sharp_am"]:
        files.append("sharp_am.cfg")
    return files


RENDER = RenderSpec(
    templates=Path(__file__).parent / "templates",
    files={
        "opensm.conf": "opensm-host/opensm.conf.j2",
        "partitions.conf": "opensm-host/partitions.conf.j2",
        "root_guids.conf": "opensm-host/root_guids.conf.j2",
        "cn_guids.conf": "opensm-host/cn_guids.conf.j2",
        "node-name-map": "opensm-host/node-name-map.j2",
        "sharp_am.cfg": "opensm-host/sharp_am.cfg.j2",
    },
    context=_render_context,
    select=_render_select,
    install_paths={
        "opensm.conf": f"{_OPENSM_DIR}/opensm.conf",
        "partitions.conf": f"{_OPENSM_DIR}/partitions.conf",
        "root_guids.conf": f"{_OPENSM_DIR}/root_guids.conf",
        "cn_guids.conf": f"{_OPENSM_DIR}/cn_guids.conf",
        "node-name-map": f"{_OPENSM_DIR}/node-name-map",
        "sharp_am.cfg": "/etc/sharp/sharp_am.cfg",
    },
)
