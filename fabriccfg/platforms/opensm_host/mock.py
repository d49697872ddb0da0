"""Mock OpenSM / SHARP AM host (netmiko ``linux``): files under /etc, systemd services, a config check.

``opensm -F FILE -c OUT`` behaves like OpenSM 3.3: unknown keys print ``Unrecognized token: "KEY"``
and the exit status stays 0 (as the real one), so a pre-check greps the output. ``systemctl restart
opensmd`` fails when the config cannot be parsed (a line without a value, a bad boolean) or
partitions.conf has no terminated Default line, so push's restore path can be exercised.
"""

from __future__ import annotations

import re

from fabriccfg.mock.shell import BUILTINS, Result, ShellProfile, ShellSession
from fabriccfg.mock.ssh import DeviceState


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Keys of upstream OpenSM 3.3.23 (`opensm -c` output on Debian).
UPSTREAM_KEYS = _words("""
guid m_key m_key_lease_period m_key_protection_level m_key_lookup sm_key sa_key subnet_prefix lmc lmc_esp0
sm_sl packet_life_time vl_stall_count leaf_vl_stall_count head_of_queue_lifetime leaf_head_of_queue_lifetime
max_op_vls force_link_speed force_link_speed_ext force_link_width fdr10 subnet_timeout
local_phy_errors_threshold overrun_errors_threshold use_mfttop partition_config_file
no_partition_enforcement part_enforce allow_both_pkeys keep_pkey_indexes sm_assigned_guid sweep_interval
reassign_lids force_heavy_sweep sweep_on_trap port_profile_switch_nodes port_prof_ignore_file
hop_weights_file port_search_ordering_file routing_engine avoid_throttled_links connect_roots
use_ucast_cache lid_matrix_dump_file lfts_file root_guid_file cn_guid_file io_guid_file quasi_ftree_indexing
max_reverse_hops ids_guid_file guid_routing_order_file do_mesh_analysis lash_start_vl nue_max_num_vls
nue_include_switches port_shifting scatter_ports guid_routing_order_no_scatter sa_db_file sa_db_dump
torus_config sm_priority ignore_other_sm sminfo_polling_timeout polling_retry_number honor_guid2lid_file
max_wire_smps max_wire_smps2 max_smps_timeout transaction_timeout transaction_retries
long_transaction_timeout max_msg_fifo_timeout single_thread daemon sm_inactive babbling_port_policy
drop_event_subscriptions ipoib_mcgroup_creation_validation mcgroup_join_validation
use_original_extended_sa_rates_only use_optimized_slvl fsync_high_avail_files perfmgr perfmgr_redir
perfmgr_sweep_time_s perfmgr_max_outstanding_queries perfmgr_ignore_cas perfmgr_rm_nodes perfmgr_log_errors
perfmgr_query_cpi perfmgr_xmit_wait_log perfmgr_xmit_wait_threshold event_db_dump_file event_plugin_name
event_plugin_options node_name_map_name log_flags force_log_flush log_file log_max_size accum_log_file
per_module_logging_file dump_files_dir enable_quirks no_clients_rereg disable_multicast exit_on_fatal
console console_port qos qos_policy_file suppress_sl2vl_mad_status_errors qos_max_vls qos_high_limit
qos_vlarb_high qos_vlarb_low qos_sl2vl qos_ca_max_vls qos_ca_high_limit qos_ca_vlarb_high qos_ca_vlarb_low
qos_ca_sl2vl qos_sw0_max_vls qos_sw0_high_limit qos_sw0_vlarb_high qos_sw0_vlarb_low qos_sw0_sl2vl
qos_swe_max_vls qos_swe_high_limit qos_swe_vlarb_high qos_swe_vlarb_low qos_swe_sl2vl qos_rtr_max_vls
qos_rtr_high_limit qos_rtr_vlarb_high qos_rtr_vlarb_low qos_rtr_sl2vl congestion_control cc_key
cc_max_outstanding_mads cc_sw_cong_setting_control_map cc_sw_cong_setting_victim_mask
cc_sw_cong_setting_credit_mask cc_sw_cong_setting_threshold cc_sw_cong_setting_packet_size
cc_sw_cong_setting_credit_starvation_threshold cc_sw_cong_setting_credit_starvation_return_delay
cc_sw_cong_setting_marking_rate cc_ca_cong_setting_port_control cc_ca_cong_setting_control_map
cc_ca_cong_setting_ccti_timer cc_ca_cong_setting_ccti_increase cc_ca_cong_setting_trigger_threshold
cc_ca_cong_setting_ccti_min cc_cct prefix_routes_file consolidate_ipv6_snm_req log_prefix
""")

# MLNX OpenSM (MLNX_OFED / UFM) extras seen in NVIDIA field configs (ib.md §3-§4).
MLNX_KEYS = UPSTREAM_KEYS | _words("""
sharp_enabled routing_threads_num smp_threads gmp_threads max_wire_smps_per_device enable_inc_mc_routing
ar_tree_asymmetric_flow mepi_cache_enabled osm_stats_interval pgrp_policy_file device_configuration_file
ar_enable shield_enable adv_routing_engine ar_mode
""")

BOOL_KEYS = frozenset({"qos", "accum_log_file", "force_log_flush", "use_ucast_cache", "connect_roots",
                       "avoid_throttled_links", "perfmgr", "congestion_control", "ignore_other_sm",
                       "honor_guid2lid_file", "allow_both_pkeys", "keep_pkey_indexes", "daemon"})

SHARP_KEYS = _words("""
ib_port_guid max_mads_on_the_wire timeout retries am_key sa_key sharp_sl support_multicast
ignore_host_guids_file ignore_sm_guids smx_enabled_protocols smx_protocol smx_sock_interface
smx_sock_addr_family smx_sock_port smx_sock_backlog smx_unix_sock_name smx_ucx_interface log_file
log_verbosity syslog_verbosity max_log_backups max_log_size accumulate_log persistent_path dump_path
daemonize pid_file topology_type trees_file max_tree_radix fabric_lst_file lst_file_timeout lst_file_retries
fabric_smdb_file fabric_virt_file fabric_update_interval root_guids_file enable_parallel_links
job_reconnection_timeout allow_remote_sm reservation_mode enable_topology_api ib_qpc_sl ib_sat_qpc_sl
ib_qpc_pkey device_configuration_file
""")


def _keys_for(dev: DeviceState) -> frozenset[str]:
    flavour = dev.fabric.ib.opensm_flavour if dev.fabric is not None and dev.fabric.ib else "upstream"
    return MLNX_KEYS if flavour == "mlnx" else UPSTREAM_KEYS


def parse_conf(text: str, known: frozenset[str]) -> tuple[list[str], list[str]]:
    """(unknown keys, syntax errors) of a ``key value`` file."""
    unknown: list[str] = []
    errors: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        key, _, value = line.partition(" ")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            errors.append(f"line {n}: bad key {key!r}")
            continue
        if key not in known:
            unknown.append(key)
            continue
        if not value.strip():
            errors.append(f"line {n}: {key} has no value")
        elif key in BOOL_KEYS and value.strip() not in ("TRUE", "FALSE"):
            errors.append(f"line {n}: {key} must be TRUE or FALSE")
    return unknown, errors


def check_partitions(text: str) -> str | None:
    body = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    if not body:
        return "partitions.conf is empty"
    joined = " ".join(body)
    for stmt in [s.strip() for s in joined.split(";") if s.strip()]:
        if ":" not in stmt:
            return f"partitions.conf: bad partition definition {stmt[:60]!r}"
    if not joined.rstrip().endswith(";"):
        return "partitions.conf: last definition is not terminated by ';'"
    return None


def _opensm_check(dev: DeviceState) -> str | None:
    conf = dev.files.get("/etc/opensm/opensm.conf")
    if conf is None:
        return "/etc/opensm/opensm.conf missing"
    _, errors = parse_conf(conf, _keys_for(dev))
    if errors:
        return errors[0]
    part = dev.files.get("/etc/opensm/partitions.conf")
    return check_partitions(part) if part is not None else None


def _sharp_check(dev: DeviceState) -> str | None:
    conf = dev.files.get("/etc/sharp/sharp_am.cfg")
    if conf is None:
        return None
    unknown, errors = parse_conf(conf, SHARP_KEYS)
    if unknown:
        return f"unknown parameter {unknown[0]}"
    return errors[0] if errors else None


def _opensm(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    real = sh.dev.extra.get("real_opensm")  # ibsim backend, upstream flavour: the real parser answers
    if real is not None:
        got: Result | None = real(sh, argv)
        if got is not None:
            return got
    args = argv[1:]
    conf = out = None
    k = 0
    while k < len(args):
        if args[k] in ("-F", "--config") and k + 1 < len(args):
            conf = args[k + 1]
            k += 2
            continue
        if args[k] in ("-c", "--create-config") and k + 1 < len(args):
            out = args[k + 1]
            k += 2
            continue
        if args[k] in ("-V", "--version"):
            return "-------------------------------------------------\nOpenSM 3.3.23\n", 0
        k += 1
    lines = ["-------------------------------------------------", "OpenSM 3.3.23"]
    if conf is not None:
        text = sh.read(conf)
        lines.append(f"Config file is `{conf}`:")
        if text is None:
            lines.append(f" Can't open config file {conf}")
        else:
            lines.append(f" Reading Cached Option File: {conf}")
            unknown, errors = parse_conf(text, _keys_for(sh.dev))
            for raw in text.splitlines():
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                key, _, value = line.partition(" ")
                if key in unknown:
                    lines.append(f' Unrecognized token: "{key}"')
                else:
                    lines.append(f" Loading Cached Option:{key} = {value.strip()}")
            lines += [f" Error: {e}" for e in errors]
    lines.append("Command Line Arguments:")
    if out is not None:
        lines.append(f" Creating config file template '{out}'.")
        sh.dev.files[sh.path(out)] = sh.read(conf) or "" if conf else ""
        lines.append(" Log File: /var/log/opensm.log")
        lines.append("-------------------------------------------------")
        return "\n".join(lines) + "\n", 0
    return "\n".join(lines) + "\n", 0


def _sharp_am(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    if "-O" in args and args.index("-O") + 1 < len(args):
        path = args[args.index("-O") + 1]
        text = sh.read(path)
        if text is None:
            return f"sharp_am: cannot open {path}\n", 1
        unknown, errors = parse_conf(text, SHARP_KEYS)
        msgs = [f"Unknown parameter: {u}" for u in unknown] + errors
        return "".join(m + "\n" for m in msgs) or "Configuration file is valid\n", 1 if msgs else 0
    return "sharp_am: use -O FILE to check a configuration file\n", 1


DEFAULT_OPENSM = """# opensm.conf (factory)
sm_priority 0
routing_engine minhop
lmc 0
partition_config_file /etc/opensm/partitions.conf
qos FALSE
sweep_interval 10
log_file /var/log/opensm.log
"""


class OpenSmSession(ShellSession):
    pass


OpenSmSession.commands = {**BUILTINS, "opensm": _opensm, "sharp_am": _sharp_am}


class OpenSmProfile(ShellProfile):
    name = "opensm-host"
    session_class = OpenSmSession

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.files["/etc/opensm/opensm.conf"] = DEFAULT_OPENSM
        dev.files["/etc/opensm/partitions.conf"] = "Default=0x7fff,ipoib:ALL=full;\n"
        dev.extra["dirs"].update({"/etc/opensm/", "/etc/sharp/"})
        services = {"ssh": "active", "opensmd": "active"}
        fab = dev.fabric
        sharp = fab.ib.sharp if fab is not None and fab.ib is not None else None
        ib = fab.ib if fab is not None else None
        sms = {sm.device for sm in ib.subnet_managers} if ib is not None else set()
        if sharp is not None and sharp.enabled and (sharp.am_host == dev.name or dev.name in sms):
            services["sharp_am"] = "active"
            dev.files["/etc/sharp/sharp_am.cfg"] = "# sharp_am.cfg (factory)\nib_port_guid 0\n"
        dev.extra["services"] = services
        dev.extra["service_checks"] = {"opensmd": _opensm_check, "sharp_am": _sharp_check}
        dev.running = dev.files
        dev.saved = dev.files


PROFILE = OpenSmProfile()
