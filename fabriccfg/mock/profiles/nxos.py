"""Mock Cisco NX-OS (Nexus 9000) CLI for netmiko ``cisco_nxos``: checkpoints and rollback."""

from __future__ import annotations

import time

from fabriccfg.mock.confmode import ConfNode, Grammar, ModalProfile, ModalSession, Mode, Rule
from fabriccfg.mock.ssh import DeviceState

_LIST = r"[\d,\- ]+?"

IF = Mode("if", rules=[
    Rule(r"mtu (?P<v>\d+)"),
    Rule(r"description (?P<v>.+)"),
    Rule(r"shutdown"),
    Rule(r"switchport(?: .+)?"),
    Rule(r"speed (?P<v>.+)"),
    Rule(r"ip address (?P<v>\S+)"),
    Rule(r"priority-flow-control mode (?P<v>on|off|auto)"),
    Rule(r"priority-flow-control watch-dog-interval (?P<v>on|off)"),
    Rule(r"priority-flow-control watch-dog (?P<k>interval|shutdown-multiplier|auto-restore multiplier"
         r"|fixed-restore multiplier) (?P<v>\S+)"),
    Rule(r"service-policy type (?P<t>qos input|queuing output|queuing input) (?P<v>\S+)"),
    Rule(r"(?:load-interval|channel-group|lldp|fec|link) (?P<v>.+)"),
])
PMAP_NQOS = Mode("pmap-nqos", rules=[
    Rule(r"class type network-qos (?P<c>\S+)", mode="pmap-c-nqos", label="pmap-nqos-c"),
])
PMAP_C_NQOS = Mode("pmap-c-nqos", rules=[
    Rule(r"mtu (?P<v>\d+)"),
    Rule(r"pause pfc-cos (?P<v>[\d ,]+)"),
    Rule(r"pause buffer-size (?P<v>.+)"),
    Rule(r"congestion-control (?P<v>.+)"),
])
CMAP_QOS = Mode("cmap-qos", rules=[
    Rule(r"match (?P<k>dscp|cos|precedence) (?P<v>[\d,\- ]+)"),
])
CMAP_OTHER = Mode("cmap", rules=[Rule(r"match .+")])
PMAP_QOS = Mode("pmap-qos", rules=[
    Rule(r"class (?:type qos )?(?P<c>\S+)", mode="pmap-c-qos", label="pmap-c-qos"),
])
PMAP_C_QOS = Mode("pmap-c-qos", rules=[
    Rule(r"set (?P<k>qos-group|dscp|cos|precedence) (?P<v>\d+)"),
])
PMAP_QUE = Mode("pmap-que", rules=[
    Rule(r"class type queuing (?P<c>\S+)", mode="pmap-c-que", label="pmap-c-que"),
])
PMAP_C_QUE = Mode("pmap-c-que", rules=[
    Rule(r"bandwidth (?:remaining )?percent (?P<v>\d+)"),
    Rule(r"priority(?: level (?P<v>\d))?"),
    Rule(r"random-detect (?P<v>.+)"),
    Rule(r"shape (?P<v>.+)"),
    Rule(r"congestion-control (?P<v>.+)"),
    Rule(r"pause (?P<v>.+)"),
])
SYS_QOS = Mode("sys-qos", rules=[
    Rule(r"service-policy type (?P<t>network-qos|queuing input|queuing output|qos input) (?P<v>\S+)"),
])
PERMISSIVE = Mode("block", rules=[Rule(r".+")])

CONFIG = Mode("config", rules=[
    Rule(r"hostname (?P<v>\S+)"),
    Rule(r"feature \S+"),
    Rule(r"priority-flow-control watch-dog-interval (?P<v>on|off)"),
    Rule(r"priority-flow-control (?P<k>watch-dog interval|watch-dog shutdown-multiplier"
         r"|watch-dog auto-restore multiplier|fixed-restore multiplier|auto-restore multiplier) (?P<v>\S+)"),
    Rule(r"policy-map type network-qos (?P<n>\S+)", mode="pmap-nqos", label="pmap-nqos"),
    Rule(r"policy-map type qos (?P<n>\S+)", mode="pmap-qos", label="pmap-qos"),
    Rule(r"policy-map type queuing (?P<n>\S+)", mode="pmap-que", label="pmap-que"),
    Rule(r"class-map type qos (?:match-any |match-all )?(?P<n>\S+)", mode="cmap-qos", label="cmap-qos"),
    Rule(r"class-map type (?:network-qos|queuing) (?:match-any |match-all )?(?P<n>\S+)", mode="cmap",
         label="cmap"),
    Rule(r"system qos", mode="sys-qos", label="sys-qos"),
    Rule(r"interface (?P<i>(?:Ethernet|Eth)\d+/\d+(?:/\d+)?(?:-\d+)?|mgmt0|loopback\d+|port-channel\d+)",
         mode="if", label="if"),
    Rule(r"(?:router|vrf context) .+", mode="block", label="router"),
    Rule(r"(?:username|snmp-server|ntp|logging|ip|ipv6|lldp|spanning-tree|boot|banner|clock|hardware"
         r"|system|cli|line|ssh|copp|rmon|callhome) .+"),
])

GRAMMAR = Grammar([CONFIG, IF, PMAP_NQOS, PMAP_C_NQOS, CMAP_QOS, CMAP_OTHER, PMAP_QOS, PMAP_C_QOS,
                   PMAP_QUE, PMAP_C_QUE, SYS_QOS, PERMISSIVE])
VERSION = "10.3(4a)"


class NxosSession(ModalSession):
    error_format = "                  ^\n% Invalid command at '^' marker."
    grammar = GRAMMAR

    @property
    def checkpoints(self) -> dict[str, ConfNode]:
        c: dict[str, ConfNode] = self.dev.extra["checkpoints"]
        return c

    def banner(self) -> str:
        return ("Cisco Nexus Operating System (NX-OS) Software\n"
                "TAC support: http://www.cisco.com/tac\n")

    def prompt(self) -> str:
        if self.editor is None:
            return f"{self.dev.name}#"
        label = self.editor.frame.label
        return f"{self.dev.name}(config{'-' + label if label else ''})#"

    def show_running(self, tree: ConfNode | None = None, title: str = "running-config") -> str:
        tree = tree if tree is not None else self.dev.running
        head = [f"!Command: show {title}",
                f"!Time: {time.strftime('%a %b %d %H:%M:%S %Y', time.gmtime())}", ""]
        return "\n".join(head + tree.render(2)) + "\n"

    def execute(self, line: str) -> str:
        cmd = " ".join(line.split())
        if not cmd:
            return ""
        words = cmd.split()
        if words[:2] == ["terminal", "width"] or words[:2] == ["terminal", "length"]:
            return ""
        if words[0] == "show":
            return self.show(cmd)
        if self.editor is None:
            return self.exec_enable(cmd, words)
        if cmd == "end":
            self.editor = None
            return ""
        if cmd == "exit":
            if not self.editor.exit():
                self.editor = None
            return ""
        return self.apply_config(cmd)

    def show(self, cmd: str) -> str:
        if cmd in ("show running-config", "show running-config all"):
            return self.show_running()
        if cmd == "show startup-config":
            return self.show_running(self.dev.saved, "startup-config")
        if cmd == "show checkpoint summary":
            lines = ["User Checkpoint Summary", "-" * 60]
            for i, name in enumerate(self.checkpoints, 1):
                lines.append(f"{i}) {name}:\nCreated by admin\nCreated at {time.ctime()}\n")
            return "\n".join(lines) + "\n"
        if cmd == "show version":
            return (f"Cisco Nexus Operating System (NX-OS) Software\n  NXOS: version {VERSION}\n"
                    "  cisco Nexus9000 N9364D-GX2A Chassis\n")
        return self.show_telemetry(cmd)

    def exec_enable(self, cmd: str, words: list[str]) -> str:
        if cmd in ("exit", "logout", "quit"):
            self.closing = True
            return ""
        if cmd in ("enable",):
            return ""
        if cmd in ("configure terminal", "configure", "config t", "conf t"):
            self.enter_config()
            return "Enter configuration commands, one per line. End with CNTL/Z."
        if words[0] == "checkpoint" and len(words) == 2:
            if words[1] in self.checkpoints:
                return f"Checkpoint name {words[1]} is already in use"
            self.checkpoints[words[1]] = self.dev.running.copy()
            return "Done"
        if words[:2] == ["no", "checkpoint"] and len(words) == 3:
            if self.checkpoints.pop(words[2], None) is None:
                return f"Checkpoint {words[2]} does not exist"
            return "Done"
        if cmd == "clear checkpoint database":
            self.checkpoints.clear()
            return "Done"
        if words[:3] == ["rollback", "running-config", "checkpoint"] and len(words) in (4, 5):
            name = words[3]
            if name not in self.checkpoints:
                return f"Checkpoint {name} does not exist"
            self.dev.running = self.checkpoints[name].copy()
            return ("Note: Applying config parallelly may fail Rollback verification\n"
                    "Collecting Running-Config\n#Generating Rollback Patch\nExecuting Rollback Patch\n"
                    "Generating Running-config for verification\nGenerating Patch for verification\n"
                    "Verification is Successful.\n\nRollback completed successfully.")
        if cmd in ("copy running-config startup-config", "copy run start"):
            self.dev.saved = self.dev.running.copy()
            return "[########################################] 100%\nCopy complete."
        return self.error(cmd)


class NxosProfile(ModalProfile):
    name = "nxos"
    session_class = NxosSession
    grammar = GRAMMAR

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.extra["checkpoints"] = {}


PROFILE = NxosProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---
import re as _re  # noqa: E402

from fabriccfg.mock import cli_telemetry as _ct  # noqa: E402
from fabriccfg.mock import mibs as _m  # noqa: E402

# The standard MIBs only (documented choice): NX-OS per-queue counters come from show queuing.
SNMP_AGENT = _m.Agent(
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.PFC_MIB, _m.LLDP_MIB),
    sys_descr="Cisco NX-OS(tm) n9000, Software (NXOS 64-bit), Version 10.4(2), RELEASE SOFTWARE",
    sys_object_id=(1, 3, 6, 1, 4, 1, 9, 12, 3, 1, 3, 2238),
)
SHOW_COMMANDS = (
    (_re.compile(rf"^show queuing interface {_ct.PORT}$", _re.IGNORECASE),
     _ct.with_port(_ct.nxos_queuing_interface)),
    (_re.compile(rf"^show queuing pfc-queue interface {_ct.PORT}(?: detail)?$", _re.IGNORECASE),
     _ct.with_port(_ct.nxos_pfc_queue_detail)),
)
