"""SONiC oracle: every rendered ``config_db.json`` meets the SONiC YANG models' constraints.

The constraints are transcribed from the models (``oracles/sonic_yang_constraints.yaml``, model file and
leaf per row; libyang is not used because no package ships the sonic-yang-models files and tests cannot
download them). Documents: every SONiC switch of the example inventories, a generated SONiC fabric and
variants (ABNF references before 202106, static buffers, lossy mode, ECN off, watchdog off).
"""

from __future__ import annotations

import json

import pytest
from render_helpers import by_platform, fabric_from, rendered_examples
from sonic_yang_checker import Checker, constraints

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import loads
from fabriccfg.inventory.models import Fabric
from fabriccfg.render.engine import RenderedDevice, render_fabric


def _ports(fabric: Fabric, switch: str) -> set[str]:
    return {port for link in fabric.links for dev, port in link.ends if dev == switch}


def _gen_fabric() -> Fabric:
    data = generate(64, "roce", gpus_per_node=8, rails=2, platform="sonic")
    result = loads(dump_yaml(data), "gen-sonic.yaml")
    assert result.fabric is not None, [f.format() for f in result.findings]
    return result.fabric


def _documents() -> list[tuple[str, Fabric, str]]:
    lab = "roce-lab"
    variants = {
        "lab": fabric_from(lab),
        "abnf-202012": fabric_from(lab, ('rail: 1, os_release: "202305"', 'rail: 1, os_release: "202012"')),
        "static-wd-off": fabric_from(
            lab, ("host_mtu: 4200", "host_mtu: 4200\n  buffer: {model: static}"),
            ("enabled: true, detection_ms: 200", "enabled: false, detection_ms: 200")),
        "lossy-no-ecn-not-strict": fabric_from(
            lab, ("host_mtu: 4200", "host_mtu: 4200\n  mode: lossy\n  cnp_strict: false"),
            ('rail: 1, os_release: "202305"', 'rail: 1, os_release: "202305", qos: {ecn_enabled: false}')),
        "wd-forward-slow-poll": fabric_from(
            lab, ("restoration_ms: 400, poll_ms: 100, action: drop",
                  "restoration_ms: 1000, poll_ms: 200, action: forward")),
        "gen": _gen_fabric(),
    }
    out = []
    for label, fabric in variants.items():
        out += [(f"{label}/{d.name}", fabric, d.files["config_db.json"]) for d in render_fabric(fabric)
                if d.platform == "sonic"]
    return out


DOCS = _documents()


def _checker(name: str, fabric: Fabric) -> Checker:
    switch = next(s for s in fabric.switches if s.name == name.split("/", 1)[1])
    release = switch.os_release or "master"
    return Checker({"PORT": _ports(fabric, switch.name)}, abnf=release[:6].isdigit() and release < "202106")


@pytest.mark.parametrize(("name", "fabric", "text"), DOCS, ids=[d[0] for d in DOCS])
def test_oracle_sonic_yang(name: str, fabric: Fabric, text: str) -> None:
    doc = json.loads(text)
    assert isinstance(doc, dict)
    errors = _checker(name, fabric).check(doc)
    assert not errors, f"{name}: violates the SONiC YANG constraints:\n" + "\n".join(errors)


def test_oracle_sonic_yang_covers_every_table_we_write() -> None:
    written = {t for _, _, text in DOCS for t in json.loads(text)}
    assert written <= set(constraints()["tables"])
    for must in ("PORT_QOS_MAP", "DSCP_TO_TC_MAP", "TC_TO_PRIORITY_GROUP_MAP", "TC_TO_QUEUE_MAP",
                 "WRED_PROFILE", "BUFFER_PROFILE", "BUFFER_PG", "PFC_WD", "QUEUE", "PORT", "SCHEDULER"):
        assert must in written, f"no rendered document writes {must}: the oracle would not see it"


def test_oracle_sonic_yang_rows_cite_a_model() -> None:
    for table, spec in constraints()["tables"].items():
        assert spec["model"].startswith("sonic-") and spec["model"].endswith(".yang"), table
        assert spec["list"].endswith("_LIST"), table


@pytest.mark.parametrize(("mutate", "expect"), [
    (lambda d: d["PFC_WD"][next(k for k in d["PFC_WD"] if k != "GLOBAL")].update(detection_time="50"),
     "outside 100..5000"),
    (lambda d: d["PFC_WD"]["GLOBAL"].update(action="drop"), "not allowed on GLOBAL"),
    (lambda d: d["PORT_QOS_MAP"][next(iter(d["PORT_QOS_MAP"]))].update(tc_to_pg_map="NOPE"), "leafref"),
    (lambda d: d["WRED_PROFILE"][next(iter(d["WRED_PROFILE"]))].update(green_max_threshold="1"), "must"),
    (lambda d: d["QUEUE"].update({"Ethernet999|3": {"scheduler": "x"}}), "matches no branch of the union"),
    (lambda d: d["SCHEDULER"][next(iter(d["SCHEDULER"]))].update(quantum="1"), "is not a leaf"),
    (lambda d: d["DSCP_TO_TC_MAP"][next(iter(d["DSCP_TO_TC_MAP"]))].update({"64": "3"}), "does not match"),
])
def test_oracle_sonic_yang_catches_violations(mutate, expect: str) -> None:  # type: ignore[no-untyped-def]
    name, fabric, text = DOCS[0]
    doc = json.loads(text)
    assert not _checker(name, fabric).check(doc)
    mutate(doc)
    errors = _checker(name, fabric).check(doc)
    assert any(expect in e for e in errors), errors


def test_sonic_ports_get_the_intent_mtu() -> None:
    """Every port the fragment configures gets the switch MTU (SONiC's default is 9100, not the intent)."""
    for name, fabric, text in DOCS:
        doc = json.loads(text)
        want = str(fabric.roce.switch_mtu if fabric.roce else 9216)
        ports = {k for k in doc["PORT_QOS_MAP"] if k != "global"}
        got = {p: doc.get("PORT", {}).get(p, {}).get("mtu") for p in ports}
        assert ports and got == dict.fromkeys(ports, want), name


def test_rendered_docs_list_ports_in_device_order() -> None:
    rendered: dict[str, dict[str, RenderedDevice]] = rendered_examples()
    for dev in by_platform(rendered, "sonic"):
        doc = json.loads(dev.files["config_db.json"])
        ports = [k for k in doc["PORT_QOS_MAP"] if k != "global"]
        assert ports == sorted(ports, key=lambda p: int(p.removeprefix("Ethernet")))
        assert list(doc["CABLE_LENGTH"]["AZURE"]) == ports
