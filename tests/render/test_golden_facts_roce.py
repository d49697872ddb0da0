"""Named vendor facts in the golden files this issue changed (issue 11: "each golden file that encodes a
vendor fact also has an assertion that names the fact"). Each test reads the committed golden file itself,
so a regeneration that loses a fact fails here by name, not only as a byte diff.
"""

from __future__ import annotations

import re
from pathlib import Path

GOLDEN = Path(__file__).parent / "golden"
NVUE = (GOLDEN / "roce-lab" / "leaf-r0" / "config.txt").read_text(encoding="utf-8")
SETUP = (GOLDEN / "roce-lab" / "gpu01" / "roce-setup.sh").read_text(encoding="utf-8")
READBACK = (GOLDEN / "roce-lab" / "gpu01" / "roce-readback.sh").read_text(encoding="utf-8")


def test_fact_nvue_pfc_watchdog_state_enable() -> None:
    """NVUE reference, QoS: 'interface <id> qos pfc-watchdog state', default disable."""
    assert "nv set interface swp1 qos pfc-watchdog state enable" in NVUE
    assert not re.search(r"qos pfc-watchdog$", NVUE, re.M)


def test_fact_nvue_ecn_thresholds_in_bytes() -> None:
    """NVUE reference, QoS: min-/max-threshold 'in bytes' (NVIDIA default 150000 / 1500000)."""
    assert "traffic-class 3 min-threshold 150000" in NVUE and "traffic-class 3 max-threshold 1500000" in NVUE


def test_fact_nvue_cnp_strict_and_every_class_scheduled() -> None:
    """NVUE reference, QoS egress-scheduler: DWRR total <= 100; CNP strict (RoCE page default)."""
    assert "egress-scheduler default-global traffic-class 6 mode strict" in NVUE
    assert {int(tc) for tc in re.findall(r"egress-scheduler default-global traffic-class (\d) mode", NVUE)} \
        == set(range(8))


def test_fact_nvue_default_lossless_pool_pair() -> None:
    """QoS guide 'Flow Control Buffers': default-lossless + default-lossy for granular PFC."""
    assert "nv set qos traffic-pool default-lossless memory-percent 60" in NVUE
    assert "nv set qos traffic-pool default-lossy memory-percent 40" in NVUE
    assert "roce-lossless" not in NVUE.replace("roce-lossless belongs", "")


def test_fact_connectx_traffic_class_only_with_ofed() -> None:
    """roce.md §6.1: tc/1/traffic_class exists only with MLNX_OFED: written only where present."""
    assert "if [[ -e $tc ]]; then" in SETUP


def test_fact_connectx_mainline_cc_params_names() -> None:
    """Kernel mlx5 cong.c: rp_max_rate and np_min_time_between_cnps live in debugfs cc_params."""
    for name in ("rp_max_rate", "np_min_time_between_cnps", "np_cnp_dscp", "np_cnp_prio"):
        assert f'write_if_diff "$cc/{name}"' in SETUP, name
        assert f"$cc/{name})" in READBACK, name


def test_fact_sharp_am_on_the_standby_sm_host() -> None:
    """SHARP docs: sharp_am runs along with the SM, on the SM's port: the standby SM host has its own AM."""
    cfg = (GOLDEN / "ib-lab-mqm8790" / "sm2" / "sharp_am.cfg").read_text(encoding="utf-8")
    assert "ib_port_guid 0x1070fd0300aa0002" in cfg
