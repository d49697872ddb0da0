"""Rendered SONiC documents are JSON and use only table and field names of the SONiC YANG models.

The allow-list cites roce.md §3 (and §8.1 for PFC_WD): each table names its YANG model in
``sonic-net/sonic-buildimage:src/sonic-yang-models/yang-models/``.
"""

from __future__ import annotations

import json
import re

import pytest
from render_helpers import by_platform, fabric_from, rendered_examples

from fabriccfg.render.engine import RenderedDevice, render_fabric

_PRIO = {str(n) for n in range(8)}
_PORT = re.compile(r"^Ethernet\d+$")

# table -> (YANG model, citation, allowed field names); None = keys of a map (checked separately)
ALLOWED: dict[str, tuple[str, str, frozenset[str] | None]] = {
    "PORT_QOS_MAP": ("sonic-port-qos-map.yang", "roce.md §3.1", frozenset({
        "dscp_to_tc_map", "tc_to_queue_map", "tc_to_pg_map", "pfc_to_queue_map", "pfc_to_pg_map",
        "dot1p_to_tc_map", "tc_to_dscp_map", "scheduler", "pfc_enable", "pfcwd_sw_enable"})),
    "WRED_PROFILE": ("sonic-wred-profile.yang", "roce.md §3.1", frozenset(
        {f"{c}_{k}" for c in ("green", "yellow", "red") for k in ("min_threshold", "max_threshold",
                                                                   "drop_probability")}
        | {f"wred_{c}_enable" for c in ("green", "yellow", "red")} | {"ecn"})),
    "QUEUE": ("sonic-queue.yang", "roce.md §3.1 (NVIDIA SONiC QoS doc)",
              frozenset({"wred_profile", "scheduler"})),
    "BUFFER_PROFILE": ("sonic-buffer-profile.yang", "roce.md §3.1", frozenset(
        {"pool", "xon", "xoff", "size", "dynamic_th", "static_th"})),
    "BUFFER_PG": ("sonic-buffer-pg.yang", "roce.md §3.1", frozenset({"profile"})),
    "CABLE_LENGTH": ("sonic-cable-length.yang", "roce.md §3.1", None),
    "PFC_WD": ("sonic-pfcwd.yang", "roce.md §8.1", frozenset(
        {"action", "detection_time", "restoration_time", "pfc_stat_history",
         "POLL_INTERVAL", "BIG_RED_SWITCH"})),
    "DSCP_TO_TC_MAP": ("sonic-dscp-tc-map.yang", "roce.md §3.2/§3.3", None),
    "TC_TO_PRIORITY_GROUP_MAP": ("sonic-tc-priority-group-map.yang", "roce.md §3.2/§3.3", None),
    "TC_TO_QUEUE_MAP": ("sonic-tc-queue-map.yang", "roce.md §3.2", None),
    "MAP_PFC_PRIORITY_TO_QUEUE": ("sonic-pfc-priority-queue-map.yang", "roce.md §3.2", None),
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": ("sonic-pfc-priority-priority-group-map.yang", "roce.md §3.2",
                                           None),
    # the target of QUEUE.scheduler (roce.md §3.2: scheduler.0/scheduler.1); needed for the CNP STRICT queue
    "SCHEDULER": ("sonic-scheduler.yang", "roce.md §3.2 (QUEUE.scheduler)", frozenset(
        {"type", "weight", "priority", "meter_type", "cir", "cbs", "pir", "pbs"})),
}
MAP_KEYS = {
    "DSCP_TO_TC_MAP": {str(n) for n in range(64)},
    "TC_TO_PRIORITY_GROUP_MAP": _PRIO,
    "TC_TO_QUEUE_MAP": _PRIO,
    "MAP_PFC_PRIORITY_TO_QUEUE": _PRIO,
    "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": _PRIO,
}


def _documents() -> list[tuple[str, str]]:
    docs = [(f"{d.name}", d.files["config_db.json"]) for d in by_platform(rendered_examples(), "sonic")]
    variants = {
        "abnf-202012": fabric_from("roce-lab", ('rail: 1, os_release: "202305"',
                                                'rail: 1, os_release: "202012"')),
        "static-lossy-wd-off": fabric_from(
            "roce-lab", ("host_mtu: 4200", "host_mtu: 4200\n  buffer: {model: static}"),
            ("enabled: true, detection_ms: 200", "enabled: false, detection_ms: 200")),
        "lossy-no-ecn-not-strict": fabric_from(
            "roce-lab", ("host_mtu: 4200", "host_mtu: 4200\n  mode: lossy\n  cnp_strict: false"),
            ('rail: 1, os_release: "202305"', 'rail: 1, os_release: "202305", qos: {ecn_enabled: false}')),
    }
    for label, fabric in variants.items():
        docs += [(f"{label}/{d.name}", d.files["config_db.json"]) for d in render_fabric(fabric)
                 if d.platform == "sonic"]
    return docs


@pytest.mark.parametrize(("name", "text"), _documents())
def test_sonic_doc_uses_yang_names(name: str, text: str) -> None:
    doc = json.loads(text)
    assert isinstance(doc, dict)
    for table, entries in doc.items():
        assert table in ALLOWED, f"{name}: table {table} is not in the YANG allow-list"
        assert isinstance(entries, dict) and entries
        fields = ALLOWED[table][2]
        for key, values in entries.items():
            assert isinstance(values, dict) and values, f"{name}: {table}|{key}"
            assert all(isinstance(v, str) for v in values.values()), f"{name}: {table}|{key}: not strings"
            if table in MAP_KEYS:
                assert set(values) <= MAP_KEYS[table], f"{name}: {table}|{key}"
            elif table == "CABLE_LENGTH":
                assert all(_PORT.match(p) and re.fullmatch(r"\d+m", v) for p, v in values.items())
            else:
                assert fields is not None
                assert set(values) <= fields, f"{name}: {table}|{key}: {set(values) - fields}"
    _check_values(name, doc)


def _check_values(name: str, doc: dict[str, dict[str, dict[str, str]]]) -> None:
    for key, fields in doc.get("PORT_QOS_MAP", {}).items():
        for f in ("pfc_enable", "pfcwd_sw_enable"):
            if f in fields:
                assert re.fullmatch(r"([0-7](,[0-7])*)?", fields[f]), f"{name}: {key}.{f}"
    for pname, prof in doc.get("WRED_PROFILE", {}).items():
        assert re.fullmatch(r"[a-zA-Z0-9][-a-zA-Z0-9_]*", pname) and len(pname) <= 32
        assert prof["ecn"] in {"ecn_none", "ecn_green", "ecn_yellow", "ecn_red", "ecn_green_yellow",
                               "ecn_green_red", "ecn_yellow_red", "ecn_all"}
        for c in ("green", "yellow", "red"):
            assert int(prof[f"{c}_max_threshold"]) >= int(prof[f"{c}_min_threshold"]) > 0
            assert 0 <= int(prof[f"{c}_drop_probability"]) <= 100
            assert prof[f"wred_{c}_enable"] in ("true", "false")
    for key, wd in doc.get("PFC_WD", {}).items():
        if key == "GLOBAL":
            assert 100 <= int(wd["POLL_INTERVAL"]) <= 1000
            continue
        assert wd["action"] in ("drop", "forward", "alert")
        assert 100 <= int(wd["detection_time"]) <= 5000 and 100 <= int(wd["restoration_time"]) <= 60000
    for sched in doc.get("SCHEDULER", {}).values():
        assert sched["type"] in ("DWRR", "WRR", "STRICT")


def test_allow_list_cites_roce_md() -> None:
    for table, (model, cite, _) in ALLOWED.items():
        assert model.startswith("sonic-") and model.endswith(".yang"), table
        assert cite.startswith("roce.md §"), table


def test_rendered_docs_list_ports_in_device_order(rendered: dict[str, dict[str, RenderedDevice]]) -> None:
    for dev in by_platform(rendered, "sonic"):
        doc = json.loads(dev.files["config_db.json"])
        ports = [k for k in doc["PORT_QOS_MAP"] if k != "global"]
        assert ports == sorted(ports, key=lambda p: int(p.removeprefix("Ethernet")))
        assert list(doc["CABLE_LENGTH"]["AZURE"]) == ports
