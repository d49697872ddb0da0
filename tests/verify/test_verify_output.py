"""Report formats: JSON shape, JUnit parses, Prometheus text parses."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from prometheus_client.parser import text_string_to_metric_families

from fabriccfg.verify import output

from .conftest import run
from .synth import Synth


def _storm_report(roce, checks):
    s = Synth(roce)
    s.pause_storm("gpu03", "mlx5_0", since=5.0)
    s.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    return run(s, checks, times=(4.0, 9.0, 10.0, 11.0))


def test_json_shape(roce, checks):
    doc = json.loads(output.to_json(_storm_report(roce, checks)))
    assert doc["status"] == "CRITICAL" and doc["exit_code"] == 2
    assert isinstance(doc["findings"], list) and doc["findings"]
    for f in doc["findings"]:
        assert {
            "check",
            "severity",
            "device",
            "port",
            "priority",
            "value",
            "threshold",
            "hint",
            "message",
        } <= set(f)
        assert f["severity"] in ("warning", "critical", "unknown")
    storm = next(f for f in doc["findings"] if f["check"] == "pfc-storm-origin")
    assert storm["origin"] == "gpu03:mlx5_0" and storm["path"][0] == "gpu03:mlx5_0"
    assert {c["check"] for c in doc["checks"]} >= {"pfc-pause-storm", "ib-cabling"}


def test_junit_parses(roce, checks):
    report = _storm_report(roce, checks)
    root = ET.fromstring(output.to_junit(report))
    assert root.tag == "testsuites"
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) >= {c.id for c in checks}
    drops = suites["lossless-queue-drops"]
    cases = {c.get("name"): c for c in drops.findall("testcase")}
    case = cases["leaf-r2:Ethernet3/1 prio 3"]
    assert case.find("failure").get("type") == "CRITICAL"
    assert "leaf-r0:swp29 prio 3" in cases and cases["leaf-r0:swp29 prio 3"].find("failure") is None
    assert int(drops.get("tests")) == len(cases) > 20 and drops.get("failures") == "1"
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites.values()) >= 3
    assert suites["ib-cabling"].find("testcase/skipped") is not None
    assert suites["link-errors"].find("testcase/failure") is None


def test_prometheus_text_parses(roce, checks):
    report = _storm_report(roce, checks)
    fams = {f.name: f for f in text_string_to_metric_families(output.to_prometheus(report))}
    assert fams["fabriccfg_verify_status"].samples[0].value == 2
    states = {s.labels["check"]: s.value for s in fams["fabriccfg_check_state"].samples}
    assert states["pfc-storm-origin"] == 2 and states["ib-cabling"] == -1
    origin = [s for s in fams["fabriccfg_finding"].samples if s.labels["check"] == "pfc-storm-origin"]
    assert origin[0].labels["origin"] == "gpu03:mlx5_0" and origin[0].value == 2


def test_table_mentions_origin_and_path(roce, checks):
    text = output.to_table(_storm_report(roce, checks), width=200)
    assert "storm origin: gpu03:mlx5_0" in text and "leaf-r0:swp3" in text
    assert text.strip().splitlines()[-2].startswith("CRITICAL") or "CRITICAL:" in text
