"""Mock Cisco NX-OS (Nexus 9000) CLI for netmiko ``cisco_nxos``: checkpoints, rollback, config sessions.

Configuration sessions as Session Manager does them (Cisco Nexus 9000 NX-OS System Management
Configuration Guide 10.5(x), "Configuring Session Manager"): ``configure session NAME`` records
commands without touching the running config; ``verify`` checks them; ``commit`` applies them all at
once (a failure leaves the running config as it was); ``abort`` discards them. A session outlives the
SSH session that made it (the guide: sessions are lost only on a reload), so a dead client leaves a
pending session and an untouched running config. Unlike the real switch, any valid line is accepted in
a session (the guide limits Session Manager to ACL and QoS features).
"""

from __future__ import annotations

import re
import re as _re
import time
from dataclasses import dataclass, field

from fabriccfg.mock import cli_telemetry as _ct
from fabriccfg.mock import mibs as _m
from fabriccfg.mock.confmode import ConfigEditor, ConfNode, Grammar, ModalProfile, ModalSession, Mode, Rule
from fabriccfg.mock.ssh import DeviceState
from fabriccfg.platforms.nxos import mock_show as _renderers

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


@dataclass
class ConfigSession:
    name: str
    tree: ConfNode
    """The running config as the session's lines would leave it (to validate lines as they come)."""
    lines: list[str] = field(default_factory=list)
    """The session's commands, replayed on the running config at commit."""
    created: float = field(default_factory=time.time)


class NxosSession(ModalSession):
    error_format = "                  ^\n% Invalid command at '^' marker."
    grammar = GRAMMAR

    def __init__(self, dev: DeviceState) -> None:
        super().__init__(dev)
        self.session: ConfigSession | None = None

    @property
    def checkpoints(self) -> dict[str, ConfNode]:
        c: dict[str, ConfNode] = self.dev.extra["checkpoints"]
        return c

    @property
    def sessions(self) -> dict[str, ConfigSession]:
        s: dict[str, ConfigSession] = self.dev.extra["sessions"]
        return s

    def banner(self) -> str:
        return ("Cisco Nexus Operating System (NX-OS) Software\n"
                "TAC support: http://www.cisco.com/tac\n")

    def prompt(self) -> str:
        if self.editor is None:
            return f"{self.dev.name}#"
        label = self.editor.frame.label
        base = "config-s" if self.session is not None else "config"
        return f"{self.dev.name}({base}{'-' + label if label else ''})#"

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
            self.session = None
            return ""
        if cmd == "exit":
            if not self.editor.exit():
                self.editor = None
                self.session = None
            elif self.session is not None:
                self.session.lines.append(cmd)
            return ""
        if self.session is not None:
            return self.session_command(self.session, cmd)
        return self.apply_config(cmd)

    def session_command(self, s: ConfigSession, cmd: str) -> str:
        if cmd == "verify":
            return "Verification Successful"
        if cmd == "commit":
            target = self.dev.running.copy()
            editor = ConfigEditor(self.grammar, target)
            for line in s.lines:
                if line == "exit":
                    editor.exit()
                elif editor.apply(line) == "invalid":  # cannot happen: lines were checked on entry
                    return f"Commit Failed: {line}"
            self.dev.running = target
            self.sessions.pop(s.name, None)
            self.editor, self.session = None, None
            return "Commit Successful"
        if cmd == "abort":
            self.sessions.pop(s.name, None)
            self.editor, self.session = None, None
            return ""
        out = self.apply_config(cmd)
        if not out:
            s.lines.append(cmd)
        return out

    def show(self, cmd: str) -> str:
        if cmd in ("show running-config", "show running-config all"):
            return self.show_running()
        if cmd == "show startup-config":
            return self.show_running(self.dev.saved, "startup-config")
        if cmd == "show configuration session summary":
            lines = [f"{'Name':<32}{'Session Owner':<16}Creation Time", "-" * 68]
            for sess in self.sessions.values():
                lines.append(f"{sess.name:<32}{'admin':<16}{time.ctime(sess.created)}")
            lines.append(f"Number of active configuration sessions = {len(self.sessions)}")
            return "\n".join(lines) + "\n"
        if cmd.startswith("show configuration session ") and len(cmd.split()) == 4:
            found = self.sessions.get(cmd.split()[3])
            if found is None:
                return f"Session {cmd.split()[3]} does not exist"
            return f"config session {found.name}\n" + "".join(f"{i}  {ln}\n"
                                                              for i, ln in enumerate(found.lines, 1))
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
        if words[:2] == ["configure", "session"] and len(words) == 3:
            sess = self.sessions.get(words[2])
            if sess is None:
                if len(self.sessions) >= 32:  # the guide: up to 32 configuration sessions
                    return "% Maximum number of configuration sessions reached"
                sess = self.sessions[words[2]] = ConfigSession(words[2], self.dev.running.copy())
            self.session = sess
            self.enter_config(sess.tree)
            return ("Config Session started, Session ID is 1\n"
                    "Enter configuration commands, one per line. End with CNTL/Z.")
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
        dev.extra["sessions"] = {}


    def roce_class(self, dev: DeviceState, dscp: int) -> tuple[int | None, bool] | None:
        lines = dev.running.flat()
        classes = set()
        for ln in lines:
            m = re.fullmatch(r"class-map type qos (?:match-(?:any|all) )?(\S+) match dscp (\S+)", ln)
            if m and str(dscp) in m.group(2).split(","):
                classes.add(m.group(1))
        prio = None
        for ln in lines:
            m = re.fullmatch(r"policy-map type qos \S+ class (\S+) set qos-group (\d)", ln)
            if m and m.group(1) in classes:
                prio = int(m.group(2))
        if prio is None:
            return None
        pause = re.compile(r"policy-map type network-qos .* pause pfc-cos (\S+)")
        paused = {c for ln in lines if (m := pause.fullmatch(ln)) for c in m.group(1).split(",")}
        return prio, str(prio) in paused


PROFILE = NxosProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---


# What the Nexus 9000 agent serves of the MIBs fabriccfg knows (Cisco's Nexus 9000 MIB support list,
# telemetry/oids.py): IF-MIB, CISCO-PFC-EXT-MIB and LLDP-MIB; not IEEE8021-PFC-MIB. (The cpfcIfTable totals
# follow the shared layout of fabriccfg.mock.mibs, SONiC's; fabriccfg does not poll them on NX-OS.)
SNMP_AGENT = _m.Agent(
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.CISCO_PFC_EXT, _m.LLDP_MIB),
    sys_descr="Cisco NX-OS(tm) n9000, Software (NXOS 64-bit), Version 10.4(2), RELEASE SOFTWARE",
    sys_object_id=(1, 3, 6, 1, 4, 1, 9, 12, 3, 1, 3, 2238),
)
SHOW_COMMANDS = (
    (_re.compile(r"^show queuing interface$", _re.IGNORECASE), _ct.no_args(_renderers.nxos_queuing_all)),
    (_re.compile(rf"^show queuing interface {_ct.PORT}$", _re.IGNORECASE),
     _ct.with_port(_renderers.nxos_queuing_interface)),
    (_re.compile(r"^show queuing pfc-queue detail$", _re.IGNORECASE),
     _ct.no_args(_renderers.nxos_pfc_queue_all)),
    (_re.compile(rf"^show queuing pfc-queue interface {_ct.PORT}(?: detail)?$", _re.IGNORECASE),
     _ct.with_port(_renderers.nxos_pfc_queue_detail)),
)
"""The bulk forms fabriccfg collects (every interface, one command each) and the per-interface forms."""
