"""The mock must not drift from reality: its output for a command parses to the same structure as a real
capture of that command (same keys, same value types, numbers in the same units).

Real captures and their origin are listed in each fixture folder's ``SOURCE`` (``real:``); the mock's output
is rendered live by ``fabriccfg.mock.cli_telemetry`` for the same command. Structure = the set of typed
paths of the parsed result, with instance keys (ports, queues, priorities, GUIDs) collapsed to ``*``.
Folders for which no real capture could be found say so in ``SOURCE`` (``not_found:``) and are listed in
``NO_CAPTURE`` below, so finding one later forces this test to be extended.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock import cli_telemetry as C
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.telemetry.parsers import all_parsers

PARSERS = all_parsers()

FIXTURES = Path(__file__).parent / "fixtures"
INV = Path(__file__).resolve().parents[2] / "inventories"
T0 = 1_750_000_000.0

# folder -> (inventory, scenarios, device, command line the mock renders)
MOCK_COMMAND: dict[str, tuple[str, list[str], str, str]] = {
    "sonic_pfc": ("roce-lab", ["pause-storm:gpu02:mlx5_1"], "leaf-r1", "show pfc counters"),
    "sonic_pfcwd": ("roce-lab", ["pause-storm:gpu02:mlx5_1"], "leaf-r1", "pfcwd show stats"),
    "sonic_queue": ("roce-lab", ["lossless-drop:leaf-r1:Ethernet8"], "leaf-r1", "show queue counters"),
    "sonic_wred": ("roce-lab", ["congestion:gpu02"], "leaf-r1", "show queue wredcounters"),
    "nvue_roce": ("roce-lab", ["congestion:gpu03"], "leaf-r0", "nv show interface swp3 qos roce counters"),
    "nvue_pfcwd": ("roce-lab", ["pause-storm:gpu03"], "leaf-r0", "nv show interface swp3 qos pfc-watchdog"),
    "sminfo": ("ib-lab-mqm8790", [], "sm1", "sminfo"),
    "ethtool": ("roce-lab", ["pause-storm:gpu03"], "gpu03", "ethtool -S ens1f0np0"),
    "perfquery": ("ib-lab-mqm8790", ["ib-congestion:ib-leaf-r0:1/1"], "gpu01", "perfquery -x"),
    "ibqueryerrors": ("ib-lab-mqm8700", ["ib-symbol-errors:ib8700-leaf1:1/2"], "node01", "ibqueryerrors"),
    "ibnetdiscover": ("ib-lab-mqm8700", [], "node01", "ibnetdiscover"),
    "eos_ecn": ("roce-lab", ["congestion:gpu01"], "leaf-r2",
                "show qos interfaces ecn counters queue | json"),
    "eos_pfc": ("roce-lab", ["pause-storm:gpu01:mlx5_2"], "leaf-r2",
                "show priority-flow-control counters | json"),
    # vendorcap block (EOS / NX-OS, #11 + #15 + #14): the bulk commands the collector runs
    "nxos_queuing": ("roce-lab", ["congestion:gpu01"], "leaf-r3", "show queuing interface"),
    "nxos_pfc_queue": ("roce-lab", ["pause-storm:gpu01:mlx5_3"], "leaf-r3", "show queuing pfc-queue detail"),
    "eos_lanz": ("roce-lab", ["congestion:gpu01"], "leaf-r2",
                 "show queue-monitor length limit 30 seconds | json"),
}
NO_CAPTURE = {"eos_pfcwd"}
"""No published capture found (each folder's SOURCE lists what was searched)."""
NOT_IN_MOCK = {
    "systemctl": "rendered by the mock shell (fabriccfg.mock.shell), not by cli_telemetry",
    "opensm_applied": "only the real OpenSM writes this log (ibsim backend, tests/mock/test_ibsim.py); "
                      "the modelled mock has no SM process, its SM checks say UNKNOWN with that reason",
}

# folder -> {typed path: reason} allowed on one side only
ONLY_REAL: dict[str, dict[str, str]] = {
    "ibnetdiscover": {
        "[]/nports:NoneType": "treydock_ports.txt is 'ibnetdiscover -p' (one line per port, no node port "
                              "count); the mock renders the default topology format",
        "[]/attrs:{}": "spine_leaf_hdr.txt holds node lines excerpted without their attribute comment",
    },
    "perfquery": {
        "[]/cap_mask2:NoneType": "basic_saturated.txt is the legacy (non -x) format, which has no CapMask2; "
                                 "the mock command compared here is 'perfquery -x'",
    },
}
PARTIAL = {"ethtool": "the published capture is the first 23 counters only; the mock's per-priority, DCQCN "
                      "and _phy names come from the kernel's mlx5 counters.rst"}
"""Partial captures: on the paths both have, the value types must agree; the mock may have more."""
ONLY_MOCK: dict[str, dict[str, str]] = {
    "nxos_queuing": {
        "/*/queues/*/ECN Marked Pkts:int": "the published FX2 capture has no ECN row; the mock prints "
                                           "the 10.x name (UNVERIFIED, nxos_queuing/SOURCE) so marks "
                                           "reach the checks",
    },
    "ibqueryerrors": {
        "/nodes[]/wide/*[]:str": "the mock prints 64-bit counters in the wide '(x.xxxM)' form of "
                                 "ibqueryerrors.c (CapMask2 bit 1); the published captures are 32-bit",
    },
}
EXACT = {"sonic_pfc", "sonic_pfcwd", "sonic_queue", "sonic_wred", "nvue_roce", "nvue_pfcwd", "sminfo",
         "eos_ecn", "eos_pfc", "nxos_pfc_queue", "eos_lanz"}
"""Same structure both ways. Elsewhere the real captures show optional parts a given scenario does not
produce (thresholds, suppressed lists, other output modes): there the mock's structure must be a subset."""

# Buffer watermarks (#15 micro-bursts): SONiC watermarkstat and Cumulus NVUE qos buffer, rendered by the
# mock from TrafficModel.watermarks() under scenarios that raise them.
MOCK_COMMAND.update({
    "sonic_queue_wm": ("roce-lab", ["microburst:leaf-r1:Ethernet0"], "leaf-r1",
                       "show queue watermark unicast"),
    "sonic_pg_shared_wm": ("roce-lab", ["microburst:leaf-r1:Ethernet0"], "leaf-r1",
                           "show priority-group watermark shared"),
    "sonic_pg_headroom_wm": ("roce-lab", ["pause-storm:gpu02:mlx5_0"], "leaf-r1",
                             "show priority-group watermark headroom"),
    "nvue_qos_buffer": ("roce-lab", ["pause-storm:gpu05"], "leaf-r0", "nv show interface swp25 qos buffer"),
})
EXACT |= {"sonic_queue_wm", "sonic_pg_shared_wm", "sonic_pg_headroom_wm", "nvue_qos_buffer"}
_INSTANCE = re.compile(r"^(?:[A-Za-z][A-Za-z-]*)?\d+(?:/\d+)*$|^0x[0-9a-fA-F]+$|^ALL$")
_COUNTER = re.compile(r"^(?:Port|Link|Symbol|VL15|Excessive|Local|QP1)[A-Za-z0-9]+$")
"""IB PMA counter names (which of them a node reports depends on the errors it has): one key kind."""


def shape(obj: Any, path: str = "") -> set[str]:
    if hasattr(obj, "to_json"):
        obj = obj.to_json()
    if isinstance(obj, dict):
        out: set[str] = set()
        for k, v in obj.items():
            key = "*" if _INSTANCE.match(str(k)) else "<counter>" if _COUNTER.match(str(k)) else str(k)
            out |= shape(v, f"{path}/{key}")
        return out or {f"{path}:{{}}"}
    if isinstance(obj, (list, tuple)):
        out = set()
        for v in obj:
            out |= shape(v, f"{path}[]")
        return out or {f"{path}:[]"}
    return {f"{path}:{type(obj).__name__}"}


@cache
def source(folder: str) -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((FIXTURES / folder / "SOURCE").read_text(encoding="utf-8"))
    return data


def real_shape(folder: str) -> set[str]:
    out: set[str] = set()
    for name in source(folder)["real"]:
        if "not relied on" in str(source(folder)["real"][name]).lower():
            continue
        out |= shape(PARSERS[folder]((FIXTURES / folder / name).read_text(encoding="utf-8")))
    return out


def mock_shape(folder: str) -> set[str]:
    inventory, scenarios, device, line = MOCK_COMMAND[folder]
    model = TrafficModel(load_fabric(INV / f"{inventory}.yaml"), scenarios, seed=1, t0=T0)
    res = C.run(model, device, line, T0 + 30)
    assert res is not None, f"the mock does not render {line!r} on {device}"  # ibqueryerrors exits 1
    return shape(PARSERS[folder](res[0]))


def test_every_parser_folder_has_a_source_note() -> None:
    for folder in PARSERS:
        src = source(folder)
        assert src.get("command"), folder
        for name in [*src.get("real", {}), *src.get("mock", {})]:
            assert (FIXTURES / folder / name).is_file(), f"{folder}/SOURCE names a missing file {name}"
        listed = {*src.get("real", {}), *src.get("mock", {})}
        present = {p.name for p in (FIXTURES / folder).glob("*.txt")}
        assert present <= listed, f"{folder}: fixtures without a SOURCE line: {present - listed}"
        if folder in NO_CAPTURE:
            assert "real" not in src and "searched" in src["not_found"], folder
        else:
            assert src.get("real"), f"{folder}: no real capture listed"


def test_the_partition_of_parser_folders_is_complete() -> None:
    assert set(PARSERS) == set(MOCK_COMMAND) | NO_CAPTURE | set(NOT_IN_MOCK)


@pytest.mark.parametrize("folder", sorted(MOCK_COMMAND))
def test_mock_parses_like_the_real_capture(folder: str) -> None:
    real, mock = real_shape(folder), mock_shape(folder)
    assert real, f"{folder}: the real capture parses to nothing"
    if folder in PARTIAL:  # the mock may only add, never retype
        shared = {p.rsplit(':', 1)[0] for p in real} & {p.rsplit(':', 1)[0] for p in mock}
        assert shared, f"{folder}: no common path"
        assert {p for p in mock if p.rsplit(':', 1)[0] in shared} == {
            p for p in real if p.rsplit(':', 1)[0] in shared}, f"{folder}: value types differ"
        return
    only_real = real - mock - set(ONLY_REAL.get(folder, {})) if folder in EXACT else set()
    only_mock = mock - real - set(ONLY_MOCK.get(folder, {}))
    assert not only_real and not only_mock, (
        f"{folder}: the mock drifted from the real capture\n only in real: {sorted(only_real)}\n"
        f" only in mock: {sorted(only_mock)}")


JSON_REPLIES = {"eos_ecn", "eos_pfc", "eos_lanz"}
"""Folders whose command answers JSON: there the raw replies themselves must have the same shape (keys,
and value types such as EOS's string ECN counts), not only the parsed structure."""


@pytest.mark.parametrize("folder", sorted(JSON_REPLIES))
def test_mock_json_reply_has_the_real_shape(folder: str) -> None:
    real: set[str] = set()
    for name in source(folder)["real"]:
        real |= shape(json.loads((FIXTURES / folder / name).read_text(encoding="utf-8")))
    inventory, scenarios, device, line = MOCK_COMMAND[folder]
    model = TrafficModel(load_fabric(INV / f"{inventory}.yaml"), scenarios, seed=1, t0=T0)
    res = C.run(model, device, line, T0 + 30)
    assert res is not None and res[1] == 0, line
    assert shape(json.loads(res[0])) == real, f"{folder}: the mock's JSON reply drifted from the real one"
