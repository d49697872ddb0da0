"""Mock Arista EOS CLI for netmiko ``arista_eos``: configure sessions with commit timers.

Pending sessions survive a disconnect (as on EOS), which is how stale sessions happen; `show
configuration sessions` lets tests prove that push leaves none behind.
"""

from __future__ import annotations

import asyncio
import difflib
import re
import time
from dataclasses import dataclass

from fabriccfg.mock import cli_telemetry as _ct
from fabriccfg.mock import mibs as _m
from fabriccfg.mock.confmode import ConfNode, Grammar, ModalProfile, ModalSession, Mode, Rule
from fabriccfg.mock.ssh import DeviceState, call_later
from fabriccfg.platforms.eos import mock_show as _renderers

_UNIT = r"(?:segments|bytes|kbytes|mbytes|milliseconds|microseconds)"
_LIST = r"[\d,\- ]+?"

_IF_COMMON = [
    Rule(r"mtu (?P<v>\d+)"),
    Rule(r"description (?P<v>.+)"),
    Rule(r"shutdown"),
    Rule(r"speed (?P<v>.+)"),
    Rule(r"qos trust (?P<v>dscp|cos)"),
    Rule(r"qos (?:cos|dscp) (?P<v>\d+)"),
    Rule(r"priority-flow-control on"),
    Rule(r"priority-flow-control mode (?P<v>on|off)"),
    Rule(rf"priority-flow-control priority (?P<p>{_LIST}) (?P<v>no-drop|drop)"),
    Rule(r"priority-flow-control pause watchdog"),
    Rule(r"priority-flow-control pause watchdog port action (?P<v>drop|notify-only)"),  # AVD schema
    Rule(r"priority-flow-control pause watchdog port timer (?P<v>.+)"),
    Rule(r"service-profile (?P<v>\S+)"),
    Rule(r"switchport(?: .+)?"),
    Rule(r"ip address (?P<v>\S+)"),
    Rule(r"(?:load-interval|dcbx mode|error-correction encoding|channel-group|lldp|flowcontrol send"
         r"|flowcontrol receive) (?P<v>.+)"),
    Rule(r"(?P<q>(?:uc-)?tx-queue) (?P<n>\d+)", mode="txq", label="{1}-{2}"),
]

TXQ = Mode("txq", rules=[
    Rule(rf"random-detect ecn (?P<v>minimum-threshold \d+ {_UNIT} maximum-threshold \d+ {_UNIT}"
         r"(?: max-mark-probability \d+)?(?: weight \d+)?)"),
    Rule(r"random-detect ecn count"),
    Rule(r"random-detect drop (?P<v>.+)"),
    Rule(r"bandwidth (?:percent|guaranteed) (?P<v>.+)"),
    Rule(r"priority(?P<v> strict)?"),
    Rule(r"shape rate (?P<v>.+)"),
])

IF = Mode("if", rules=list(_IF_COMMON))
QOS_PROFILE = Mode("qos-profile", rules=list(_IF_COMMON))
PERMISSIVE = Mode("block", rules=[Rule(r".+")])

CONFIG = Mode("config", rules=[
    Rule(r"hostname (?P<v>\S+)"),
    Rule(rf"qos map dscp (?P<d>{_LIST}) to traffic-class (?P<v>\d)(?: drop-precedence \d)?"),
    Rule(rf"qos map traffic-class (?P<t>{_LIST}) to (?P<k>dscp|cos|tx-queue) (?P<v>\d+)"),
    Rule(rf"qos map (?:cos|exp) (?P<d>{_LIST}) to traffic-class (?P<v>\d)"),
    Rule(r"qos random-detect ecn allow non-ect(?: chip-based)?"),
    Rule(r"qos rewrite (?:dscp|cos)"),
    Rule(r"qos profile (?P<n>\S+)", mode="qos-profile", label="qos-profile-{1}"),
    Rule(r"priority-flow-control all off"),
    Rule(r"priority-flow-control pause watchdog default (?P<k>timeout|recovery-time|polling-interval) "
         r"(?P<v>[\d.]+|auto)"),
    Rule(r"priority-flow-control pause watchdog action (?P<v>drop|errdisable|notify-only)"),  # AVD schema
    Rule(r"priority-flow-control pause watchdog override action drop"),
    Rule(r"priority-flow-control pause watchdog hardware (?P<v>.+)"),
    Rule(r"platform \S+ mmu queue profile (?P<n>\S+)", mode="block", label="mmu-queue-profile"),
    Rule(r"platform (?P<v>.+)"),
    Rule(r"(?:dcbx application|spanning-tree|service|username|snmp-server|ntp|logging|ip|ipv6|lldp"
         r"|aaa|clock|banner|transceiver|errdisable) .+"),
    Rule(r"(?:router \S+.*|management \S+.*)", mode="block", label="router"),
    Rule(r"interface (?P<i>(?:Ethernet|Et)[\d/,\-]+|Management\d+|Loopback\d+|Port-Channel\d+)",
         mode="if", label="if-{1}"),
])

GRAMMAR = Grammar([CONFIG, IF, QOS_PROFILE, TXQ, PERMISSIVE], negation=("no ", "default "))
VERSION = "4.31.2F"


@dataclass
class ConfigSession:
    name: str
    tree: ConfNode
    state: str = "pending"
    backup: ConfNode | None = None
    timer: asyncio.TimerHandle | None = None


def _short(label: str) -> str:
    return re.sub(r"Ethernet", "Et", label)


class EosSession(ModalSession):
    error_format = "% Invalid input (at token 0: '{word}')"
    grammar = GRAMMAR

    def __init__(self, dev: DeviceState) -> None:
        super().__init__(dev)
        self.level = 0
        self.session: ConfigSession | None = None

    @property
    def sessions(self) -> dict[str, ConfigSession]:
        s: dict[str, ConfigSession] = self.dev.extra["sessions"]
        return s

    def banner(self) -> str:
        return f"Last login: {time.ctime()} from 127.0.0.1\n"

    def prompt(self) -> str:
        if self.level == 0:
            return f"{self.dev.name}>"
        if self.level == 1:
            return f"{self.dev.name}#"
        parts = ["config"]
        if self.session is not None:
            parts.append(f"s-{self.session.name[:6]}")
        if self.editor is not None:
            parts += [_short(f.label) for f in self.editor.stack[1:]]
        return f"{self.dev.name}({'-'.join(parts)})#"

    # ----- views
    def show_running(self, tree: ConfNode | None = None, title: str = "running-config") -> str:
        tree = tree if tree is not None else self.dev.running
        head = [f"! Command: show {title}",
                f"! device: {self.dev.name} (DCS-7060X5-64, EOS-{VERSION})", "!"]
        return "\n".join(head + tree.render(3, bang="!")) + "\n"

    def show_sessions(self) -> str:
        lines = ["Maximum number of completed sessions: 1", "Maximum number of pending sessions: 5", "",
                 "  Name              State                 User     Terminal",
                 "  ----------------- --------------------- -------- --------"]
        for s in self.sessions.values():
            mark = "*" if self.session is s else " "
            lines.append(f"{mark} {s.name:<17} {s.state:<21} admin")
        return "\n".join(lines) + "\n"

    def diffs(self) -> str:
        if self.session is None:
            return "% Not in a configuration session"
        a = self.show_running().splitlines()
        b = self.show_running(self.session.tree).splitlines()
        diff = difflib.unified_diff(a[3:], b[3:], "system:/running-config",
                                    f"session:/{self.session.name}-session-config", lineterm="")
        return "\n".join(diff) + "\n"

    # ----- session lifecycle
    def _leave_config(self) -> None:
        self.level = 1
        self.editor = None
        self.session = None

    def _commit(self, s: ConfigSession, timer: float | None = None) -> str:
        if s.state == "pendingCommitTimer":  # confirming
            if s.timer is not None:
                s.timer.cancel()
            self.sessions.pop(s.name, None)
            return ""
        if timer is None:
            self.dev.running = s.tree
            self.sessions.pop(s.name, None)
            return ""
        s.backup = self.dev.running
        self.dev.running = s.tree.copy()
        s.state = "pendingCommitTimer"
        dev = self.dev

        def revert() -> None:
            if dev.extra["sessions"].get(s.name) is s and s.backup is not None:
                dev.running = s.backup
                dev.extra["sessions"].pop(s.name, None)
                dev.log.append(f"# commit timer of session {s.name} expired: reverted")

        s.timer = call_later(timer, revert)
        return ""

    def _abort(self, s: ConfigSession) -> None:
        if s.state == "pendingCommitTimer":
            if s.timer is not None:
                s.timer.cancel()
            if s.backup is not None:
                self.dev.running = s.backup
        self.sessions.pop(s.name, None)

    # ----- dispatch
    def execute(self, line: str) -> str:
        cmd = " ".join(line.split())
        if not cmd:
            return ""
        words = cmd.split()
        if cmd == "terminal width 511" or (words[:2] == ["terminal", "width"] and len(words) == 3):
            return f"Width set to {words[2]} columns."
        if cmd == "terminal length 0":
            return "Pagination disabled."
        if words[0] == "do" and self.level == 2:
            cmd, words = " ".join(words[1:]), words[1:]
        if words[0] == "show":
            return self.show(cmd)
        if self.level == 0:
            if cmd == "enable":
                self.level = 1
                return ""
            if cmd in ("exit", "logout", "quit"):
                self.closing = True
                return ""
            return self.error(cmd)
        if self.level == 1:
            return self.exec_enable(cmd, words)
        return self.exec_config(cmd, words)

    def show(self, cmd: str) -> str:
        if cmd in ("show running-config", "show running-config all"):
            return self.show_running()
        if cmd == "show startup-config":
            return self.show_running(self.dev.saved, "startup-config")
        if cmd in ("show configuration sessions", "show configuration sessions detail"):
            return self.show_sessions()
        if cmd == "show session-config diffs":
            return self.diffs()
        if cmd == "show session-config":
            if self.session is None:
                return "% Not in a configuration session"
            return self.show_running(self.session.tree)
        if cmd == "show version":
            return (f"Arista DCS-7060X5-64\nSoftware image version: {VERSION}\n"
                    f"Uptime: {int(time.time() - self.dev.started)} seconds\n")
        return self.show_telemetry(cmd, cmd[5:] if cmd.startswith("show ") else cmd)

    def exec_enable(self, cmd: str, words: list[str]) -> str:
        if cmd in ("exit", "logout", "quit"):
            self.closing = True
            return ""
        if cmd == "disable":
            self.level = 0
            return ""
        if cmd in ("configure", "configure terminal", "config", "conf t"):
            self.level = 2
            self.enter_config()
            return ""
        if words[:2] == ["configure", "session"] and len(words) >= 3:
            name = words[2]
            rest = words[3:]
            s = self.sessions.get(name)
            if rest == ["commit"]:
                if s is None:
                    return f"% Session {name} not found"
                return self._commit(s)
            if rest == ["abort"]:
                if s is None:
                    return f"% Session {name} not found"
                self._abort(s)
                return ""
            if rest:
                return self.error(cmd)
            if s is None:
                s = self.sessions[name] = ConfigSession(name, self.dev.running.copy())
            self.level = 2
            self.session = s
            self.enter_config(s.tree)
            return ""
        if words[:3] == ["no", "configure", "session"] and len(words) == 4:
            s = self.sessions.get(words[3])
            if s is not None:
                self._abort(s)
            return ""
        if cmd in ("copy running-config startup-config", "write memory", "write"):
            self.dev.saved = self.dev.running.copy()
            return "Copy completed successfully."
        return self.error(cmd)

    def exec_config(self, cmd: str, words: list[str]) -> str:
        assert self.editor is not None
        if cmd == "end":
            self._leave_config()
            return ""
        if cmd == "exit":
            if not self.editor.exit():
                self._leave_config()
            return ""
        if self.session is not None:
            s = self.session
            if cmd == "commit":
                out = self._commit(s)
                self._leave_config()
                return out
            if words[:2] == ["commit", "timer"] and len(words) == 3:
                m = re.fullmatch(r"(\d{1,2}):(\d{2}):(\d{2})", words[2])
                if not m:
                    return self.error(cmd)
                secs = int(m.group(1)) * 3600 + int(m.group(2)) * 60 + int(m.group(3))
                if secs <= 0:
                    return "% Invalid commit timer"
                out = self._commit(s, timer=float(secs))
                self._leave_config()
                return out
            if cmd == "abort":
                self._abort(s)
                self._leave_config()
                return ""
            if s.state == "pendingCommitTimer":
                return "% Cannot modify a session with a pending commit timer"
        elif cmd in ("commit", "abort") or cmd.startswith("commit "):
            return self.error(cmd)
        return self.apply_config(cmd)


class EosProfile(ModalProfile):
    name = "eos"
    session_class = EosSession
    grammar = GRAMMAR

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.extra["sessions"] = {}


    def roce_class(self, dev: DeviceState, dscp: int) -> tuple[int | None, bool] | None:
        lines = dev.running.flat()
        prio = None
        for ln in lines:
            m = re.fullmatch(r"qos map dscp ([\d ]+) to traffic-class (\d)", ln)
            if m and str(dscp) in m.group(1).split():
                prio = int(m.group(2))
        if prio is None:
            return None
        return prio, any(re.fullmatch(rf"interface \S+ priority-flow-control priority {prio} no-drop", ln)
                         for ln in lines)


PROFILE = EosProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---

SNMP_AGENT = _m.Agent(
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.PFC_MIB, _m.ARISTA_QUEUE, _m.LLDP_MIB),
    sys_descr="Arista Networks EOS version 4.31.2F running on an Arista Networks DCS-7060X5-64",
    sys_object_id=(1, 3, 6, 1, 4, 1, 30065, 1, 3011, 7060, 3282, 6400),
)
SHOW_COMMANDS = (
    (re.compile(rf"^show qos interfaces(?: {_ct.PORT})? ecn counters queue \| json$", re.IGNORECASE),
     _ct.opt_port(_renderers.eos_ecn_counters)),
    (re.compile(r"^show priority-flow-control counters \| json$"), _ct.no_args(_renderers.eos_pfc_counters)),
    (re.compile(r"^show priority-flow-control counters watchdog \| json$"),
     _ct.no_args(_renderers.eos_pfc_watchdog)),
    (re.compile(r"^show queue-monitor length(?: limit \d+ (?:seconds|samples))? \| json$"),
     _ct.no_args(_renderers.eos_queue_monitor_length)),
)
"""The ``| json`` forms fabriccfg collects (tests/telemetry/fixtures/eos_*/SOURCE name the vendor data)."""
