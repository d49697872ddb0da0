"""The rendered ConnectX scripts, run by the real bash against fake sysfs/debugfs trees.

Two layouts of the same host (issue 11, defect 2):

- **MLNX_OFED**: ``/sys/class/net/<if>/ecn/roce_{rp,np}/...`` and
  ``/sys/class/infiniband/<dev>/tc/1/traffic_class``.
- **inbox (mainline) mlx5**: no ``ecn/`` folder and no ``tc/`` folder; DCQCN lives in debugfs
  ``/sys/kernel/debug/mlx5/<pci>/cc_params/``.

The judge is not our code: the debugfs file names are the kernel's own list (``mlx5_ib_dbg_cc_name[]`` in
torvalds/linux ``drivers/infiniband/hw/mlx5/cong.c``, copied below), the values are the inventory's, and
``mlnx_qos``/``cma_roce_tos``/``ip`` are small stubs that only record what they were asked to set.
The scripts find the fake tree through ``FABRICCFG_ROOT``; the old template (absolute ``/sys`` paths,
unguarded ``traffic_class`` write) exits at that write on an inbox tree and never reaches debugfs.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from render_helpers import fabric_from

from fabriccfg.inventory.models import Fabric
from fabriccfg.platforms.connectx_host.transaction import readback_mismatches
from fabriccfg.render.engine import RenderedDevice, render_device

# SOURCE: torvalds/linux drivers/infiniband/hw/mlx5/cong.c, mlx5_ib_dbg_cc_name[] (read 2026-12-01);
# the two rtt_resp_* entries exist only with the roce_cc_general capability.
KERNEL_CC_NAMES = (
    "rp_clamp_tgt_rate", "rp_clamp_tgt_rate_ati", "rp_time_reset", "rp_byte_reset", "rp_threshold",
    "rp_ai_rate", "rp_max_rate", "rp_hai_rate", "rp_min_dec_fac", "rp_min_rate",
    "rp_rate_to_set_on_first_cnp", "rp_dce_tcp_g", "rp_dce_tcp_rtt", "rp_rate_reduce_monitor_period",
    "rp_initial_alpha_value", "rp_gd", "np_min_time_between_cnps", "np_cnp_dscp", "np_cnp_prio_mode",
    "np_cnp_prio",
)
# inventory knob (MLNX_OFED name, roce.md §6.2) -> the kernel file that holds it; written by us from cong.c:
# each get/set case maps the debugfs entry to the PRM field of the same meaning.
KERNEL_FILE = {
    "clamp_tgt_rate": "rp_clamp_tgt_rate", "clamp_tgt_rate_ati": "rp_clamp_tgt_rate_ati",
    "rpg_time_reset": "rp_time_reset", "rpg_byte_reset": "rp_byte_reset", "rpg_threshold": "rp_threshold",
    "rpg_max_rate": "rp_max_rate", "rpg_ai_rate": "rp_ai_rate", "rpg_hai_rate": "rp_hai_rate",
    "rpg_gd": "rp_gd", "rpg_min_dec_fac": "rp_min_dec_fac", "rpg_min_rate": "rp_min_rate",
    "rate_to_set_on_first_cnp": "rp_rate_to_set_on_first_cnp", "dce_tcp_g": "rp_dce_tcp_g",
    "dce_tcp_rtt": "rp_dce_tcp_rtt", "rate_reduce_monitor_period": "rp_rate_reduce_monitor_period",
    "initial_alpha_value": "rp_initial_alpha_value", "min_time_between_cnps": "np_min_time_between_cnps",
}
SEED = "77"
"""Every fake sysfs/debugfs value starts here, so a file the script did not write is visible."""

# A stand-in for mlnx_qos that keeps trust/PFC per interface and prints them in the layout of a real
# run. SOURCE of the layout: att/netarbiter nvmf/OUTPUTSAMPLE.setup-nic-lossless-layer3.sh.md
# ("Priority trust state: dscp", "PFC configuration:" then "priority"/"enabled" rows).
MLNX_QOS = r"""#!/usr/bin/env bash
set -eu
st=$FABRICCFG_ROOT/state; mkdir -p "$st"
if=""; while [[ $# -gt 0 ]]; do
  case $1 in
    -i) if=$2; shift 2;;
    --trust) echo "$2" >"$st/$if.trust"; shift 2;;
    --pfc) echo "$2" >"$st/$if.pfc"; shift 2;;
    *) echo "$1 $2" >>"$st/$if.other"; shift 2;;
  esac
done
[[ -d $FABRICCFG_ROOT/sys/class/net/$if ]] || { echo "Netlink error: No such device" >&2; exit 1; }
echo "DCBX mode: OS controlled"
echo "Priority trust state: $(cat "$st/$if.trust" 2>/dev/null || echo pcp)"
echo "PFC configuration:"
echo "        priority    0   1   2   3   4   5   6   7"
printf '        enabled     %s\n' "$(tr ',' ' ' <"$st/$if.pfc" 2>/dev/null || echo 0 0 0 0 0 0 0 0)"
"""
CMA_ROCE_TOS = r"""#!/usr/bin/env bash
set -eu
dev=$2; tos=$4
f=$FABRICCFG_ROOT/sys/kernel/config/rdma_cm/$dev/ports/1/default_roce_tos
mkdir -p "$(dirname "$f")"; echo "$tos" >"$f"
"""
IP = r"""#!/usr/bin/env bash
set -eu
# ip link set dev IF mtu N
echo "$6" >"$FABRICCFG_ROOT/sys/class/net/$4/mtu"
"""
MOUNTPOINT = "#!/usr/bin/env bash\nexit 0\n"
MOUNT = "#!/usr/bin/env bash\necho 'mount must not run: debugfs is mounted' >&2\nexit 1\n"


def _stub_bin(tmp: Path) -> Path:
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in {"mlnx_qos": MLNX_QOS, "cma_roce_tos": CMA_ROCE_TOS, "ip": IP,
                       "mountpoint": MOUNTPOINT, "mount": MOUNT}.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return bin_dir


def _fake_host(root: Path, host: RenderedDevice, fabric: Fabric, *, ofed: bool) -> dict[str, Path]:
    """One fake NIC tree per netdev; returns netdev -> its debugfs cc_params folder (inbox) or ecn folder."""
    device = fabric.device(host.name)
    out: dict[str, Path] = {}
    for i, nic in enumerate(device.nics):  # type: ignore[union-attr]
        net = root / "sys/class/net" / str(nic.netdev)
        net.mkdir(parents=True)
        (net / "mtu").write_text("1500\n")
        pci = root / f"sys/devices/pci0000:00/0000:{0x3b + i:02x}:00.0"
        pci.mkdir(parents=True)
        (net / "device").symlink_to(pci)
        if ofed:
            ecn = net / "ecn"
            for side, keys in (("roce_rp", [k for k in KERNEL_FILE if not k.startswith(("min_", "cnp"))]),
                               ("roce_np", ["min_time_between_cnps", "cnp_dscp", "cnp_802p_prio"])):
                (ecn / side / "enable").mkdir(parents=True)
                for prio in range(8):
                    (ecn / side / "enable" / str(prio)).write_text("0\n")
                for key in keys:
                    (ecn / side / key).write_text(f"{SEED}\n")
            tc = root / "sys/class/infiniband" / nic.name / "tc/1"
            tc.mkdir(parents=True)
            (tc / "traffic_class").write_text("0\n")
            out[str(nic.netdev)] = ecn
        else:
            cc = root / "sys/kernel/debug/mlx5" / pci.name / "cc_params"
            cc.mkdir(parents=True)
            for name in KERNEL_CC_NAMES:
                (cc / name).write_text(f"{SEED}\n")
            out[str(nic.netdev)] = cc
    return out


def _run(script: str, root: Path, bin_dir: Path, tmp: Path, name: str) -> subprocess.CompletedProcess[str]:
    path = tmp / name
    path.write_text(script)
    env = {**os.environ, "FABRICCFG_ROOT": str(root), "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    return subprocess.run(["bash", str(path)], env=env, capture_output=True, text=True, timeout=60,
                          check=False)


@pytest.fixture(scope="module")
def fabric() -> Fabric:
    # non-default DCQCN values, so a file left at its seed or at a default cannot pass by accident
    return fabric_from("roce-lab", ("  host_mtu: 4200", "  host_mtu: 4200\n"
                                    "  dcqcn: {rpg_max_rate: 300000, min_time_between_cnps: 8}"))


@pytest.mark.parametrize("ofed", [False, True], ids=["inbox-debugfs", "mlnx-ofed-sysfs"])
def test_setup_script_configures_dcqcn_on_both_driver_layouts(fabric: Fabric, tmp_path: Path,
                                                             ofed: bool) -> None:
    host = render_device(fabric, "gpu01")
    root = tmp_path / "root"
    dirs = _fake_host(root, host, fabric, ofed=ofed)
    bin_dir = _stub_bin(tmp_path)
    dcqcn = fabric.roce.dcqcn  # type: ignore[union-attr]
    res = _run(host.files["roce-setup.sh"], root, bin_dir, tmp_path, "roce-setup.sh")
    assert res.returncode == 0, res.stdout + res.stderr
    assert "failed=0" in res.stdout
    for netdev, folder in dirs.items():
        assert (root / "sys/class/net" / netdev / "mtu").read_text().strip() == "4200"
        if ofed:
            assert (folder / "roce_rp/rpg_max_rate").read_text().strip() == str(dcqcn.rpg_max_rate)
            assert (folder / "roce_np/min_time_between_cnps").read_text().strip() == "8"
            assert (folder / "roce_np/enable/3").read_text().strip() == "1"
        else:
            # rp_max_rate / np_min_time_between_cnps: exposed by mainline cong.c, rendered on this path too
            assert (folder / "rp_max_rate").read_text().strip() == "300000"
            assert (folder / "np_min_time_between_cnps").read_text().strip() == "8"
            for knob, kernel_name in KERNEL_FILE.items():
                assert (folder / kernel_name).read_text().strip() == str(getattr(dcqcn, knob)), kernel_name
            assert (folder / "np_cnp_dscp").read_text().strip() == "48"
            assert (folder / "np_cnp_prio").read_text().strip() == "6"
    tc = list((root / "sys/class/infiniband").glob("*/tc/1/traffic_class")) if ofed else []
    assert all(f.read_text().strip() == "106" for f in tc)
    if not ofed:
        assert "no tc/1/traffic_class (inbox driver)" in res.stdout
    again = _run(host.files["roce-setup.sh"], root, bin_dir, tmp_path, "roce-setup.sh")
    assert again.returncode == 0 and "changed=0 failed=0" in again.stdout, again.stdout + again.stderr


@pytest.mark.parametrize("ofed", [False, True], ids=["inbox-debugfs", "mlnx-ofed-sysfs"])
def test_readback_matches_expected_after_setup(fabric: Fabric, tmp_path: Path, ofed: bool) -> None:
    host = render_device(fabric, "gpu01")
    root = tmp_path / "root"
    _fake_host(root, host, fabric, ofed=ofed)
    bin_dir = _stub_bin(tmp_path)
    assert _run(host.files["roce-setup.sh"], root, bin_dir, tmp_path, "roce-setup.sh").returncode == 0
    res = _run(host.files["roce-readback.sh"], root, bin_dir, tmp_path, "roce-readback.sh")
    assert res.returncode == 0, res.stderr
    have = {ln.split("=", 1)[0]: ln.split("=", 1)[1] for ln in res.stdout.splitlines() if "=" in ln}
    expected = [ln.split("=", 1) for ln in host.files["roce-expected.txt"].splitlines() if ln.strip()]
    for key, value in expected:
        if not ofed and (".enable." in key or key.endswith(".verbs_tos")):
            assert have[key] == "unavailable", key  # no mainline file: reported, not invented
            continue
        assert have[key] == value, key
    assert have["ens1f0np0.roce_rp.rpg_max_rate"] == "300000"
    assert have["ens1f0np0.roce_np.min_time_between_cnps"] == "8"
    # the push's verification reads the same output the same way: nothing left to fix on either layout
    assert readback_mismatches(host.files["roce-expected.txt"], res.stdout) == []


def test_readback_mismatch_counts_a_wrong_value_but_not_an_unavailable_knob() -> None:
    expected = "e.roce_np.enable.3=1\ne.roce_rp.rpg_max_rate=300000\ne.mtu=4200\n"
    readback = "e.roce_np.enable.3=unavailable\ne.roce_rp.rpg_max_rate=0\ne.mtu=4200\n"
    assert readback_mismatches(expected, readback) == ["e.roce_rp.rpg_max_rate=300000"]
