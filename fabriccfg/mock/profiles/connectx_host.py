"""Mock GPU host with ConnectX NICs (netmiko ``linux``): mlnx_qos, cma_roce_tos, DCQCN sysfs, scripts.

The MLNX_OFED sysfs tree ``/sys/class/net/<if>/ecn/roce_{rp,np}/...`` exists for every NIC netdev
with the driver defaults (roce.md §6.3); writes are range-checked like the driver (``write error:
Invalid argument``). ``bash roce-setup.sh`` runs the rendered script line by line with the mock shell.
"""

from __future__ import annotations

import re

from fabriccfg.inventory.models import Dcqcn, Host
from fabriccfg.mock.shell import BUILTINS, Result, ShellProfile, ShellSession
from fabriccfg.mock.ssh import DeviceState

RP_PARAMS = ("clamp_tgt_rate", "clamp_tgt_rate_ati", "rpg_time_reset", "rpg_byte_reset", "rpg_threshold",
             "rpg_max_rate", "rpg_ai_rate", "rpg_hai_rate", "rpg_gd", "rpg_min_dec_fac", "rpg_min_rate",
             "rate_to_set_on_first_cnp", "dce_tcp_g", "dce_tcp_rtt", "rate_reduce_monitor_period",
             "initial_alpha_value")
NP_DEFAULTS = {"min_time_between_cnps": 4, "cnp_dscp": 48, "cnp_802p_prio": 6}
LIMITS = {"clamp_tgt_rate": (0, 1), "clamp_tgt_rate_ati": (0, 1), "rpg_threshold": (1, 31),
          "rpg_gd": (1, 15), "rpg_min_dec_fac": (1, 100), "dce_tcp_g": (0, 1023),
          "initial_alpha_value": (1, 1023), "cnp_dscp": (0, 63), "cnp_802p_prio": (0, 7), "enable": (0, 1)}


def _sysfs_check(dev: DeviceState, path: str, value: str) -> str | None:
    text = value.strip()
    if not re.fullmatch(r"\d+", text):
        return "Invalid argument"
    name = path.rsplit("/", 1)[-1]
    if "/enable/" in path:
        name = "enable"
    lo, hi = LIMITS.get(name, (0, 2**31 - 1))
    return None if lo <= int(text) <= hi else "Invalid argument"


def _netdevs(dev: DeviceState) -> list[tuple[str, str]]:
    host = dev.device
    if isinstance(host, Host):
        return [(nic.netdev or f"eth{i}", nic.name) for i, nic in enumerate(host.nics)]
    return [("eth0", "mlx5_0")]


def _qos_state(dev: DeviceState, netdev: str) -> dict[str, object]:
    q: dict[str, dict[str, object]] = dev.extra.setdefault("mlnx_qos", {})
    return q.setdefault(netdev, {"trust": "pcp", "pfc": [0] * 8, "tc_bw": [12, 13, 12, 13, 12, 13, 12, 13],
                                 "dscp2prio": {}})


def _show_qos(state: dict[str, object]) -> str:
    pfc = state["pfc"]
    assert isinstance(pfc, list)
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {state['trust']}"]
    if state["trust"] == "dscp":
        lines.append("dscp2prio mapping:")
        overrides = state["dscp2prio"]
        assert isinstance(overrides, dict)
        for prio in range(8):
            dscps = [d for d in range(64) if overrides.get(d, d >> 3) == prio]
            lines.append(f"\tprio:{prio} dscp:{','.join(f'{d:02d}' for d in sorted(dscps, reverse=True))},")
    lines += ["Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,", "Cable len: 7",
              "PFC configuration:",
              "\tpriority    0   1   2   3   4   5   6   7",
              "\tenabled     " + "   ".join(str(x) for x in pfc) + "   ",
              "\tbuffer      " + "   ".join(str(1 if x else 0) for x in pfc) + "   "]
    tc_bw = state["tc_bw"]
    assert isinstance(tc_bw, list)
    for tc in range(8):
        lines += [f"tc: {tc} ratelimit: unlimited, tsa: ets, bw: {tc_bw[tc]}%", f"\t priority:  {tc}"]
    return "\n".join(lines) + "\n"


def _mlnx_qos(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    netdev = None
    changes: list[tuple[str, str]] = []
    k = 0
    while k < len(args):
        a = args[k]
        opt, eq, val = a.partition("=")
        if not eq and k + 1 < len(args) and a.startswith("-") and a not in ("-h",):
            val = args[k + 1]
            k += 1
        k += 1
        if opt in ("-i", "--interface"):
            netdev = val
        elif opt in ("--trust", "--pfc", "--dscp2prio", "--tc_bw", "--prio_tc", "--buffer_size",
                     "--prio2buffer", "--cable_len", "-f", "-p", "-s", "-r"):
            changes.append((opt, val))
        else:
            return f"mlnx_qos: error: unrecognized arguments: {a}\n", 2
    if netdev is None:
        return "mlnx_qos: error: the following arguments are required: -i/--interface\n", 2
    if netdev not in [n for n, _ in _netdevs(sh.dev)]:
        return f"Netlink error: No such device ({netdev})\n", 1
    state = _qos_state(sh.dev, netdev)
    for opt, val in changes:
        err = sh.config_gate(f"mlnx_qos -i {netdev} {opt} {val}")
        if err is not None:
            return f"mlnx_qos: {opt} {val}: Operation not permitted\n", 1
        if opt == "--trust":
            if val not in ("pcp", "dscp"):
                return f"mlnx_qos: error: argument --trust: invalid choice: '{val}'\n", 2
            state["trust"] = val
        elif opt in ("--pfc", "-f"):
            bits = val.split(",")
            if len(bits) != 8 or any(b not in ("0", "1") for b in bits):
                return "mlnx_qos: --pfc needs 8 comma-separated 0/1 values\n", 2
            state["pfc"] = [int(b) for b in bits]
        elif opt == "--tc_bw":
            parts = val.split(",")
            if len(parts) != 8 or not all(p.isdigit() for p in parts) or sum(int(p) for p in parts) != 100:
                return "mlnx_qos: --tc_bw needs 8 values summing to 100\n", 2
            state["tc_bw"] = [int(p) for p in parts]
        elif opt == "--dscp2prio":
            m = re.fullmatch(r"(set|del),(\d+),(\d)", val)
            if not m:
                return f"mlnx_qos: bad --dscp2prio {val}\n", 2
            d2p = state["dscp2prio"]
            assert isinstance(d2p, dict)
            if m.group(1) == "set":
                d2p[int(m.group(2))] = int(m.group(3))
            else:
                d2p.pop(int(m.group(2)), None)
        sh.config_applied()
        if sh.drop:
            return "", 0
    return _show_qos(state), 0


def _cma_roce_tos(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    dev_name, tos = None, None
    for k, a in enumerate(args):
        if a == "-d" and k + 1 < len(args):
            dev_name = args[k + 1]
        if a == "-t" and k + 1 < len(args):
            tos = args[k + 1]
    tos_map: dict[str, str] = sh.dev.extra.setdefault("roce_tos", {})
    if dev_name is None:
        return "cma_roce_tos: -d DEVICE is required\n", 1
    if tos is None:
        return f"{tos_map.get(dev_name, '0')}\n", 0
    if not tos.isdigit() or int(tos) > 255:
        return f"cma_roce_tos: invalid ToS {tos}\n", 1
    tos_map[dev_name] = tos
    sh.config_applied()
    return "", 0


def _ip(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = argv[1:]
    if args[:3] == ["link", "set", "dev"] and len(args) >= 6 and args[4] == "mtu":
        path = f"/sys/class/net/{args[3]}/mtu"
        if path not in sh.dev.files:
            return f'Cannot find device "{args[3]}"\n', 1
        err = sh.write(path, args[5] + "\n")
        return (err, 1) if err else ("", 0)
    if args[:2] == ["link", "show"] and len(args) >= 3:
        path = f"/sys/class/net/{args[2]}/mtu"
        if path not in sh.dev.files:
            return f'Device "{args[2]}" does not exist.\n', 1
        mtu = sh.dev.files[path].strip()
        return f"2: {args[2]}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu {mtu} qdisc mq state UP\n", 0
    return "Usage: ip [ OPTIONS ] OBJECT { COMMAND | help }\n", 1


class ConnectxSession(ShellSession):
    pass


ConnectxSession.commands = {**BUILTINS, "mlnx_qos": _mlnx_qos, "cma_roce_tos": _cma_roce_tos, "ip": _ip}


class ConnectxProfile(ShellProfile):
    name = "connectx-host"
    session_class = ConnectxSession

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        defaults = Dcqcn()
        for netdev, rdma in _netdevs(dev):
            base = f"/sys/class/net/{netdev}"
            dev.files[f"{base}/mtu"] = "1500\n"
            for p in RP_PARAMS:
                dev.files[f"{base}/ecn/roce_rp/{p}"] = f"{getattr(defaults, p)}\n"
            for p, v in NP_DEFAULTS.items():
                dev.files[f"{base}/ecn/roce_np/{p}"] = f"{v}\n"
            for prio in range(8):
                dev.files[f"{base}/ecn/roce_rp/enable/{prio}"] = "1\n"
                dev.files[f"{base}/ecn/roce_np/enable/{prio}"] = "1\n"
            dev.files[f"/sys/class/infiniband/{rdma}/tc/1/traffic_class"] = "0\n"
        dev.extra["write_validators"] = [(r"/sys/class/net/[^/]+/ecn/.+", _sysfs_check),
                                         (r"/sys/class/net/[^/]+/mtu", _sysfs_check)]
        dev.extra["dirs"].update({"/etc/fabriccfg/", "/usr/local/sbin/"})
        dev.running = dev.files
        dev.saved = dev.files


PROFILE = ConnectxProfile()
