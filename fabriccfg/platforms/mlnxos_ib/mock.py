"""Mock MLNX-OS (NVIDIA Quantum MQM8700) CLI for netmiko ``mellanox_mlnxos``.

Prompts ``NAME [standalone: master] >``/``#``/``(config) #``/``(config interface ib 1/1) #``; interface
lines are stored flat (``interface ib 1/1 mtu 4K force``) as MLNX-OS shows them. Saved configs are
named files (``initial`` active); ``configuration write to NAME`` / ``configuration switch-to NAME``
give push a backup to switch back to.
"""

from __future__ import annotations

import time

from fabriccfg.mock import mibs as _m
from fabriccfg.mock.confmode import ConfNode, Grammar, ModalProfile, ModalSession, Mode, Rule
from fabriccfg.mock.ssh import DeviceState

_F = r"(?: force)?"
_PORT = r"1/\d+(?:/\d+)?"
_PORTS = rf"{_PORT}(?:-{_PORT})?"

IB_IF = Mode("ib-if", flatten=True, rules=[
    Rule(rf"mtu (?P<v>256|512|1K|2K|4K){_F}"),
    Rule(rf"speed (?P<v>[a-z0-9 ,]+?){_F}"),
    Rule(rf"width (?P<v>[0-9x ,]+?){_F}"),
    Rule(rf"op-vls (?P<v>\d+){_F}"),
    Rule(rf"module-type (?P<v>qsfp|qsfp-split-2|qsfp-split-4){_F}"),
    Rule(r"shutdown"),
    Rule(r"description (?P<v>.+)"),
    Rule(rf"ib-speed (?P<v>\S+){_F}"),
    Rule(r"split-ready"),
])

CONFIG = Mode("config", rules=[
    Rule(r"hostname (?P<v>\S+)"),
    Rule(r"ib sm"),
    Rule(r"ib sm (?:priority|sm-priority|routing-engines|root-guid|lmc|sweep-interval|max-op-vls"
         r"|subnet-prefix"
         r"|babbling-policy|log-verbosity|sm-sl|lid-mask-control|mtu|ib-mtu|rate) (?P<v>.+)"),
    Rule(r"ib sm (?:accum-log-file|allow-both-pkeys|reset-config|qos|sharp enable|sharp ignore)"),
    Rule(r"ib smnode (?P<n>\S+)(?: (?:enable|disable))?"),
    Rule(r"ib smnode (?P<n>\S+) sm-priority (?P<v>\d+)"),
    Rule(r"ib partition (?P<n>\S+)"),
    Rule(rf"ib partition (?P<n>\S+) pkey (?P<v>0x[0-9a-fA-F]{{1,4}}){_F}"),
    Rule(rf"ib partition (?P<n>\S+) member (?P<m>\S+) type (?P<v>full|limited|both){_F}"),
    Rule(rf"ib partition (?P<n>\S+) member (?P<m>\S+){_F}"),
    Rule(rf"ib partition (?P<n>\S+) ipoib{_F}"),
    Rule(rf"ib partition (?P<n>\S+) defmember (?P<v>full|limited|both){_F}"),
    Rule(rf"ib partition (?P<n>\S+) mtu (?P<v>256|512|1K|2K|4K){_F}"),
    Rule(rf"ib partition (?P<n>\S+) (?:rate|sl|scope) (?P<v>[\d.]+){_F}"),
    Rule(r"system profile ib(?: (?P<v>[a-z-]+(?: [a-z-]+)*))?"),
    Rule(r"system manage inband-ib"),
    Rule(r"(?:snmp-server|ntp|logging|ssh|web|username|banner|clock|ip|ipv6|aaa|lldp|cli|protocol) .+"),
    Rule(rf"interface ib (?P<p>{_PORTS})", mode="ib-if", label="(config interface ib {1})"),
    Rule(rf"interface ib (?P<p>{_PORTS}) (?P<rest>.+)", inner="ib-if"),
])

GRAMMAR = Grammar([CONFIG, IB_IF])
RELEASE = "3.11.2016"


class MlnxosSession(ModalSession):
    error_format = '% Unrecognized command "{line}".\nType "?" for help.'
    grammar = GRAMMAR

    def __init__(self, dev: DeviceState) -> None:
        super().__init__(dev)
        self.level = 0  # 0 exec, 1 enable, 2 config

    @property
    def files(self) -> dict[str, ConfNode]:
        files: dict[str, ConfNode] = self.dev.extra["files"]
        return files

    def banner(self) -> str:
        return f"\nNVIDIA MLNX-OS Switch Management\n\nLast login: {time.ctime()} from 127.0.0.1\n"

    def prompt(self) -> str:
        host = f"{self.dev.name} [standalone: master] "
        if self.level == 0:
            return host + "> "
        if self.level == 1:
            return host + "# "
        label = self.editor.frame.label if self.editor else ""
        return host + (label or "(config)") + " # "

    def _save_to(self, name: str) -> None:
        self.files[name] = self.dev.running.copy()
        if name == self.dev.extra["active"]:
            self.dev.saved = self.files[name]

    def _switch_to(self, name: str) -> None:
        self.dev.extra["active"] = name
        self.dev.saved = self.files[name]
        self.dev.running = self.files[name].copy()
        if self.editor is not None:
            self.enter_config()
        self._sm_follows()

    def _sm_follows(self) -> None:
        """The ibsim backend's embedded SM follows the running ``ib sm`` configuration."""
        hook = self.dev.extra.get("embedded_sm")
        if hook is not None:
            hook(self.dev)

    def show_running(self) -> str:
        lines = [
            "##",
            f'## Running database "{self.dev.extra["active"]}"',
            f"## Generated at {time.strftime('%Y/%m/%d %H:%M:%S +0000', time.gmtime())}",
            f"## Hostname: {self.dev.name}",
            f"## Product release: {RELEASE}",
            "##",
            "",
        ]
        lines += ["   " + ln for ln in self.dev.running.flat()]
        return "\n".join(lines) + "\n"

    def execute(self, line: str) -> str:
        cmd = " ".join(line.split())
        if not cmd:
            return ""
        words = cmd.split()
        # commands valid in every mode
        if cmd in ("no cli session paging enable", "cli session paging enable") or \
                cmd.startswith("cli session terminal") or cmd.startswith("terminal "):
            return ""
        if cmd == "exit":
            if self.level == 2 and self.editor is not None and self.editor.exit():
                return ""
            if self.level == 2:
                self.level = 1
                self.editor = None
                self._sm_follows()
                return ""
            self.closing = True
            return ""
        if cmd == "show running-config":
            return self.show_running()
        if cmd == "show version":
            return (f"Product name:      MLNX-OS\nProduct release:   {RELEASE}\n"
                    "Chassis system type: MQM8700\n"
                    f"Uptime:            {int(time.time() - self.dev.started)}s\n")
        if cmd == "show configuration files":
            act = self.dev.extra["active"]
            return "\n".join(f"{n}{' (active)' if n == act else ''}" for n in sorted(self.files)) + "\n"
        if cmd in ("show ib sm", "show ib sm status"):
            return "enable\n" if "ib sm" in self.dev.running.children else "disable\n"
        if words[0] == "show":
            return self.show_telemetry(cmd)
        if self.level == 0:
            if cmd == "enable":
                self.level = 1
                return ""
            return self.error(cmd)
        if cmd == "disable" and self.level == 1:
            self.level = 0
            return ""
        if cmd in ("config term", "configure terminal", "config terminal", "configure term"):
            self.level = 2
            self.enter_config()
            return ""
        if cmd in ("configuration write", "write memory"):
            self._save_to(self.dev.extra["active"])
            return ""
        if words[:3] == ["configuration", "write", "to"] and len(words) in (4, 5):
            if len(words) == 5 and words[4] != "no-switch":
                return self.error(cmd)
            self._save_to(words[3])
            if len(words) == 4:
                self.dev.extra["active"] = words[3]
                self.dev.saved = self.files[words[3]]
            return ""
        if words[:2] == ["configuration", "switch-to"] and len(words) == 3:
            if words[2] not in self.files:
                return f"% Configuration file {words[2]} does not exist"
            self._switch_to(words[2])
            return ""
        if words[:2] == ["configuration", "delete"] and len(words) == 3:
            if words[2] == self.dev.extra["active"]:
                return "% Cannot delete the active configuration file"
            if self.files.pop(words[2], None) is None:
                return f"% Configuration file {words[2]} does not exist"
            return ""
        if self.level == 2 and self.editor is not None:
            if cmd == "end":
                self.level = 1
                self.editor = None
                self._sm_follows()
                return ""
            return self.apply_config(cmd)
        return self.error(cmd)


class MlnxosProfile(ModalProfile):
    name = "mlnxos-ib"
    session_class = MlnxosSession
    grammar = GRAMMAR

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.extra["files"] = {"initial": dev.saved}
        dev.extra["active"] = "initial"


PROFILE = MlnxosProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---

# No LLDP on InfiniBand; MELLANOX-IF-VPI-MIB carries XmitWait, SymbolError, port states and GUIDs.
SNMP_AGENT = _m.Agent(
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.MLNX_VPI),
    sys_descr="MLNX-OS, MQM8700, 3.10.4606",
    sys_object_id=(1, 3, 6, 1, 4, 1, 33049, 1, 1, 1, 8700),
)
