#!/usr/bin/env bash
# roce-setup.sh for gpu01 (fabric roce-lab): rendered by fabriccfg; edit the inventory, not this file.
# Idempotent: every value is compared first and only written when it differs, so re-running changes nothing.
# mlnx_qos and sysfs settings do not survive a reboot: run this from a boot-time unit.
set -euo pipefail

# Every sysfs/debugfs/configfs path below is under $root: empty on a real host; a test points
# FABRICCFG_ROOT at a fake tree to run this very script with bash (a plain absolute path, no spaces).
root=${FABRICCFG_ROOT:-}
changed=0
failed=0
log() { printf '%s: %s\n' "$(hostname)" "$*"; }

# write_if_diff FILE VALUE: write VALUE into a sysfs/debugfs FILE unless it already holds it
write_if_diff() {
  local file=$1 value=$2 current
  [[ -e $file ]] || { log "missing $file"; failed=1; return 0; }
  current=$(tr -d '[:space:]' <"$file")
  if [[ $current != "$value" ]]; then
    echo "$value" >"$file"
    log "$file: $current -> $value"
    changed=1
  fi
}

# cc_dir NETDEV: the mainline-kernel DCQCN folder (debugfs cc_params of the NIC's PCI function)
cc_dir() {
  local pci
  pci=$(basename "$(readlink -f "$root/sys/class/net/$1/device")")
  mountpoint -q "$root/sys/kernel/debug" || mount -t debugfs none "$root/sys/kernel/debug"
  echo "$root/sys/kernel/debug/mlx5/$pci/cc_params"
}

# ---------------------------------------------------------------- mlx5_0 / ens1f0np0 (rail 0, 400G, 3 m to leaf-r0:swp1)
# expected PFC xoff headroom (mlx5 calculate_xoff, MTU 4200): 134416 bytes; peer pause response 905 quanta
if [[ $(cat $root/sys/class/net/ens1f0np0/mtu) != 4200 ]]; then
  ip link set dev ens1f0np0 mtu 4200; log "ens1f0np0 mtu -> 4200"; changed=1
fi
mlnx_qos -i ens1f0np0 --trust dscp >/dev/null
mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0 >/dev/null
mlnx_qos -i ens1f0np0 --cable_len 3 >/dev/null
# RDMA-CM traffic and plain verbs traffic: ToS 106 = DSCP 26 with ECT(0)
if [[ $(cat $root/sys/kernel/config/rdma_cm/mlx5_0/ports/1/default_roce_tos 2>/dev/null || true) != 106 ]]; then
  cma_roce_tos -d mlx5_0 -t 106 >/dev/null; log "mlx5_0 cma_roce_tos -> 106"; changed=1
fi
# tc/1/traffic_class exists only with MLNX_OFED/DOCA-OFED (roce.md §6.1); the inbox mlx5 driver has no such
# file, so it is written only where present and the script goes on to the mainline DCQCN branch below.
tc=$root/sys/class/infiniband/mlx5_0/tc/1/traffic_class
if [[ -e $tc ]]; then
  if [[ $(sed 's/[^0-9]//g' $tc 2>/dev/null || true) != 106 ]]; then
    echo 106 >$tc; log "mlx5_0 verbs traffic_class -> 106"; changed=1
  fi
else
  log "mlx5_0: no tc/1/traffic_class (inbox driver); verbs traffic keeps its own ToS"
fi
# DCQCN: MLNX_OFED/DOCA sysfs when present, else the mainline debugfs cc_params (names from the kernel's
# drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[]; per-priority enable has no mainline file)
ecn=$root/sys/class/net/ens1f0np0/ecn
if [[ -d $ecn/roce_np ]]; then
  write_if_diff "$ecn/roce_np/enable/3" 1
  write_if_diff "$ecn/roce_rp/enable/3" 1
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate" 0
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate_ati" 1
  write_if_diff "$ecn/roce_rp/rpg_time_reset" 300
  write_if_diff "$ecn/roce_rp/rpg_byte_reset" 32767
  write_if_diff "$ecn/roce_rp/rpg_threshold" 1
  write_if_diff "$ecn/roce_rp/rpg_max_rate" 0
  write_if_diff "$ecn/roce_rp/rpg_ai_rate" 5
  write_if_diff "$ecn/roce_rp/rpg_hai_rate" 50
  write_if_diff "$ecn/roce_rp/rpg_gd" 11
  write_if_diff "$ecn/roce_rp/rpg_min_dec_fac" 50
  write_if_diff "$ecn/roce_rp/rpg_min_rate" 1
  write_if_diff "$ecn/roce_rp/rate_to_set_on_first_cnp" 0
  write_if_diff "$ecn/roce_rp/dce_tcp_g" 1019
  write_if_diff "$ecn/roce_rp/dce_tcp_rtt" 1
  write_if_diff "$ecn/roce_rp/rate_reduce_monitor_period" 4
  write_if_diff "$ecn/roce_rp/initial_alpha_value" 1023
  write_if_diff "$ecn/roce_np/min_time_between_cnps" 4
  write_if_diff "$ecn/roce_np/cnp_dscp" 48
  write_if_diff "$ecn/roce_np/cnp_802p_prio" 6
else
  cc=$(cc_dir ens1f0np0)
  write_if_diff "$cc/rp_clamp_tgt_rate" 0
  write_if_diff "$cc/rp_clamp_tgt_rate_ati" 1
  write_if_diff "$cc/rp_time_reset" 300
  write_if_diff "$cc/rp_byte_reset" 32767
  write_if_diff "$cc/rp_threshold" 1
  write_if_diff "$cc/rp_max_rate" 0
  write_if_diff "$cc/rp_ai_rate" 5
  write_if_diff "$cc/rp_hai_rate" 50
  write_if_diff "$cc/rp_gd" 11
  write_if_diff "$cc/rp_min_dec_fac" 50
  write_if_diff "$cc/rp_min_rate" 1
  write_if_diff "$cc/rp_rate_to_set_on_first_cnp" 0
  write_if_diff "$cc/rp_dce_tcp_g" 1019
  write_if_diff "$cc/rp_dce_tcp_rtt" 1
  write_if_diff "$cc/rp_rate_reduce_monitor_period" 4
  write_if_diff "$cc/rp_initial_alpha_value" 1023
  write_if_diff "$cc/np_min_time_between_cnps" 4
  write_if_diff "$cc/np_cnp_dscp" 48
  write_if_diff "$cc/np_cnp_prio" 6
fi

# ---------------------------------------------------------------- mlx5_1 / ens2f0np0 (rail 1, 400G, 3 m to leaf-r1:Ethernet0)
# expected PFC xoff headroom (mlx5 calculate_xoff, MTU 4200): 134416 bytes; peer pause response 905 quanta
if [[ $(cat $root/sys/class/net/ens2f0np0/mtu) != 4200 ]]; then
  ip link set dev ens2f0np0 mtu 4200; log "ens2f0np0 mtu -> 4200"; changed=1
fi
mlnx_qos -i ens2f0np0 --trust dscp >/dev/null
mlnx_qos -i ens2f0np0 --pfc 0,0,0,1,0,0,0,0 >/dev/null
mlnx_qos -i ens2f0np0 --cable_len 3 >/dev/null
# RDMA-CM traffic and plain verbs traffic: ToS 106 = DSCP 26 with ECT(0)
if [[ $(cat $root/sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos 2>/dev/null || true) != 106 ]]; then
  cma_roce_tos -d mlx5_1 -t 106 >/dev/null; log "mlx5_1 cma_roce_tos -> 106"; changed=1
fi
# tc/1/traffic_class exists only with MLNX_OFED/DOCA-OFED (roce.md §6.1); the inbox mlx5 driver has no such
# file, so it is written only where present and the script goes on to the mainline DCQCN branch below.
tc=$root/sys/class/infiniband/mlx5_1/tc/1/traffic_class
if [[ -e $tc ]]; then
  if [[ $(sed 's/[^0-9]//g' $tc 2>/dev/null || true) != 106 ]]; then
    echo 106 >$tc; log "mlx5_1 verbs traffic_class -> 106"; changed=1
  fi
else
  log "mlx5_1: no tc/1/traffic_class (inbox driver); verbs traffic keeps its own ToS"
fi
# DCQCN: MLNX_OFED/DOCA sysfs when present, else the mainline debugfs cc_params (names from the kernel's
# drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[]; per-priority enable has no mainline file)
ecn=$root/sys/class/net/ens2f0np0/ecn
if [[ -d $ecn/roce_np ]]; then
  write_if_diff "$ecn/roce_np/enable/3" 1
  write_if_diff "$ecn/roce_rp/enable/3" 1
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate" 0
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate_ati" 1
  write_if_diff "$ecn/roce_rp/rpg_time_reset" 300
  write_if_diff "$ecn/roce_rp/rpg_byte_reset" 32767
  write_if_diff "$ecn/roce_rp/rpg_threshold" 1
  write_if_diff "$ecn/roce_rp/rpg_max_rate" 0
  write_if_diff "$ecn/roce_rp/rpg_ai_rate" 5
  write_if_diff "$ecn/roce_rp/rpg_hai_rate" 50
  write_if_diff "$ecn/roce_rp/rpg_gd" 11
  write_if_diff "$ecn/roce_rp/rpg_min_dec_fac" 50
  write_if_diff "$ecn/roce_rp/rpg_min_rate" 1
  write_if_diff "$ecn/roce_rp/rate_to_set_on_first_cnp" 0
  write_if_diff "$ecn/roce_rp/dce_tcp_g" 1019
  write_if_diff "$ecn/roce_rp/dce_tcp_rtt" 1
  write_if_diff "$ecn/roce_rp/rate_reduce_monitor_period" 4
  write_if_diff "$ecn/roce_rp/initial_alpha_value" 1023
  write_if_diff "$ecn/roce_np/min_time_between_cnps" 4
  write_if_diff "$ecn/roce_np/cnp_dscp" 48
  write_if_diff "$ecn/roce_np/cnp_802p_prio" 6
else
  cc=$(cc_dir ens2f0np0)
  write_if_diff "$cc/rp_clamp_tgt_rate" 0
  write_if_diff "$cc/rp_clamp_tgt_rate_ati" 1
  write_if_diff "$cc/rp_time_reset" 300
  write_if_diff "$cc/rp_byte_reset" 32767
  write_if_diff "$cc/rp_threshold" 1
  write_if_diff "$cc/rp_max_rate" 0
  write_if_diff "$cc/rp_ai_rate" 5
  write_if_diff "$cc/rp_hai_rate" 50
  write_if_diff "$cc/rp_gd" 11
  write_if_diff "$cc/rp_min_dec_fac" 50
  write_if_diff "$cc/rp_min_rate" 1
  write_if_diff "$cc/rp_rate_to_set_on_first_cnp" 0
  write_if_diff "$cc/rp_dce_tcp_g" 1019
  write_if_diff "$cc/rp_dce_tcp_rtt" 1
  write_if_diff "$cc/rp_rate_reduce_monitor_period" 4
  write_if_diff "$cc/rp_initial_alpha_value" 1023
  write_if_diff "$cc/np_min_time_between_cnps" 4
  write_if_diff "$cc/np_cnp_dscp" 48
  write_if_diff "$cc/np_cnp_prio" 6
fi

# ---------------------------------------------------------------- mlx5_2 / ens3f0np0 (rail 2, 400G, 3 m to leaf-r2:Ethernet1/1)
# expected PFC xoff headroom (mlx5 calculate_xoff, MTU 4200): 134416 bytes; peer pause response 905 quanta
if [[ $(cat $root/sys/class/net/ens3f0np0/mtu) != 4200 ]]; then
  ip link set dev ens3f0np0 mtu 4200; log "ens3f0np0 mtu -> 4200"; changed=1
fi
mlnx_qos -i ens3f0np0 --trust dscp >/dev/null
mlnx_qos -i ens3f0np0 --pfc 0,0,0,1,0,0,0,0 >/dev/null
mlnx_qos -i ens3f0np0 --cable_len 3 >/dev/null
# RDMA-CM traffic and plain verbs traffic: ToS 106 = DSCP 26 with ECT(0)
if [[ $(cat $root/sys/kernel/config/rdma_cm/mlx5_2/ports/1/default_roce_tos 2>/dev/null || true) != 106 ]]; then
  cma_roce_tos -d mlx5_2 -t 106 >/dev/null; log "mlx5_2 cma_roce_tos -> 106"; changed=1
fi
# tc/1/traffic_class exists only with MLNX_OFED/DOCA-OFED (roce.md §6.1); the inbox mlx5 driver has no such
# file, so it is written only where present and the script goes on to the mainline DCQCN branch below.
tc=$root/sys/class/infiniband/mlx5_2/tc/1/traffic_class
if [[ -e $tc ]]; then
  if [[ $(sed 's/[^0-9]//g' $tc 2>/dev/null || true) != 106 ]]; then
    echo 106 >$tc; log "mlx5_2 verbs traffic_class -> 106"; changed=1
  fi
else
  log "mlx5_2: no tc/1/traffic_class (inbox driver); verbs traffic keeps its own ToS"
fi
# DCQCN: MLNX_OFED/DOCA sysfs when present, else the mainline debugfs cc_params (names from the kernel's
# drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[]; per-priority enable has no mainline file)
ecn=$root/sys/class/net/ens3f0np0/ecn
if [[ -d $ecn/roce_np ]]; then
  write_if_diff "$ecn/roce_np/enable/3" 1
  write_if_diff "$ecn/roce_rp/enable/3" 1
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate" 0
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate_ati" 1
  write_if_diff "$ecn/roce_rp/rpg_time_reset" 300
  write_if_diff "$ecn/roce_rp/rpg_byte_reset" 32767
  write_if_diff "$ecn/roce_rp/rpg_threshold" 1
  write_if_diff "$ecn/roce_rp/rpg_max_rate" 0
  write_if_diff "$ecn/roce_rp/rpg_ai_rate" 5
  write_if_diff "$ecn/roce_rp/rpg_hai_rate" 50
  write_if_diff "$ecn/roce_rp/rpg_gd" 11
  write_if_diff "$ecn/roce_rp/rpg_min_dec_fac" 50
  write_if_diff "$ecn/roce_rp/rpg_min_rate" 1
  write_if_diff "$ecn/roce_rp/rate_to_set_on_first_cnp" 0
  write_if_diff "$ecn/roce_rp/dce_tcp_g" 1019
  write_if_diff "$ecn/roce_rp/dce_tcp_rtt" 1
  write_if_diff "$ecn/roce_rp/rate_reduce_monitor_period" 4
  write_if_diff "$ecn/roce_rp/initial_alpha_value" 1023
  write_if_diff "$ecn/roce_np/min_time_between_cnps" 4
  write_if_diff "$ecn/roce_np/cnp_dscp" 48
  write_if_diff "$ecn/roce_np/cnp_802p_prio" 6
else
  cc=$(cc_dir ens3f0np0)
  write_if_diff "$cc/rp_clamp_tgt_rate" 0
  write_if_diff "$cc/rp_clamp_tgt_rate_ati" 1
  write_if_diff "$cc/rp_time_reset" 300
  write_if_diff "$cc/rp_byte_reset" 32767
  write_if_diff "$cc/rp_threshold" 1
  write_if_diff "$cc/rp_max_rate" 0
  write_if_diff "$cc/rp_ai_rate" 5
  write_if_diff "$cc/rp_hai_rate" 50
  write_if_diff "$cc/rp_gd" 11
  write_if_diff "$cc/rp_min_dec_fac" 50
  write_if_diff "$cc/rp_min_rate" 1
  write_if_diff "$cc/rp_rate_to_set_on_first_cnp" 0
  write_if_diff "$cc/rp_dce_tcp_g" 1019
  write_if_diff "$cc/rp_dce_tcp_rtt" 1
  write_if_diff "$cc/rp_rate_reduce_monitor_period" 4
  write_if_diff "$cc/rp_initial_alpha_value" 1023
  write_if_diff "$cc/np_min_time_between_cnps" 4
  write_if_diff "$cc/np_cnp_dscp" 48
  write_if_diff "$cc/np_cnp_prio" 6
fi

# ---------------------------------------------------------------- mlx5_3 / ens4f0np0 (rail 3, 400G, 3 m to leaf-r3:Ethernet1/1)
# expected PFC xoff headroom (mlx5 calculate_xoff, MTU 4200): 134416 bytes; peer pause response 905 quanta
if [[ $(cat $root/sys/class/net/ens4f0np0/mtu) != 4200 ]]; then
  ip link set dev ens4f0np0 mtu 4200; log "ens4f0np0 mtu -> 4200"; changed=1
fi
mlnx_qos -i ens4f0np0 --trust dscp >/dev/null
mlnx_qos -i ens4f0np0 --pfc 0,0,0,1,0,0,0,0 >/dev/null
mlnx_qos -i ens4f0np0 --cable_len 3 >/dev/null
# RDMA-CM traffic and plain verbs traffic: ToS 106 = DSCP 26 with ECT(0)
if [[ $(cat $root/sys/kernel/config/rdma_cm/mlx5_3/ports/1/default_roce_tos 2>/dev/null || true) != 106 ]]; then
  cma_roce_tos -d mlx5_3 -t 106 >/dev/null; log "mlx5_3 cma_roce_tos -> 106"; changed=1
fi
# tc/1/traffic_class exists only with MLNX_OFED/DOCA-OFED (roce.md §6.1); the inbox mlx5 driver has no such
# file, so it is written only where present and the script goes on to the mainline DCQCN branch below.
tc=$root/sys/class/infiniband/mlx5_3/tc/1/traffic_class
if [[ -e $tc ]]; then
  if [[ $(sed 's/[^0-9]//g' $tc 2>/dev/null || true) != 106 ]]; then
    echo 106 >$tc; log "mlx5_3 verbs traffic_class -> 106"; changed=1
  fi
else
  log "mlx5_3: no tc/1/traffic_class (inbox driver); verbs traffic keeps its own ToS"
fi
# DCQCN: MLNX_OFED/DOCA sysfs when present, else the mainline debugfs cc_params (names from the kernel's
# drivers/infiniband/hw/mlx5/cong.c mlx5_ib_dbg_cc_name[]; per-priority enable has no mainline file)
ecn=$root/sys/class/net/ens4f0np0/ecn
if [[ -d $ecn/roce_np ]]; then
  write_if_diff "$ecn/roce_np/enable/3" 1
  write_if_diff "$ecn/roce_rp/enable/3" 1
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate" 0
  write_if_diff "$ecn/roce_rp/clamp_tgt_rate_ati" 1
  write_if_diff "$ecn/roce_rp/rpg_time_reset" 300
  write_if_diff "$ecn/roce_rp/rpg_byte_reset" 32767
  write_if_diff "$ecn/roce_rp/rpg_threshold" 1
  write_if_diff "$ecn/roce_rp/rpg_max_rate" 0
  write_if_diff "$ecn/roce_rp/rpg_ai_rate" 5
  write_if_diff "$ecn/roce_rp/rpg_hai_rate" 50
  write_if_diff "$ecn/roce_rp/rpg_gd" 11
  write_if_diff "$ecn/roce_rp/rpg_min_dec_fac" 50
  write_if_diff "$ecn/roce_rp/rpg_min_rate" 1
  write_if_diff "$ecn/roce_rp/rate_to_set_on_first_cnp" 0
  write_if_diff "$ecn/roce_rp/dce_tcp_g" 1019
  write_if_diff "$ecn/roce_rp/dce_tcp_rtt" 1
  write_if_diff "$ecn/roce_rp/rate_reduce_monitor_period" 4
  write_if_diff "$ecn/roce_rp/initial_alpha_value" 1023
  write_if_diff "$ecn/roce_np/min_time_between_cnps" 4
  write_if_diff "$ecn/roce_np/cnp_dscp" 48
  write_if_diff "$ecn/roce_np/cnp_802p_prio" 6
else
  cc=$(cc_dir ens4f0np0)
  write_if_diff "$cc/rp_clamp_tgt_rate" 0
  write_if_diff "$cc/rp_clamp_tgt_rate_ati" 1
  write_if_diff "$cc/rp_time_reset" 300
  write_if_diff "$cc/rp_byte_reset" 32767
  write_if_diff "$cc/rp_threshold" 1
  write_if_diff "$cc/rp_max_rate" 0
  write_if_diff "$cc/rp_ai_rate" 5
  write_if_diff "$cc/rp_hai_rate" 50
  write_if_diff "$cc/rp_gd" 11
  write_if_diff "$cc/rp_min_dec_fac" 50
  write_if_diff "$cc/rp_min_rate" 1
  write_if_diff "$cc/rp_rate_to_set_on_first_cnp" 0
  write_if_diff "$cc/rp_dce_tcp_g" 1019
  write_if_diff "$cc/rp_dce_tcp_rtt" 1
  write_if_diff "$cc/rp_rate_reduce_monitor_period" 4
  write_if_diff "$cc/rp_initial_alpha_value" 1023
  write_if_diff "$cc/np_min_time_between_cnps" 4
  write_if_diff "$cc/np_cnp_dscp" 48
  write_if_diff "$cc/np_cnp_prio" 6
fi

log "done (changed=$changed failed=$failed)"
exit "$failed"
