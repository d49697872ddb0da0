"""SHARP after SM failover (issue 11, defect 4): every SM host gets sharp_am.cfg and a running, boot-enabled
sharp_am, so the standby SM's host already has its aggregation manager when it becomes master.

Judged by the mock host's own state (files and services), not by the push report alone.
"""

from __future__ import annotations

from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import render_fabric


def test_fact_sharp_am_cfg_on_every_sm_host(ib8790: Fabric) -> None:
    rendered = {d.name: d for d in render_fabric(ib8790)}
    sm_hosts = {sm.device for sm in ib8790.ib.subnet_managers}  # type: ignore[union-attr]
    assert len(sm_hosts) == 2
    for name in sm_hosts:
        cfg = rendered[name].files["sharp_am.cfg"]
        guid = ib8790.device(name).port_guid  # type: ignore[union-attr]
        assert f"ib_port_guid {guid}" in cfg, "each AM binds its own host's port, next to its own SM"


def test_push_installs_and_runs_sharp_am_on_the_standby_sm_host(lab: Any, ib8790: Fabric) -> None:
    standby = min(ib8790.ib.subnet_managers, key=lambda sm: sm.priority).device  # type: ignore[union-attr]
    assert standby != ib8790.ib.sharp.am_host  # type: ignore[union-attr]
    with lab(ib8790) as lb:
        rep = lb.push([standby])
        [d] = [d for d in rep.devices if d.name == standby]
        assert d.state == "applied", d.reason
        dev = lb.mock.device(standby)
        assert "ib_port_guid" in dev.files["/etc/sharp/sharp_am.cfg"]
        assert dev.extra["services"]["sharp_am"] == "active"
        assert dev.extra["service_restarts"]["sharp_am"] >= 1
