"""End to end against the mock fabric (real SSH servers on loopback): healthy, pause storm, ECN
misconfiguration, the IB labs, the wrong traffic class, a server that never listens."""

from __future__ import annotations

import json

import pytest
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.connect import connect
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.probe import commands, plan, runner, store
from fabriccfg.targets import load_endpoints

from .conftest import ROOT

pytestmark = pytest.mark.timeout(120)


def probe(inventory: str, mock: MockFabric, *extra: str):
    r = CliRunner().invoke(
        app,
        [
            "probe",
            str(ROOT / "inventories" / inventory),
            "--endpoints",
            str(mock.endpoints_file),
            "--format",
            "json",
            *extra,
        ],
    )
    doc = json.loads(r.stdout)
    return r, doc


def touching(fabric, doc, device_port):
    """Pairs of the run whose NICs land on the leaf that ``device_port`` lands on (from the cabling)."""
    leaf = fabric.neighbours[device_port][0]
    out = set()
    for r in doc["results"]:
        ends = [(r["client"]["host"], r["client"]["nic"]), (r["server"]["host"], r["server"]["nic"])]
        if leaf in {fabric.neighbours[e][0] for e in ends}:
            out.add(r["pair"])
    return out


def flagged(doc, check):
    return {f["subject"] for f in doc["probe_findings"] if f["check"] == check}


def test_healthy_roce_is_clean(roce, tmp_path):
    with MockFabric(roce, workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock, "--state-dir", str(tmp_path / "state"))
    assert r.exit_code == 0, r.output
    assert doc["status"] == "OK" and doc["probe_findings"] == []
    assert doc["plan"] == {"pairs": 6, "leaves": 4, "kinds": {"cross-rail": 2, "same-leaf": 4}}
    assert "pair plan: 6 pairs" in r.stderr
    assert all(
        x["tclass"] == 106 and x["gid_index"] == 3 and x["link_type"] == "Ethernet" for x in doc["results"]
    )
    assert all(x["busbw_gbytes"] and x["latency_us"]["p999"] for x in doc["results"])
    stored = store.latest(tmp_path / "state", "roce-lab")
    assert stored is not None and stored["results"] == doc["results"]


def test_pause_storm_widens_exactly_the_paths_through_its_leaf(roce, tmp_path):
    with MockFabric(roce, scenarios=["pause-storm:gpu05"], workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock)
    expected = touching(roce, doc, ("gpu05", "mlx5_0"))
    assert expected and len(expected) < len(doc["results"])
    assert flagged(doc, "tail-latency") == expected
    assert flagged(doc, "jitter") == expected
    assert r.exit_code == 2


def test_ecn_misconfig_widens_exactly_the_paths_through_the_switch(roce, tmp_path):
    with MockFabric(roce, scenarios=["ecn-misconfig:leaf-r2"], workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock)
    expected = {x["pair"] for x in doc["results"] if "leaf-r2" in x["leaves"]}
    assert expected == touching(roce, doc, ("gpu01", "mlx5_2"))
    assert flagged(doc, "tail-latency") == expected
    assert r.exit_code in (1, 2)


@pytest.mark.parametrize("inventory", ["ib-lab-mqm8790.yaml", "ib-lab-mqm8700.yaml"])
def test_ib_labs_use_verbs_without_a_class(request, inventory, tmp_path):
    fabric = request.getfixturevalue("ib" if "8790" in inventory else "ib8700")
    with MockFabric(fabric, workdir=tmp_path, snmp=False) as mock:
        r, doc = probe(inventory, mock)
    assert r.exit_code == 0, r.output
    assert all(x["tclass"] is None and x["link_type"] == "IB" for x in doc["results"])
    pair = plan.plan(fabric)[0]
    cmd = commands.perftest("ib_write_lat", fabric, pair.client, commands.ProbeOptions(), server=pair.server)
    assert "-x" not in cmd.split() and "--tclass" not in cmd


def test_wrong_class_is_a_finding(roce, tmp_path):
    with MockFabric(roce, workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock, "--tclass", "0", "--tools", "ib_write_lat")
    assert r.exit_code == 1
    assert flagged(doc, "probe-class") == {x["pair"] for x in doc["results"]}


def test_server_that_never_listens_is_bounded(roce, tmp_path):
    with MockFabric(roce, workdir=tmp_path, snmp=False) as mock:
        eps = load_endpoints(mock.endpoints_file)
        server, client = connect(eps["gpu01"]), connect(eps["gpu02"])
        try:
            with pytest.raises(RuntimeError, match="did not listen within 1 s"):
                runner.perftest_pair(
                    server,
                    client,
                    "ib_write_lat -d mlx5_9",
                    "ib_write_lat -d mlx5_0 gpu01",
                    listen_timeout=1.0,
                    run_timeout=5.0,
                )
            # the session is still usable afterwards (the server was interrupted, not left running)
            assert "Waiting for client" in server.send_command("ib_write_lat -d mlx5_0", read_timeout=5)
        finally:
            server.disconnect()
            client.disconnect()


def test_unreachable_host_is_unknown(roce, tmp_path):
    with MockFabric(roce, faults=["gpu01:unreachable"], workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock, "--timeout", "2", "--tools", "ib_write_lat")
    assert r.exit_code == 3
    assert any(f["check"] == "probe-run" and "gpu01" in f["subject"] for f in doc["probe_findings"])


def test_prometheus_summaries(roce, tmp_path):
    with MockFabric(roce, workdir=tmp_path, snmp=False) as mock:
        r = CliRunner().invoke(
            app,
            [
                "probe",
                str(ROOT / "inventories" / "roce-lab.yaml"),
                "--endpoints",
                str(mock.endpoints_file),
                "--format",
                "prometheus",
                "--max-pairs",
                "2",
            ],
        )
    assert r.exit_code == 0, r.output
    fams = {f.name: f for f in text_string_to_metric_families(r.stdout)}
    lat = fams["fabriccfg_probe_latency_microseconds"]
    assert lat.type == "summary"
    quantiles = {s.labels["quantile"] for s in lat.samples if "quantile" in s.labels}
    assert quantiles == {"0.5", "0.99", "0.999"}
    assert len(fams["fabriccfg_probe_busbw_gbytes"].samples) == 2


def test_probe_json_feeds_the_advisor(roce, tmp_path):
    """The loop of issue 15: probe a healthy and a storming mock, advise from each measurement."""
    straggler = {}
    for name, scenarios in (("healthy", []), ("storm", ["pause-storm:gpu05"])):
        out = tmp_path / f"{name}.json"
        with MockFabric(roce, scenarios=scenarios, workdir=tmp_path / name, snmp=False) as mock:
            probe("roce-lab.yaml", mock, "--output", str(out))
        r = CliRunner().invoke(
            app,
            [
                "advise",
                "--params",
                "100e9",
                "--tokens",
                "2e12",
                "--gpus",
                "1024",
                "--fabrics",
                "ib-hdr,roce-400g",
                "--from-telemetry",
                str(out),
                "--format",
                "json",
            ],
        )
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert any(n.startswith("roce-400g: straggler term") for n in doc["telemetry"])
        straggler[name] = {e["fabric"]: e["straggler"] for e in doc["estimates"]}
    assert straggler["storm"]["roce-400g"] > 2 * straggler["healthy"]["roce-400g"]
    assert straggler["storm"]["ib-hdr"] == straggler["healthy"]["ib-hdr"]


def test_microburst_widens_exactly_the_paths_through_its_port(roce, tmp_path):
    """Incast into leaf-r0:swp2 (gpu02's NIC on rail 0): the paths that end on that NIC, and not the other
    path through leaf-r0 (gpu01:mlx5_0 to rail 1)."""
    with MockFabric(roce, scenarios=["microburst:leaf-r0:swp2"], workdir=tmp_path, snmp=False) as mock:
        r, doc = probe("roce-lab.yaml", mock)
    nic = ("gpu02", "mlx5_0")
    assert roce.neighbours[nic] == ("leaf-r0", "swp2")
    ends = {x["pair"]: {(x[k]["host"], x[k]["nic"]) for k in ("client", "server")} for x in doc["results"]}
    expected = {pair for pair, nics in ends.items() if nic in nics}
    assert expected and expected < touching(roce, doc, nic)
    assert flagged(doc, "tail-latency") == expected
    assert r.exit_code in (1, 2)
