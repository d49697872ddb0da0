"""Mock community SONiC (netmiko ``linux``): a bash shell plus ``show`` and ``config``.

CONFIG_DB is a JSON document (``DeviceState.running``); ``config apply-patch FILE`` applies an RFC 6902
JSON Patch from a file uploaded through the shell (``printf '%s' B64 | base64 -d > /tmp/p.json``),
validating table names and a few YANG constraints, as the Generic Config Updater does.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from typing import Any

import jsonpatch

from fabriccfg.mock import baseline
from fabriccfg.mock import cli_telemetry as _ct
from fabriccfg.mock import mibs as _m
from fabriccfg.mock.shell import BUILTINS, Result, ShellProfile, ShellSession
from fabriccfg.mock.ssh import DeviceState
from fabriccfg.platforms.sonic import mock_show as _renderers

TABLES = frozenset({
    "DEVICE_METADATA", "PORT", "PORTCHANNEL", "PORTCHANNEL_MEMBER", "VLAN", "VLAN_MEMBER", "INTERFACE",
    "LOOPBACK_INTERFACE", "MGMT_INTERFACE", "BGP_NEIGHBOR", "LLDP", "SNMP", "SNMP_COMMUNITY", "NTP_SERVER",
    "SYSLOG_SERVER", "FEATURE", "CRM", "FLEX_COUNTER_TABLE",
    "DSCP_TO_TC_MAP", "DOT1P_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_DSCP_MAP",
    "MAP_PFC_PRIORITY_TO_QUEUE", "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", "PORT_QOS_MAP", "SCHEDULER",
    "QUEUE", "WRED_PROFILE", "BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE",
    "BUFFER_PORT_INGRESS_PROFILE_LIST", "BUFFER_PORT_EGRESS_PROFILE_LIST", "CABLE_LENGTH", "PFC_WD",
    "DEFAULT_LOSSLESS_BUFFER_PARAMETER", "LOSSLESS_TRAFFIC_PATTERN",
})
JSON_PATCH_OPS = ("add", "remove", "replace", "test", "move", "copy")
_ECN = {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow", "ecn_green_red",
        "ecn_yellow_red", "ecn_all"}
_UINT = re.compile(r"\d+")
_BOOL = {"true", "false"}


def _range(lo: int, hi: int) -> Any:
    def check(v: str) -> bool:
        return v.isdigit() and lo <= int(v) <= hi
    return check


# (table, field regex) -> validator of the string value (a YANG subset, roce.md §3 and §8.1)
FIELD_RULES: list[tuple[str, re.Pattern[str], Any]] = [
    ("PORT_QOS_MAP", re.compile(r"pfc_enable|pfcwd_sw_enable"), re.compile(r"([0-7](,[0-7])*)?").fullmatch),
    ("WRED_PROFILE", re.compile(r"ecn"), _ECN.__contains__),
    ("WRED_PROFILE", re.compile(r"(green|yellow|red)_(min|max)_threshold"), _UINT.fullmatch),
    ("WRED_PROFILE", re.compile(r"(green|yellow|red)_drop_probability"), _range(0, 100)),
    ("WRED_PROFILE", re.compile(r"wred_(green|yellow|red)_enable"), _BOOL.__contains__),
    ("PFC_WD", re.compile(r"detection_time"), _range(100, 5000)),
    ("PFC_WD", re.compile(r"restoration_time"), _range(100, 60000)),
    ("PFC_WD", re.compile(r"POLL_INTERVAL"), _range(100, 1000)),
    ("PFC_WD", re.compile(r"action"), {"drop", "forward", "alert"}.__contains__),
    ("SCHEDULER", re.compile(r"type"), {"DWRR", "WRR", "STRICT"}.__contains__),
    ("SCHEDULER", re.compile(r"weight"), _range(1, 100)),
    ("BUFFER_PROFILE", re.compile(r"xon|xoff|size|xon_offset"), _UINT.fullmatch),
    ("BUFFER_PROFILE", re.compile(r"dynamic_th"), re.compile(r"-?\d+").fullmatch),
    ("CABLE_LENGTH", re.compile(r".+"), re.compile(r"\d+m").fullmatch),
    ("DSCP_TO_TC_MAP", re.compile(r"\d+"), _range(0, 7)),
    ("TC_TO_PRIORITY_GROUP_MAP", re.compile(r"[0-7]"), _range(0, 7)),
    ("TC_TO_QUEUE_MAP", re.compile(r"[0-7]"), _range(0, 7)),
    ("MAP_PFC_PRIORITY_TO_QUEUE", re.compile(r"[0-7]"), _range(0, 7)),
    ("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", re.compile(r"[0-7]"), _range(0, 7)),
]


def validate_db(db: dict[str, Any]) -> str | None:
    """The first YANG-ish violation in a CONFIG_DB document, or None."""
    for table, entries in db.items():
        if table not in TABLES:
            return f"Table '{table}' is not a known SONiC YANG table"
        if not isinstance(entries, dict):
            return f"Table '{table}' must be an object"
        if not entries:
            return (f"Given patch is not valid because it will result in empty tables which is not allowed "
                    f"in ConfigDb. Table: {table}")
        for key, fields in entries.items():
            if not isinstance(fields, dict):
                return f"{table}|{key} must be an object of fields"
            for name, value in fields.items():
                if isinstance(value, list):
                    if not all(isinstance(v, str) for v in value):
                        return f"{table}|{key}|{name}: list values must be strings"
                    continue
                if not isinstance(value, str):
                    return f"{table}|{key}|{name}: value must be a string, got {type(value).__name__}"
                for t, rx, check in FIELD_RULES:
                    if t == table and rx.fullmatch(name) and not check(value):
                        return f"{table}|{key}|{name}: invalid value '{value}'"
    return None


def _ops_valid(patch: Any) -> str | None:
    if not isinstance(patch, list):
        return "patch must be a JSON list of operations"
    for op in patch:
        if not isinstance(op, dict) or op.get("op") not in JSON_PATCH_OPS:
            return f"invalid operation {json.dumps(op)[:120]}"
        path = op.get("path")
        if not isinstance(path, str) or not path.startswith("/"):
            return f"invalid path in {json.dumps(op)[:120]}"
        table = path.split("/")[1].replace("~1", "/").replace("~0", "~")
        if table not in TABLES:
            return f"Table '{table}' is not a known SONiC YANG table"
        if op["op"] in ("add", "replace", "test") and "value" not in op:
            return f"operation without value: {json.dumps(op)[:120]}"
    return None


class SonicSession(ShellSession):
    def banner(self) -> str:
        return ("Debian GNU/Linux 11 (bullseye)\nSONiC Software Version: SONiC.202305\n"
                "Last login from 127.0.0.1\n")

    def _config(self, argv: list[str]) -> Result:
        if not self.is_root:
            return "Root privileges are required for this operation\n", 1
        args = argv[1:]
        sub = args[0] if args else ""
        rest = [a for a in args[1:] if a not in ("-y", "--yes", "-v", "--verbose")]
        checkpoints: dict[str, Any] = self.dev.extra["checkpoints"]
        if sub == "checkpoint" and len(rest) == 1:
            checkpoints[rest[0]] = copy.deepcopy(self.dev.running)
            return ("Config Rollbacker: Config checkpoint starting.\n"
                    f"Config Rollbacker: Checkpoint name: {rest[0]}.\n"
                    "Config Rollbacker: Getting current config db.\n"
                    "Config Rollbacker: Saving config db content to /etc/sonic/checkpoints/"
                    f"{rest[0]}.cp.json.\nConfig Rollbacker: Config checkpoint completed.\n"
                    "Checkpoint created successfully.\n"), 0
        if sub == "rollback" and len(rest) == 1:
            if rest[0] not in checkpoints:
                return (f"Config Rollbacker: Config rollback starting.\nFailed to rollback config due to: "
                        f"Checkpoint '{rest[0]}' does not exist\n"
                        f"Error: Checkpoint '{rest[0]}' does not exist\n"), 1
            self.dev.running = copy.deepcopy(checkpoints[rest[0]])
            return ("Config Rollbacker: Config rollback starting.\n"
                    f"Config Rollbacker: Checkpoint name: {rest[0]}.\n"
                    "Config Rollbacker: Verifying 'checkpoint' exists.\n"
                    "Config Rollbacker: Loading checkpoint into memory.\n"
                    "Config Rollbacker: Replacing config using 'Config Replacer'.\n"
                    "Config Rollbacker: Config rollback completed.\nConfig rolled back successfully.\n"), 0
        if sub == "list-checkpoints":
            return json.dumps(sorted(checkpoints), indent=4) + "\n", 0
        if sub == "delete-checkpoint" and len(rest) == 1:
            if checkpoints.pop(rest[0], None) is None:
                return f"Error: Checkpoint '{rest[0]}' does not exist\n", 1
            return "Checkpoint deleted successfully.\n", 0
        if sub == "save":
            self.dev.saved = copy.deepcopy(self.dev.running)
            return ("Running command: /usr/local/bin/sonic-cfggen -d --print-data > "
                    "/etc/sonic/config_db.json\n"), 0
        if sub == "reload":
            self.dev.running = copy.deepcopy(self.dev.saved)
            return "Running command: rm -rf /tmp/dropstat-*\nRunning command: /usr/local/bin/sonic-cfggen " \
                   "-j /etc/sonic/config_db.json --write-to-db\n", 0
        if sub == "apply-patch" and rest:
            return self._apply_patch([a for a in rest if not a.startswith("-")], dry_run="--dry-run" in rest
                                     or "-d" in rest)
        return f"Usage: config [OPTIONS] COMMAND [ARGS]...\nError: No such command \"{sub}\".\n", 2

    def _apply_patch(self, files: list[str], dry_run: bool) -> Result:
        head = "Patch Applier: localhost: Patch application starting.\n"

        def fail(reason: str) -> Result:
            return (head + f"Failed to apply patch due to: {reason}\n"
                    "Usage: config apply-patch [OPTIONS] PATCH_FILE_PATH\n"
                    "Try \"config apply-patch -h\" for help.\n\n"
                    f"Error: {reason}\n"), 1

        if len(files) != 1:
            return fail("exactly one PATCH_FILE_PATH is needed")
        text = self.read(files[0])
        if text is None:
            return fail(f"Path '{files[0]}' does not exist")
        try:
            patch = json.loads(text)
        except json.JSONDecodeError as exc:
            return fail(f"patch file is not valid JSON: {exc}")
        err = _ops_valid(patch)
        if err:
            return fail(err)
        for op in patch:
            e = self.config_gate(json.dumps(op, sort_keys=True))
            if e is not None:
                return fail(f"change rejected by the device: {json.dumps(op)[:160]}")
        try:
            target = jsonpatch.apply_patch(self.dev.running, patch)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            return fail(str(exc))
        err = validate_db(target)
        if err:
            return fail(f"Given patch will produce invalid config. Error: {err}")
        n = len(patch)
        body = (head + f"Patch Applier: localhost: Patch: {json.dumps(patch)[:400]}\n"
                "Patch Applier: localhost: Getting current config db.\n"
                "Patch Applier: localhost: Simulating the target full config after applying the patch.\n"
                "Patch Applier: localhost: Validating target config does not have empty tables, "
                "since they do not show up in ConfigDb.\n"
                "Patch Applier: localhost: Sorting patch updates.\n"
                f"Patch Applier: localhost: The patch was sorted into {n} changes:\n")
        if dry_run:
            return body + ("Patch Applier: localhost: Dry run, nothing applied.\n"
                           "Patch applied successfully.\n"), 0
        body += f"Patch Applier: localhost: Applying {n} changes in order:\n"
        # One change at a time, so a session dropped mid-patch leaves a partial config (as GCU can).
        for op in patch:
            self.dev.running = jsonpatch.apply_patch(self.dev.running, [op])
            self.config_applied()
            if self.drop:
                return body, 1
        return (body + "Patch Applier: localhost: Verifying patch updates are reflected on ConfigDB.\n"
                "Patch Applier: localhost: Patch application completed.\nPatch applied successfully.\n"), 0

    def _show(self, argv: list[str]) -> Result:
        args = argv[1:]
        if args[:2] == ["runningconfiguration", "all"]:
            return json.dumps(self.dev.running, indent=4, sort_keys=True) + "\n", 0
        if args[:1] == ["version"]:
            return "SONiC Software Version: SONiC.202305\nPlatform: x86_64-mlnx_msn5600-r0\n", 0
        res = self.telemetry_result(" ".join(argv))
        if res is not None:
            return res
        return f"Usage: show [OPTIONS] COMMAND [ARGS]...\nError: No such command \"{' '.join(args)}\".\n", 2


def _config(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    assert isinstance(sh, SonicSession)
    return sh._config(argv)


def _show(sh: ShellSession, argv: list[str], stdin: str) -> Result:
    assert isinstance(sh, SonicSession)
    return sh._show(argv)


SonicSession.commands = {**BUILTINS, "config": _config, "show": _show}


def _saved_json(dev: DeviceState) -> str:
    return json.dumps(dev.saved, indent=4, sort_keys=True) + "\n"


class SonicProfile(ShellProfile):
    name = "sonic"
    session_class = SonicSession

    def init_state(self, dev: DeviceState) -> None:
        super().init_state(dev)
        dev.running = {"DEVICE_METADATA": {"localhost": {
            "hostname": dev.name, "hwsku": "Mellanox-SN5600-C256", "platform": "x86_64-mlnx_msn5600-r0",
            "type": "LeafRouter", "buffer_model": "dynamic"}}}
        dev.saved = copy.deepcopy(dev.running)
        dev.extra["checkpoints"] = {}
        dev.extra["dynamic_files"] = {"/etc/sonic/config_db.json": _saved_json}


    def load_baseline(self, dev: DeviceState, files: Mapping[str, str]) -> None:
        dev.running.update(baseline.json_document(files))
        dev.saved = copy.deepcopy(dev.running)

    def roce_class(self, dev: DeviceState, dscp: int) -> tuple[int | None, bool] | None:
        db = dev.running
        for port in db.get("PORT_QOS_MAP", {}).values():
            tc = db.get("DSCP_TO_TC_MAP", {}).get(port.get("dscp_to_tc_map", ""), {}).get(str(dscp))
            if tc is not None:
                return int(tc), tc in str(port.get("pfc_enable", "")).split(",")
        return None


PROFILE = SonicProfile()


# --- SNMP agent and telemetry show commands (data for fabriccfg.mock.mibs / .cli_telemetry) ---


def sonic_if_index(port: str) -> int | None:
    """sonic-snmpagent's ifIndex: EthernetN -> N + 1 (src/sonic_ax_impl/mibs/__init__.py,
    get_index_from_str)."""
    m = re.fullmatch(r"Ethernet(\d+)", port)
    return int(m.group(1)) + 1 if m else None


SNMP_AGENT = _m.Agent(
    # what sonic-snmpagent implements (src/sonic_ax_impl/mibs): no IEEE8021-PFC-MIB, no MELLANOX-QOS-MIB
    mibs=(_m.SNMPV2, _m.IF_MIB, _m.CISCO_PFC_EXT, _m.CISCO_SWITCH_QOS, _m.LLDP_MIB),
    sys_descr="SONiC Software Version: SONiC.202305 - HwSku: Mellanox-SN5600 - Distribution: Debian 11",
    sys_object_id=(1, 3, 6, 1, 4, 1, 8072, 3, 2, 10),
    if_index=sonic_if_index,
)
SHOW_COMMANDS = (
    (re.compile(rf"^show queue counters(?: {_ct.PORT})?$"), _ct.opt_port(_renderers.sonic_queue_counters)),
    (re.compile(rf"^show queue wredcounters(?: {_ct.PORT})?$"), _ct.opt_port(_renderers.sonic_wred_counters)),
    (re.compile(r"^show pfc counters$"), _ct.no_args(_renderers.sonic_pfc_counters)),
    (re.compile(r"^(?:pfcwd show stats|show pfcwd stats?)$"), _ct.no_args(_renderers.sonic_pfcwd_stats)),
    (re.compile(r"^show queue (?:persistent-)?watermark unicast$"),
     _ct.no_args(_renderers.sonic_queue_watermark)),
    (re.compile(r"^show priority-group (?:persistent-)?watermark shared$"),
     _ct.no_args(_renderers.sonic_pg_shared_watermark)),
    (re.compile(r"^show priority-group (?:persistent-)?watermark headroom$"),
     _ct.no_args(_renderers.sonic_pg_headroom_watermark)),
)
