"""Each golden file that encodes a vendor fact also asserts that fact by name, so a regenerated golden file
cannot silently change a unit, a keyword or a convention (EOS, SONiC, NX-OS of the roce-lab example).

The facts and their sources: /work/shared/reference/roce.md (section per row) and the oracle tables in
tests/render/oracles/. The golden files are read as files: nothing here runs the renderer.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

GOLDEN = Path(__file__).parent / "golden" / "roce-lab"
EOS = GOLDEN / "leaf-r2" / "config.txt"
NXOS = GOLDEN / "leaf-r3" / "config.txt"
SONIC = [GOLDEN / "leaf-r1" / "config_db.json", GOLDEN / "spine2" / "config_db.json"]

# (fact, regex that must match the golden text, source)
EOS_FACTS = [
    ("ECN thresholds in bytes (units keyword 'bytes'; intent 150000/1500000 B)",
     r"(?m)^      random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes "
     r"max-mark-probability 100 weight 0$", "roce.md §4; AVD schema units"),
    ("ECN marks counted on the RoCE queue (else EOS shows '-' in 'show qos interfaces ecn counters queue')",
     r"(?m)^   uc-tx-queue 3\n(?:      .*\n)*      random-detect ecn count$",
     "AVD schema: uc_tx_queues[].random_detect.ecn.count; anta test_interfaces.py ECN vectors"),
    ("PFC watchdog times in seconds (200/100/400 ms -> 0.2/0.1/0.4)",
     r"(?ms)^priority-flow-control pause watchdog default timeout 0\.2$.*"
     r"^priority-flow-control pause watchdog default polling-interval 0\.1$.*"
     r"^priority-flow-control pause watchdog default recovery-time 0\.4$", "roce.md §8.3"),
    ("watchdog action drop overrides EOS's errdisable default",
     r"(?m)^priority-flow-control pause watchdog action drop$", "roce.md §8.3"),
    ("MTU capped at 9214 (Arista's examples; intent 9216)", r"(?m)^   mtu 9214$", "roce.md §7.4"),
    ("DSCP 26 -> traffic-class 3 and DSCP 48 -> traffic-class 6 mapped explicitly",
     r"(?ms)^qos map dscp 26 to traffic-class 3$.*^qos map dscp 48 to traffic-class 6$", "roce.md §4, §7.1"),
    ("priority 3 is no-drop with PFC on",
     r"(?m)^   priority-flow-control on\n   priority-flow-control priority 3 no-drop$", "roce.md §4"),
    ("Tomahawk has separate unicast queues: uc-tx-queue", r"(?m)^   uc-tx-queue 3$", "roce.md §4"),
]
NXOS_FACTS = [
    ("ECN thresholds in kbytes (bytes / 1000 rounded up: 150000 B -> 150 kbytes)",
     r"(?m)^    random-detect minimum-threshold 150 kbytes maximum-threshold 1500 kbytes "
     r"drop-probability 100 weight 0 ecn$", "roce.md §5; oracles/nxos_grammar.yaml wred-ecn"),
    ("no-drop class: pause pfc-cos 3 on c-8q-nq3",
     r"(?m)^  class type network-qos c-8q-nq3\n    mtu 9216\n    pause pfc-cos 3$", "roce.md §5"),
    ("CNP queue strict: priority level 1 on c-out-8q-q6",
     r"(?m)^  class type queuing c-out-8q-q6\n    priority level 1$", "roce.md §5, §7.1"),
    ("PFC watchdog on globally and per interface",
     r"(?ms)^priority-flow-control watch-dog-interval on$.*^  priority-flow-control watch-dog-interval on$",
     "roce.md §8.4"),
    ("interface MTU 9216", r"(?m)^interface Ethernet1/1\n  description [^\n]+\n  mtu 9216$", "roce.md §5"),
]


@pytest.mark.parametrize(("fact", "pattern", "source"), EOS_FACTS, ids=[f[0] for f in EOS_FACTS])
def test_eos_golden_fact(fact: str, pattern: str, source: str) -> None:
    assert re.search(pattern, EOS.read_text(encoding="utf-8")), f"EOS golden lost the fact: {fact} ({source})"


@pytest.mark.parametrize(("fact", "pattern", "source"), NXOS_FACTS, ids=[f[0] for f in NXOS_FACTS])
def test_nxos_golden_fact(fact: str, pattern: str, source: str) -> None:
    text = NXOS.read_text(encoding="utf-8")
    assert re.search(pattern, text), f"NX-OS golden lost the fact: {fact} ({source})"


def test_nxos_golden_fact_bandwidth_remaining_sums_to_100() -> None:
    text = NXOS.read_text(encoding="utf-8")
    total = sum(int(n) for n in re.findall(r"bandwidth remaining percent (\d+)", text))
    assert total == 100, "NX-OS: 'bandwidth remaining percent' of the 8 queues must sum to 100"


@pytest.mark.parametrize("path", SONIC, ids=[p.parent.name for p in SONIC])
def test_sonic_golden_facts(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    wred = next(iter(doc["WRED_PROFILE"].values()))
    assert (wred["green_min_threshold"], wred["green_max_threshold"]) == ("150000", "1500000"), \
        "WRED/ECN thresholds in bytes (sonic-wred-profile.yang units bytes)"
    assert wred["ecn"] == "ecn_all", "ECN marking on all colours"
    wd = doc["PFC_WD"]
    port_wd = next(v for k, v in wd.items() if k != "GLOBAL")
    assert (port_wd["detection_time"], port_wd["restoration_time"], wd["GLOBAL"]["POLL_INTERVAL"]) == \
        ("200", "400", "100"), "PFC watchdog times in milliseconds (sonic-pfcwd.yang)"
    qmap = next(v for k, v in doc["PORT_QOS_MAP"].items() if k != "global")
    assert (qmap["pfc_enable"], qmap["pfcwd_sw_enable"]) == ("3", "3"), "pfc_enable is a priority list string"
    assert qmap["dscp_to_tc_map"] == "ROCE", "bare-name references on 202305 (ABNF only before 202106)"
    assert next(iter(doc["DSCP_TO_TC_MAP"].values()))["26"] == "3", "DSCP 26 -> TC 3 (stock SONiC: 26 -> 1)"
    assert set(next(iter(doc["BUFFER_PG"].values())).values()) == {"NULL"}, \
        "dynamic buffer model: BUFFER_PG profile NULL (buffermgrd sizes the headroom)"
    cables = doc["CABLE_LENGTH"]["AZURE"].values()
    assert all(re.fullmatch(r"\d+m", v) for v in cables), "cable length in metres"
    assert {v["mtu"] for v in doc["PORT"].values()} == {"9216"}, "port MTU from the intent (default 9100)"
