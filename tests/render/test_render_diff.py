"""The shared diff: merge semantics per style and the invariant apply(diff(running)) == intent."""

from __future__ import annotations

import json
import random
import re

import pytest
from render_helpers import rendered_examples

from fabriccfg.render.diff import DeviceDiff, apply_diff, diff_device
from fabriccfg.render.engine import RenderedDevice

DEVICES = [d for devs in rendered_examples().values() for d in devs.values()]
IDS = [f"{d.platform}:{d.name}" for d in DEVICES]
UNMANAGED = {
    "eos": "interface Ethernet99/1\n   description unmanaged\n   shutdown\n!\nntp server 192.0.2.200\n",
    "nxos": "interface Ethernet1/99\n  description unmanaged\nntp server 192.0.2.200\n",
    "cumulus-nvue": "nv set system hostname unmanaged\nnv set interface swp99 link state down\n",
    "mlnxos-ib": "##\n## unmanaged\n##\n   snmp-server location lab\n",
}


def _mutate(text: str, seed: int) -> str:
    """Drop some lines and change some numbers, deterministically."""
    rng = random.Random(seed)
    out = []
    for line in text.splitlines():
        if rng.random() < 0.2:
            continue
        if rng.random() < 0.2:
            line = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 1), line, count=1)
        out.append(line)
    return "\n".join(out) + "\n"


def _assert_converges(dev: RenderedDevice, running: dict[str, str]) -> DeviceDiff:
    diff = diff_device(dev.platform, dev.files, running)
    after = apply_diff(dev.platform, running, dev.files, diff)
    again = diff_device(dev.platform, dev.files, after)
    assert not again.changed, (again.commands[:10], again.patch[:5], sorted(again.files))
    return diff


@pytest.mark.parametrize("dev", DEVICES, ids=IDS)
def test_intent_against_itself_is_unchanged(dev: RenderedDevice) -> None:
    diff = diff_device(dev.platform, dev.files, dict(dev.files))
    assert not diff.changed and not diff.commands and not diff.patch and not diff.files and not diff.text


@pytest.mark.parametrize("dev", DEVICES, ids=IDS)
def test_empty_running_converges(dev: RenderedDevice) -> None:
    diff = _assert_converges(dev, {})
    assert diff.changed


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("dev", DEVICES, ids=IDS)
def test_mutated_running_converges(dev: RenderedDevice, seed: int) -> None:
    running = {}
    for name, text in dev.files.items():
        if name.endswith(".json"):
            doc = json.loads(text)
            rng = random.Random(seed)
            for table in list(doc):
                for key in list(doc[table]):
                    if rng.random() < 0.2:
                        del doc[table][key]
                    elif rng.random() < 0.3:
                        field = sorted(doc[table][key])[0]
                        doc[table][key][field] = "0"
            running[name] = json.dumps(doc)
        else:
            running[name] = _mutate(text, seed)
    _assert_converges(dev, running)


@pytest.mark.parametrize("dev", [d for d in DEVICES if d.platform in UNMANAGED],
                         ids=[i for d, i in zip(DEVICES, IDS, strict=True) if d.platform in UNMANAGED])
def test_cli_merge_keeps_unmanaged_lines(dev: RenderedDevice) -> None:
    name = next(iter(dev.files))
    running = {name: _mutate(dev.files[name], 7) + UNMANAGED[dev.platform]}
    diff = _assert_converges(dev, running)
    assert diff.style == "cli" and diff.changed
    after = apply_diff(dev.platform, running, dev.files, diff)[name]
    for line in UNMANAGED[dev.platform].splitlines():
        if line.strip() and not line.lstrip().startswith(("#", "!")):
            assert line.strip() in after, line
    negations = [c.strip() for c in diff.commands if c.strip().startswith("no ")]
    intended = {line.strip() for line in dev.files[name].splitlines()}
    assert all(n in intended for n in negations), negations  # never removes what the intent does not say


def test_cli_changed_value_replaces_old_one() -> None:
    dev = rendered_examples()["roce-lab"]["leaf-r2"]
    running = {"config.txt": dev.files["config.txt"].replace("mtu 9214", "mtu 9000", 1)}
    diff = diff_device("eos", dev.files, running)
    assert diff.commands == ["interface Ethernet1/1", "  mtu 9214", "  exit"]
    assert "- mtu 9000" in diff.text and "+ mtu 9214" in diff.text


def test_mlnxos_sm_off_sends_negation_only_when_sm_runs() -> None:
    dev = rendered_examples()["ib-lab-mqm8700"]["ib8700-leaf2"]
    base = "\n".join(line for line in dev.files["config.txt"].splitlines() if "no ib sm" not in line)
    running = {"config.txt": base + "\n   ib sm\n"}
    diff = _assert_converges(dev, running)
    assert diff.commands == ["no ib sm"]
    assert not diff_device("mlnxos-ib", dev.files, {"config.txt": base}).changed


def test_json_patch_is_restricted_to_intent() -> None:
    dev = rendered_examples()["roce-lab"]["leaf-r1"]
    doc = json.loads(dev.files["config_db.json"])
    doc["DEVICE_METADATA"] = {"localhost": {"hostname": "leaf-r1"}}             # table we do not manage
    doc["PORT"]["Ethernet0"] = {"mtu": "9100", "lanes": "0,1,2,3"}             # SONiC's default MTU
    doc["DSCP_TO_TC_MAP"]["AZURE"] = {"3": "3", "4": "4"}                       # key we do not manage
    doc["PORT_QOS_MAP"]["Ethernet0"]["dot1p_to_tc_map"] = "AZURE"                # field we do not manage
    doc["PORT_QOS_MAP"]["Ethernet0"]["pfc_enable"] = "3,4"                       # field we manage
    del doc["WRED_PROFILE"]
    running = {"config_db.json": json.dumps(doc)}
    diff = _assert_converges(dev, running)
    assert {op["op"] for op in diff.patch} <= {"add", "replace"}
    paths = sorted(op["path"] for op in diff.patch)
    assert paths == ["/PORT/Ethernet0/mtu", "/PORT_QOS_MAP/Ethernet0/pfc_enable", "/WRED_PROFILE"]
    after = json.loads(apply_diff("sonic", running, dev.files, diff)["config_db.json"])
    assert after["DEVICE_METADATA"] == doc["DEVICE_METADATA"]
    assert after["DSCP_TO_TC_MAP"]["AZURE"] == {"3": "3", "4": "4"}
    assert after["PORT"]["Ethernet0"] == {"mtu": "9216", "lanes": "0,1,2,3"}
    assert after["PORT_QOS_MAP"]["Ethernet0"]["dot1p_to_tc_map"] == "AZURE"
    assert diff.patch_file == "config_db.json" and "pfc_enable" in diff.text


def test_files_style_lists_only_changed_files() -> None:
    dev = rendered_examples()["ib-lab-mqm8790"]["sm1"]
    running = dict(dev.files)
    running["opensm.conf"] = running["opensm.conf"].replace("sm_priority 15", "sm_priority 1")
    running["extra.conf"] = "not ours\n"
    del running["node-name-map"]
    diff = _assert_converges(dev, running)
    assert sorted(diff.files) == ["node-name-map", "opensm.conf"]
    assert "-sm_priority 1\n+sm_priority 15" in diff.text
    assert apply_diff("opensm-host", running, dev.files, diff)["extra.conf"] == "not ours\n"


def test_unknown_style_platform_never_changes() -> None:
    diff = diff_device("unmanaged-ib", {}, {"x": "y"})
    assert diff.style == "none" and not diff.changed
