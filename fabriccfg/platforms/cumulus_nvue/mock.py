"""Mock Cumulus Linux 5.x with NVUE for netmiko ``cumulus_linux``: a bash shell plus ``nv``.

NVUE semantics kept: ``nv set``/``nv unset`` stage a pending revision, ``nv config apply`` makes it
the applied config (auto-saved, as 5.9+ does), ``--confirm T`` reverts when the timer ends unless
``nv config confirm``. ``nv set`` paths are validated by the regexes below (the grammar our renderer
produces plus common NVUE paths); a line with the same key (all words but the value) replaces.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping
from dataclasses import dataclass

from fabriccfg.mock import baseline
from fabriccfg.mock import cli_telemetry as _ct
from fabriccfg.mock import mibs as _m
from fabriccfg.mock.shell import BUILTINS, Result, ShellProfile, ShellSession
from fabriccfg.mock.ssh import DeviceState, call_later
from fabriccfg.platforms.cumulus_nvue import mock_show as _renderers

_IF = r"(?:swp\d+(?:s\d+)?|eth\d+|lo|bond\d+|br_\w+|vlan\d+|peerlink\S*)(?:[,\-](?:swp)?\d+(?:s\d+)?)*"
_PROF = r"[\w\-]+"
_N = r"\d+"

# Path grammar (after "nv set "); group v = the value (replacement key is the path without it).
SET_RULES = [re.compile(p) for p in (
    rf"interface {_IF} link mtu (?P<v>{_N})",
    rf"interface {_IF} link breakout (?P<v>\d+x|disabled|loopback)",
    rf"interface {_IF} link (?:speed|state|fec|auto-negotiate|lanes|duplex) (?P<v>\S+)",
    rf"interface {_IF} description (?P<v>.+)",
    rf"interface {_IF} type (?P<v>\S+)",
    rf"interface {_IF} ip address \S+",
    rf"interface {_IF} ip vrf (?P<v>\S+)",
    rf"interface {_IF} bridge domain \S+(?: .+)?",
    rf"interface {_IF} bond member \S+",
    rf"interface {_IF} qos pfc profile (?P<v>{_PROF})",
    rf"interface {_IF} qos pfc-watchdog",
    rf"interface {_IF} qos pfc-watchdog state (?P<v>enable|disable)",
    rf"interface {_IF} qos (?:mapping|egress-scheduler|congestion-control|egress-shaper|link-pause"
    rf"|remark|traffic-pool) profile (?P<v>{_PROF})",
    r"qos roce",
    r"qos roce mode (?P<v>lossless|lossy|lossless-single-ipool|lossy-multi-tc)",
    r"qos roce cable-length (?P<v>\d+)",
    rf"qos mapping {_PROF} trust (?P<v>l2|l3|port|both)",
    rf"qos mapping {_PROF} (?:dscp|pcp) {_N} switch-priority (?P<v>[0-7])",
    rf"qos mapping {_PROF} port-default-sp (?P<v>[0-7])",
    rf"qos remark {_PROF} (?:rewrite) (?P<v>\S+)",
    rf"qos egress-queue-mapping {_PROF} switch-priority {_N} traffic-class (?P<v>[0-7])",
    rf"qos pfc {_PROF} switch-priority (?P<v>[0-7](?:,[0-7])*)",
    rf"qos pfc {_PROF} (?:tx|rx) (?P<v>enable|disable)",
    rf"qos pfc {_PROF} (?:cable-length|port-buffer|xoff-threshold|xon-threshold) (?P<v>\S+)",
    rf"qos link-pause {_PROF} (?:tx|rx) (?P<v>enable|disable)",
    rf"qos link-pause {_PROF} (?:cable-length|port-buffer|xoff-threshold|xon-threshold) (?P<v>\S+)",
    rf"qos congestion-control {_PROF} traffic-class [0-7](?:,[0-7])* (?:ecn|red) (?P<v>enable|disable)",
    rf"qos congestion-control {_PROF} traffic-class [0-7](?:,[0-7])* (?:min-threshold|max-threshold"
    rf"|probability) (?P<v>\d+)",
    rf"qos egress-scheduler {_PROF} traffic-class [0-7](?:[,\-][0-7])* mode (?P<v>strict|dwrr)",
    rf"qos egress-scheduler {_PROF} traffic-class [0-7](?:[,\-][0-7])* bw-percent (?P<v>\d+)",
    rf"qos egress-shaper {_PROF} .+",
    r"qos pfc-watchdog (?:polling-interval|robustness) (?P<v>\d+)",
    rf"qos traffic-pool {_PROF} memory-percent (?P<v>\d+)",
    rf"qos traffic-pool {_PROF} switch-priority (?P<v>[0-7](?:,[0-7])*)",
    rf"qos traffic-pool {_PROF} mode (?P<v>lossless|lossy)",
    r"qos advance-buffer-config .+",
    r"system hostname (?P<v>\S+)",
    r"system config auto-save (?:state )?(?P<v>enabled|disabled|enable|disable|on|off)",
    r"system (?:timezone|global|message|wjh) .+",
    r"service (?:snmp-server|ntp|syslog|dns|lldp|synce|ptp) .+",
    r"(?:router|vrf|bridge|evpn|nve|acl|mlag) .+",
)]
UNSET_ROOTS = ("interface", "qos", "system", "service", "router", "vrf", "bridge", "evpn", "nve", "acl",
               "mlag")


def nv_key(path: str) -> str | None:
    """Replacement key of an ``nv set`` path, or None when the path is invalid."""
    for rx in SET_RULES:
        m = rx.fullmatch(path)
        if m is not None:
            if "v" in m.groupdict() and m.group("v") is not None:
                return path[: m.start("v")] + "\0" + path[m.end("v"):]
            return path
    return None


def parse_duration(text: str) -> float | None:
    m = re.fullmatch(r"(\d+)([smh]?)", text)
    if not m:
        return None
    return int(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)]


@dataclass
class _Confirm:
    backup: list[str]
    timer: asyncio.TimerHandle


class NvueSession(ShellSession):
    error_format = "Error: Invalid config: '{line}'"
    user = "cumulus"
    home = "/home/cumulus"
    prompt_host_suffix = ":mgmt"

    def banner(self) -> str:
        return "Linux cumulus 6.1.0-cl-1-amd64\nWelcome to NVIDIA Cumulus (R) Linux (R)\n"

    @property
    def applied(self) -> list[str]:
        lines: list[str] = self.dev.running
        return lines

    def pending(self) -> list[str]:
        pend: list[str] | None = self.dev.extra.get("pending")
        if pend is None:
            pend = list(self.applied)
            self.dev.extra["pending"] = pend
        return pend

    def _stage_set(self, path: str) -> Result:
        key = nv_key(path)
        line = "nv set " + path
        if key is None:
            return f"Error: Invalid config: '{line}'\n", 1
        err = self.config_gate(line)
        if err is not None:
            return err + "\n", 1
        pend = self.pending()
        pend[:] = [ln for ln in pend if nv_key(ln[7:]) != key or ln == line]
        if line not in pend:
            pend.append(line)
        self.config_applied()
        return "", 0

    def _stage_unset(self, path: str) -> Result:
        line = "nv unset " + path
        if not path or path.split(maxsplit=1)[0] not in UNSET_ROOTS:
            return f"Error: Invalid config: '{line}'\n", 1
        err = self.config_gate(line)
        if err is not None:
            return err + "\n", 1
        pend = self.pending()
        key = nv_key(path)
        pend[:] = [ln for ln in pend if not (ln[7:] == path or ln[7:].startswith(path + " ")
                                             or (key is not None and nv_key(ln[7:]) == key))]
        self.config_applied()
        return "", 0

    def diff(self) -> str:
        pend = self.dev.extra.get("pending")
        if pend is None:
            return ""
        out = [ln for ln in pend if ln not in self.applied]
        pend_keys = {nv_key(ln[7:]) for ln in pend}
        out += ["nv unset " + ln[7:] for ln in self.applied
                if ln not in pend and nv_key(ln[7:]) not in pend_keys]
        return "".join(x + "\n" for x in out)

    def _apply(self, argv: list[str]) -> Result:
        confirm: float | None = None
        k = 0
        while k < len(argv):
            a = argv[k]
            if a in ("-y", "--y", "--assume-yes", "--assume-no"):
                k += 1
                continue
            if a.startswith("--confirm"):
                val = a.partition("=")[2]
                if not val and k + 1 < len(argv) and not argv[k + 1].startswith("-"):
                    val = argv[k + 1]
                    k += 1
                confirm = parse_duration(val) if val else 600.0
                if confirm is None or confirm <= 0:
                    return f"Error: invalid --confirm time '{val}'\n", 1
                k += 1
                continue
            return f"Error: unknown option '{a}'\n", 1
        dev = self.dev
        pending_confirm: _Confirm | None = dev.extra.get("confirm")
        if pending_confirm is not None:
            return "Error: a confirm is pending; run 'nv config confirm' first\n", 1
        backup = list(self.applied)
        pend = dev.extra.pop("pending", None)
        if pend is not None:
            dev.running = list(pend)
        dev.extra["rev"] = dev.extra.get("rev", 1) + 1
        rev = dev.extra["rev"]
        if confirm is not None:
            def revert() -> None:
                if dev.extra.get("confirm") is holder[0]:
                    dev.running = backup
                    dev.saved = list(backup)
                    dev.extra.pop("confirm", None)
                    dev.extra.pop("pending", None)
                    dev.log.append(f"# nv config apply --confirm (rev {rev}) expired: reverted")

            holder: list[_Confirm] = []
            holder.append(_Confirm(backup, call_later(confirm, revert)))
            dev.extra["confirm"] = holder[0]
            return (f"applied [rev_id: {rev}]\n"
                    f"Confirm within {int(confirm)}s with 'nv config confirm' or the change rolls back\n"), 0
        dev.saved = list(dev.running)
        return f"applied [rev_id: {rev}]\n", 0

    def nv(self, argv: list[str]) -> Result:
        args = argv[1:]
        if not args:
            return "Usage: nv [options] <command> [<args>]\n", 2
        if args[0] == "set":
            return self._stage_set(" ".join(args[1:]))
        if args[0] == "unset":
            return self._stage_unset(" ".join(args[1:]))
        if args[0] == "config":
            sub = args[1] if len(args) > 1 else ""
            rest = args[2:]
            if sub == "diff":
                return self.diff(), 0
            if sub == "apply":
                return self._apply(rest)
            if sub == "confirm":
                c: _Confirm | None = self.dev.extra.pop("confirm", None)
                if c is None:
                    return "Error: no pending confirm\n", 1
                c.timer.cancel()
                self.dev.saved = list(self.applied)
                return f"applied [rev_id: {self.dev.extra.get('rev', 1)}]\n", 0
            if sub == "detach":
                self.dev.extra.pop("pending", None)
                return "", 0
            if sub == "save":
                self.dev.saved = list(self.applied)
                return "saved\n", 0
            if sub == "show":
                src = self.applied
                if "--pending" in rest or "pending" in rest:
                    src = self.dev.extra.get("pending") or self.applied
                return "".join(x + "\n" for x in src), 0
            if sub == "history":
                return f"rev_id: {self.dev.extra.get('rev', 1)}\n", 0
            return f"Error: unknown command 'nv config {sub}'\n", 1
        if args[0] == "show":
            res = self.telemetry_result(" ".join(argv))
            if res is not None:
                return res
            return f"Error: The requested item does not exist: {' '.join(args[1:])}\n", 1
        return f"Error: unknown command '{args[0]}'\n", 1


def _nv(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    assert isinstance(sh, NvueSession)
    return sh.nv(argv)


NvueSession.commands = {**BUILTINS, "nv": _nv}


class NvueProfile(ShellProfile):
    name = "cumulus-nvue"
    session_class = NvueSession

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.running = [f"nv set system hostname {dev.name}"]
        dev.saved = list(dev.running)
        dev.extra["rev"] = 1
        dev.extra["dirs"].add("/home/cumulus/")


    def load_baseline(self, dev: DeviceState, files: Mapping[str, str]) -> None:
        lines: list[str] = dev.running
        for line in baseline.nv_lines(files):
            key = nv_key(line[7:])
            lines[:] = [ln for ln in lines if nv_key(ln[7:]) != key] + [line]
        dev.saved = list(lines)

    def roce_class(self, dev: DeviceState, dscp: int) -> tuple[int | None, bool] | None:
        prio, pfc = None, set()
        for ln in dev.running:
            m = re.fullmatch(rf"nv set qos mapping \S+ dscp {dscp} switch-priority (\d)", ln)
            prio = int(m.group(1)) if m else prio
            m = re.fullmatch(r"nv set qos pfc \S+ switch-priority (\d)", ln)
            pfc |= {int(m.group(1))} if m else set()
        return None if prio is None else (prio, prio in pfc)


PROFILE = NvueProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---

SNMP_AGENT = _m.Agent(
    # Cumulus' "Supported MIBs" page: IF-MIB and LLDP-MIB (lldpd AgentX), no PFC or queue MIB
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.LLDP_MIB),
    sys_descr="Cumulus Linux 5.9.1 (Linux Kernel 6.1.0-cl-1-amd64)",
    sys_object_id=(1, 3, 6, 1, 4, 1, 40310),
)
SHOW_COMMANDS = (
    (re.compile(r"^nv show interface qos-roce-counters$"),
     lambda model, device, m, t: _renderers.nvue_qos_roce_counters_all(model, device, t)),
    (re.compile(rf"^nv show interface {_ct.PORT} qos roce counters$"),
     _ct.with_port(_renderers.nvue_qos_roce_counters)),
    (re.compile(rf"^nv show interface {_ct.PORT} qos pfc-watchdog$"),
     _ct.with_port(_renderers.nvue_pfc_watchdog)),
    (re.compile(rf"^nv show interface {_ct.PORT} qos buffer$"), _ct.with_port(_renderers.nvue_qos_buffer)),
)
