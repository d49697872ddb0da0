"""Cumulus NVUE: the defects an independent reading found (issue 11, defects 1 and 3), as named facts.

Each fact is checked against the rule the NVIDIA docs state, not against our own helpers:
- NVUE reference, QoS set commands (https://docs.nvidia.com/networking-ethernet-software/nvue-reference/Set-and-Unset-Commands/QoS/):
  ``interface <id> qos pfc-watchdog state`` defaults to ``disable`` (introduced 5.6.0); ``egress-scheduler ...
  bw-percent`` is 1..100 and "the combined total of values you assign must be less than or equal to 100".
- Cumulus Linux QoS guide, 'Egress Scheduler': the factory scheduler gives queues 0,2,4,6 12 % and 1,3,5,7
  13 %, so a class the config leaves alone keeps that share. 'Flow Control Buffers': granular PFC uses the
  ``default-lossless`` / ``default-lossy`` pools; the total must not exceed 100 %.
- RoCE page: ``roce-lossless`` is the pool of ``nv set qos roce`` mode.
"""

from __future__ import annotations

import re

import pytest
from render_helpers import fabric_from

from fabriccfg.render.engine import render_device

FACTORY_BW = {0: 12, 1: 13, 2: 12, 3: 13, 4: 12, 5: 13, 6: 12, 7: 13}
"""Cumulus QoS guide, 'Egress Scheduler': the default scheduler's share per queue (all DWRR)."""


def _leaf(release: str | None = None) -> str:
    if release is None:
        fabric = fabric_from("roce-lab")
    else:
        line = "platform: cumulus-nvue, model: SN5600, asic: spectrum-4, mgmt: 192.0.2.11,"
        fabric = fabric_from("roce-lab", (line, f"{line} os_release: '{release}',"))
    return render_device(fabric, "leaf-r0").files["config.txt"]


def _effective_scheduler(text: str) -> dict[int, tuple[str, int]]:
    """What the switch runs after applying the lines on top of the factory scheduler."""
    mode = dict.fromkeys(range(8), "dwrr")
    bw = dict(FACTORY_BW)
    pattern = r"^nv set qos egress-scheduler default-global traffic-class (\S+) (mode|bw-percent) (\S+)$"
    for tcs, key, value in re.findall(pattern, text, re.M):
        for tc in (int(x) for x in tcs.split(",")):
            if key == "mode":
                mode[tc] = value
            else:
                bw[tc] = int(value)
    return {tc: (mode[tc], bw[tc]) for tc in range(8)}


@pytest.mark.parametrize("release", [None, "5.6", "5.9.2", "5.16.0"])
def test_fact_pfc_watchdog_state_enable(release: str | None) -> None:
    """'pfc-watchdog state enable' on every PFC port of a release that has the NVUE watchdog (>= 5.6)."""
    text = _leaf(release)
    pfc_ports = re.findall(r"^nv set interface (\S+) qos pfc profile ", text, re.M)
    wd_ports = re.findall(r"^nv set interface (\S+) qos pfc-watchdog state enable$", text, re.M)
    assert pfc_ports and wd_ports == pfc_ports
    assert not re.search(r"qos pfc-watchdog\s*$", text, re.M), "bare form: state left at default"


def test_fact_no_nvue_pfc_watchdog_before_5_6() -> None:
    text = _leaf("5.4.0")
    assert "pfc-watchdog" not in "\n".join(ln for ln in text.splitlines() if ln.startswith("nv "))
    assert "no pfc-watchdog before Cumulus Linux 5.6.0" in text


def test_fact_release_is_named_with_its_default() -> None:
    assert "Syntax for Cumulus Linux 5.16 (default: no os_release)" in _leaf()
    assert "Syntax for Cumulus Linux 5.9;" in _leaf("5.9.2")


def test_fact_every_class_scheduled_dwrr_total_at_most_100_cnp_strict() -> None:
    sched = _effective_scheduler(_leaf())
    assert sched[6][0] == "strict", "CNP class 6 strict"
    dwrr = {tc: bw for tc, (mode, bw) in sched.items() if mode == "dwrr"}
    assert all(1 <= bw <= 100 for bw in dwrr.values())
    assert sum(dwrr.values()) <= 100, sched
    assert dwrr[3] == 50, "RoCE class keeps its intended 50 %"


def test_fact_every_switch_priority_mapped_to_a_used_class() -> None:
    text = _leaf()
    pattern = r"^nv set qos egress-queue-mapping default-global switch-priority (\d) traffic-class (\d)$"
    mapping = {int(sp): int(tc) for sp, tc in re.findall(pattern, text, re.M)}
    assert mapping == {0: 0, 1: 0, 2: 0, 3: 3, 4: 0, 5: 0, 6: 6, 7: 0}


def test_fact_buffer_pools_default_lossless_pair() -> None:
    text = _leaf()
    pools = {name: int(pct) for name, pct in re.findall(
        r"^nv set qos traffic-pool (\S+) memory-percent (\d+)$", text, re.M)}
    assert set(pools) == {"default-lossless", "default-lossy"}, "granular PFC: the default pool pair"
    assert sum(pools.values()) <= 100
    assert not re.search(r"^nv set qos roce", text, re.M) and "traffic-pool roce-lossless" not in text
