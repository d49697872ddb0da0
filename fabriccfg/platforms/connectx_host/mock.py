"""Mock GPU host with ConnectX NICs (netmiko ``linux``): mlnx_qos, cma_roce_tos, DCQCN sysfs, scripts.

The MLNX_OFED sysfs tree ``/sys/class/net/<if>/ecn/roce_{rp,np}/...`` exists for every NIC netdev
with the driver defaults (roce.md §6.3); writes are range-checked like the driver (``write error:
Invalid argument``). ``bash roce-setup.sh`` runs the rendered script line by line with the mock shell.
"""

from __future__ import annotations

import re

from fabriccfg.inventory.models import Dcqcn, Host
from fabriccfg.mock.shell import BUILTINS, Result, ShellProfile, ShellSession, _expand, split_list
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
    err = sh.write(f"/sys/kernel/config/rdma_cm/{dev_name}/ports/1/default_roce_tos", tos + "\n")
    return (err, 1) if err else ("", 0)


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


# ----------------------------------------------------------------------------- rendered scripts
_FUNC_ONE_LINE = re.compile(r"^\w+\(\)\s*\{.*\}\s*$")
_FUNC_START = re.compile(r"^\w+\(\)\s*\{\s*$")
_IF = re.compile(r"^if \[\[ (.*) \]\]; then$")
_SUBST = re.compile(r"\$\((val|trust|pfc) ([^)]*)\)")


class ScriptRunner:
    """Runs the rendered roce-setup.sh / roce-readback.sh the simple way.

    Supported: comments, ``set``, function definitions (skipped: ``log``, ``write_if_diff``, ``val``,
    ``trust`` and ``pfc`` are built in), ``if [[ -d|-e|-r PATH ]]`` and ``if [[ $(cat|sed .. FILE) != V ]]``
    with ``else``/``fi``, ``VAR=value``, ``exit N``; every other line runs in the mock shell.
    """

    def __init__(self, sh: ShellSession) -> None:
        self.sh = sh
        self.out: list[str] = []

    def _file_value(self, text: str) -> str | None:
        m = re.search(r"(?:^|[\s<\"])(/[\w.\-][\w/.\-]*)", text)
        return self.sh.read(m.group(1)) if m else None

    def cond(self, expr: str) -> bool:
        expr = _expand(expr, self.sh.env).strip()
        m = re.fullmatch(r"(!\s+)?-([der])\s+(\S+)", expr)
        if m:
            path = m.group(3).strip('"')
            ok = self.sh.isdir(path) if m.group(2) == "d" else (self.sh.read(path) is not None
                                                                or self.sh.isdir(path))
            return ok != bool(m.group(1))
        m = re.fullmatch(r"\$\((.*)\)\s*(!=|==|=)\s*\"?([^\"]*)\"?", expr)
        if m:
            raw = self._file_value(m.group(1))
            value = "" if raw is None else raw.strip()
            if "[^0-9]" in m.group(1):
                value = re.sub(r"[^0-9]", "", value)
            same = value == m.group(3)
            return not same if m.group(2) == "!=" else same
        _, status = self.sh.run_list(expr)
        return status == 0

    def subst(self, text: str) -> str:
        def one(m: re.Match[str]) -> str:
            fn, arg = m.group(1), m.group(2).strip().strip('"')
            if fn == "val":
                raw = self.sh.read(arg)
                if raw is None:
                    return "unavailable"
                return re.sub(r"^[^0-9]*", "", raw).rstrip()
            state = _qos_state(self.sh.dev, arg)
            if fn == "trust":
                return str(state["trust"])
            pfc = state["pfc"]
            assert isinstance(pfc, list)
            return ",".join(str(x) for x in pfc)
        return _SUBST.sub(one, text)

    def log(self, msg: str) -> None:
        self.out.append(f"{self.sh.dev.name}: {msg}\n")

    def write_if_diff(self, path: str, value: str) -> int:
        current = self.sh.read(path)
        if current is None:
            self.log(f"missing {path}")
            self.sh.env["failed"] = "1"
            return 0
        cur = "".join(current.split())
        if cur != value:
            err = self.sh.write(path, value + "\n")
            if err:
                self.out.append(err)
                return 1
            self.log(f"{path}: {cur} -> {value}")
            self.sh.env["changed"] = "1"
        return 0

    def statement(self, segment: str) -> tuple[int, bool]:
        """Run one simple command; (status, exit requested)."""
        text = self.subst(_expand(segment.strip(), self.sh.env))
        words = text.split()
        if not words:
            return 0, False
        if words[0] == "exit":
            return int(words[1].strip('"')) if len(words) > 1 and words[1].strip('"').isdigit() else 0, True
        if words[0] == "log":
            self.log(text[4:].strip().strip('"'))
            return 0, False
        if words[0] == "write_if_diff" and len(words) == 3:
            return self.write_if_diff(words[1].strip('"'), words[2].strip('"')), False
        out, status = self.sh.run_list(text)
        self.out.append(out)
        return status, False

    def run(self, text: str) -> Result:
        stack: list[tuple[bool, bool, bool]] = []  # (parent active, condition, in else)
        in_func = False
        errexit = False
        status = 0
        for raw in text.splitlines():
            line = raw.strip()
            if in_func:
                in_func = raw.rstrip() != "}"
                continue
            if not line or line.startswith("#"):
                continue
            if _FUNC_START.match(line):
                in_func = True
                continue
            if _FUNC_ONE_LINE.match(line):
                continue
            active = all(p and (c != e) for p, c, e in stack)
            m = _IF.match(line)
            if m:
                stack.append((active, self.cond(m.group(1)) if active else False, False))
                continue
            if line == "else" and stack:
                p, c, _ = stack.pop()
                stack.append((p, c, True))
                continue
            if line == "fi" and stack:
                stack.pop()
                continue
            if not active:
                continue
            if line.startswith("set "):
                errexit = errexit or "e" in line.split()[1]
                continue
            for _, segment in split_list(line):
                status, stop = self.statement(segment)
                if stop:
                    return "".join(self.out), status
                if status != 0 and errexit:
                    return "".join(self.out), status
        return "".join(self.out), status


def _bash(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    args = [a for a in argv[1:] if not a.startswith("-")]
    if not args or argv[1:2] == ["-c"]:
        return BUILTINS["bash"](sh, argv, stdin)
    text = sh.read(args[0])
    if text is None:
        return f"bash: {args[0]}: No such file or directory\n", 127
    saved = dict(sh.env)
    try:
        return ScriptRunner(sh).run(text)
    finally:
        status = sh.env.get("?", "0")
        sh.env = saved
        sh.env["?"] = status


class ConnectxSession(ShellSession):
    pass


ConnectxSession.commands = {**BUILTINS, "mlnx_qos": _mlnx_qos, "cma_roce_tos": _cma_roce_tos, "ip": _ip,
                            "bash": _bash, "sh": _bash}


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
            dev.files[f"/sys/kernel/config/rdma_cm/{rdma}/ports/1/default_roce_tos"] = "0\n"
        dev.extra["write_validators"] = [(r"/sys/class/net/[^/]+/ecn/.+", _sysfs_check),
                                         (r"/sys/class/net/[^/]+/mtu", _sysfs_check)]
        dev.extra["dirs"].update({"/etc/fabriccfg/", "/usr/local/sbin/"})
        dev.running = dev.files
        dev.saved = dev.files


PROFILE = ConnectxProfile()
