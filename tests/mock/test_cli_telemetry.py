"""CLI telemetry renderers: real formats (ib.md §5-§6), values from the traffic model, golden samples.

The samples in ``tests/mock/fixtures/`` are what the telemetry parsers are written against; regenerate
them with ``FABRICCFG_REGEN_FIXTURES=1 pytest tests/mock/test_cli_telemetry.py`` after a format change.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.inventory.models import Fabric
from fabriccfg.mock import cli_telemetry as C
from fabriccfg.mock.traffic import TrafficModel

ROOT = Path(__file__).resolve().parents[2]
INV = ROOT / "inventories"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
T0 = 1_750_000_000.0
T = T0 + 30


@pytest.fixture(scope="module")
def roce() -> Fabric:
    return load_fabric(INV / "roce-lab.yaml")


@pytest.fixture(scope="module")
def ib() -> Fabric:
    return load_fabric(INV / "ib-lab-mqm8790.yaml")


@pytest.fixture(scope="module")
def ib8700() -> Fabric:
    return load_fabric(INV / "ib-lab-mqm8700.yaml")


# (fixture file, inventory, scenarios, device, command line)
SAMPLES: list[tuple[str, str, list[str], str, str]] = [
    (
        "perfquery_x_local.txt",
        "ib-lab-mqm8790.yaml",
        ["ib-congestion:ib-leaf-r0:1/1"],
        "gpu01",
        "perfquery -x",
    ),
    (
        "perfquery_x_switch_port.txt",
        "ib-lab-mqm8790.yaml",
        ["ib-congestion:ib-leaf-r0:1/1"],
        "sm1",
        "perfquery -x 3 1",
    ),
    (
        "perfquery_legacy.txt",
        "ib-lab-mqm8790.yaml",
        ["ib-symbol-errors:ib-leaf-r1:1/2"],
        "sm1",
        "perfquery 4 2",
    ),
    (
        "ibqueryerrors.txt",
        "ib-lab-mqm8700.yaml",
        ["ib-symbol-errors:ib8700-leaf1:1/2", "link-flap:ib8700-leaf2:1/33"],
        "node01",
        "ibqueryerrors",
    ),
    ("ibnetdiscover_mqm8790_sharp.txt", "ib-lab-mqm8790.yaml", [], "sm1", "ibnetdiscover"),
    ("ibnetdiscover_mqm8700.txt", "ib-lab-mqm8700.yaml", [], "node01", "ibnetdiscover"),
    ("ibnetdiscover_p_mqm8700.txt", "ib-lab-mqm8700.yaml", [], "node01", "ibnetdiscover -p"),
    ("sminfo.txt", "ib-lab-mqm8790.yaml", [], "sm1", "sminfo"),
    ("ethtool_S_pause_storm.txt", "roce-lab.yaml", ["pause-storm:gpu03"], "gpu03", "ethtool -S ens1f0np0"),
    (
        "nvue_qos_roce_counters.txt",
        "roce-lab.yaml",
        ["congestion:gpu03"],
        "leaf-r0",
        "nv show interface swp3 qos roce counters",
    ),
    (
        "nvue_pfc_watchdog.txt",
        "roce-lab.yaml",
        ["pause-storm:gpu03"],
        "leaf-r0",
        "nv show interface swp3 qos pfc-watchdog",
    ),
    (
        "sonic_queue_counters.txt",
        "roce-lab.yaml",
        ["lossless-drop:leaf-r1:Ethernet8"],
        "leaf-r1",
        "show queue counters Ethernet8",
    ),
    (
        "sonic_queue_wredcounters.txt",
        "roce-lab.yaml",
        ["congestion:gpu02"],
        "leaf-r1",
        "show queue wredcounters Ethernet8",
    ),
    ("sonic_pfc_counters.txt", "roce-lab.yaml", ["pause-storm:gpu02:mlx5_1"], "leaf-r1", "show pfc counters"),
    ("sonic_pfcwd_stats.txt", "roce-lab.yaml", ["pause-storm:gpu02:mlx5_1"], "leaf-r1", "pfcwd show stats"),
    (
        "eos_ecn_counters.json.txt",
        "roce-lab.yaml",
        ["congestion:gpu01"],
        "leaf-r2",
        "show qos interfaces Ethernet1/1 ecn counters queue | json",
    ),
    (
        "eos_pfc_counters.json.txt",
        "roce-lab.yaml",
        ["pause-storm:gpu01:mlx5_2"],
        "leaf-r2",
        "show priority-flow-control counters | json",
    ),
    (
        "eos_pfc_watchdog.json.txt",
        "roce-lab.yaml",
        ["pause-storm:gpu01:mlx5_2"],
        "leaf-r2",
        "show priority-flow-control counters watchdog | json",
    ),
    (
        "nxos_queuing_interface.txt",
        "roce-lab.yaml",
        ["congestion:gpu01"],
        "leaf-r3",
        "show queuing interface",
    ),
    (
        "nxos_pfc_queue_detail.txt",
        "roce-lab.yaml",
        ["pause-storm:gpu01:mlx5_3"],
        "leaf-r3",
        "show queuing pfc-queue detail",
    ),
]


@pytest.mark.parametrize(
    ("fixture", "inventory", "scenarios", "device", "line"), SAMPLES, ids=[s[0] for s in SAMPLES]
)
def test_golden_samples(fixture: str, inventory: str, scenarios: list[str], device: str, line: str) -> None:
    model = TrafficModel(load_fabric(INV / inventory), scenarios, seed=1, t0=T0)
    res = C.run(model, device, line, T)
    assert res is not None
    text, _status = res
    path = FIXTURES / fixture
    if os.environ.get("FABRICCFG_REGEN_FIXTURES"):
        path.write_text(text)
    assert path.read_text() == text


def _fields(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines()[1:]:
        m = re.match(r"^(\w+):\.+(\S+)$", line)
        assert m, line
        assert len(line) - len(m.group(2)) == 33  # libibmad pads name, colon and dots to 33 columns
        out[m.group(1)] = m.group(2)
    return out


def test_perfquery_matches_model(ib: Fabric) -> None:
    model = TrafficModel(ib, ["ib-congestion:ib-leaf-r0:1/1"], seed=1, t0=T0)
    view = C.ib_view(model)
    lid = view.switch["ib-leaf-r0"].lid
    text, status = C.run(model, "sm1", f"perfquery -x {lid} 1", T) or ("", 1)
    assert status == 0
    assert re.match(
        rf"# Port extended counters: Lid {lid} port 1 \(CapMask: 0x[0-9A-F]+ CapMask2: 0x0000002\)", text
    )
    f = _fields(text)
    c = model.port_counters("ib-leaf-r0", "1/1", T)
    assert list(f)[:3] == ["PortSelect", "CounterSelect", "PortXmitData"]
    for name in ("PortXmitData", "PortRcvData", "PortXmitPkts", "PortXmitWait", "SymbolErrorCounter"):
        assert int(f[name]) == c[name]
    # legacy PortCounters: 32-bit data counters saturate
    text, _ = C.run(model, "sm1", f"perfquery {lid} 1", T) or ("", 1)
    f = _fields(text)
    assert text.startswith(f"# Port counters: Lid {lid} port 1 (CapMask: ")
    assert int(f["PortXmitData"]) == 2**32 - 1
    # local port of a host, unknown LID
    text, _ = C.run(model, "gpu02", "perfquery -x", T) or ("", 1)
    assert f"Lid {view.ca[('gpu02', 'mlx5_0')].lid} port 1" in text.splitlines()[0]
    assert _fields(text)["PortRcvData"] == str(model.port_counters("gpu02", "mlx5_0", T)["PortRcvData"])
    assert C.run(model, "sm1", "perfquery -x 999 1", T) == (
        "ibwarn: [4242] mad_rpc: _do_madrpc failed; dport (Lid 999)\nperfquery: iberror: failed: perfquery\n",
        255,
    )


def _ibnet_links(text: str) -> dict[tuple[str, int], tuple[str, int]]:
    """(node, port) -> (remote node, remote port) from the default ibnetdiscover format, where a node is
    named by its description when that is unique in the file, else by its ``S-``/``H-`` id."""
    raw: list[tuple[str, int, str, int]] = []
    desc: dict[str, str] = {}
    node = ""
    for line in text.splitlines():
        m = re.match(r'^(?:Switch|Ca)\t\d+ "([SH]-[0-9a-f]{16})"\t\t# "([^"]*)"', line)
        if m:
            node = m.group(1)
            desc[node] = m.group(2)
            continue
        m = re.match(
            r'^\[(\d+)\](?:\([0-9a-f]+\) )?\t"([SH]-[0-9a-f]{16})"\[(\d+)\](?:\([0-9a-f]+\) )?\t\t# '
            r'(?:lid \d+ lmc 0 )?"[^"]*" lid \d+ \dx[A-Z]+$',
            line,
        )
        if m:
            raw.append((node, int(m.group(1)), m.group(2), int(m.group(3))))
    counts: dict[str, int] = {}
    for d in desc.values():
        counts[d] = counts.get(d, 0) + 1

    def name(n: str) -> str:
        return desc[n] if counts[desc[n]] == 1 else n

    return {(name(a), pa): (name(b), pb) for a, pa, b, pb in raw}


def test_ibnetdiscover_sharp_and_cabling(ib: Fabric, ib8700: Fabric) -> None:
    model = TrafficModel(ib, seed=1, t0=T0)
    text = C.ibnetdiscover(model, T, "sm1")
    assert text.startswith("#\n# Topology file: generated on ")
    assert "# Initiated from node 1070fd0300aa0001 port 1070fd0300aa0001" in text
    switch_lines = re.findall(
        r'^Switch\t41 "S-([0-9a-f]{16})"\t\t# "([^"]*)" base port 0 lid \d+ lmc 0$', text, re.M
    )
    assert len(switch_lines) == 6 and all(d == "Quantum Mellanox Technologies" for _, d in switch_lines)
    assert (
        text.count('"Mellanox Technologies Aggregation Node"') == 12
    )  # the AN's Ca line + its switch's [41]
    assert (
        len(
            re.findall(
                r'^\[41\]\t"H-[0-9a-f]{16}"\[1\]\([0-9a-f]+\) \t\t# "Mellanox Technologies Aggregation Node"',
                text,
                re.M,
            )
        )
        == 6
    )
    links = _ibnet_links(text)
    assert links[("gpu01 mlx5_0", 1)] == ("S-b8599f0300fc0003", 1)
    assert links[("S-b8599f0300fc0003", 20)] == ("sm1 mlx5_0", 1)
    an = {k for k, v in links.items() if v[1] == 41 or k[1] == 41}
    assert len(an) == 12  # switch port 41 <-> AN port 1, from both ends
    assert len(links) - len(an) == 2 * len(ib.links)  # each cable seen from both ends
    # managed MQM8700: MF0 descriptions, enhanced port 0, no SHARP AN, split-ready switch has 81 ports
    t8700 = C.ibnetdiscover(TrafficModel(ib8700, seed=1, t0=T0), T, "node01")
    assert '# "MF0;ib8700-spine1:MQM8700/U1" enhanced port 0 lid 1 lmc 0' in t8700
    assert 'Switch\t81 "S-08c0eb0300f60003"' in t8700
    assert "Aggregation Node" not in t8700
    l8700 = _ibnet_links(t8700)
    assert l8700[("MF0;ib8700-leaf1:MQM8700/U1", 33)] == ("MF0;ib8700-spine1:MQM8700/U1", 1)
    assert l8700[("node01 mlx5_0", 1)] == ("MF0;ib8700-leaf1:MQM8700/U1", 1)


def test_ibnetdiscover_respects_cabling_swap(ib8700: Fabric) -> None:
    model = TrafficModel(ib8700, ["cabling-swap:ib8700-leaf1:1/1,ib8700-leaf1:1/2"], seed=1, t0=T0)
    links = _ibnet_links(C.ibnetdiscover(model, T, "node01"))
    leaf1 = "MF0;ib8700-leaf1:MQM8700/U1"
    assert links[(leaf1, 1)] == ("node02 mlx5_0", 1)
    assert links[(leaf1, 2)] == ("node01 mlx5_0", 1)
    assert links[("node01 mlx5_0", 1)] == (leaf1, 2)


def test_sminfo_master_standby_and_failover(ib: Fabric, ib8700: Fabric) -> None:
    model = TrafficModel(ib, seed=1, t0=T0)
    view = C.ib_view(model)
    l1, l2 = view.ca[("sm1", "mlx5_0")].lid, view.ca[("sm2", "mlx5_0")].lid
    pat = (
        r"^sminfo: sm lid (\d+) sm guid (0x[0-9a-f]{1,16}), activity count (\d+) priority (\d+) "
        r"state (\d) (\w+)\n$"
    )
    text, status = C.run(model, "gpu01", "sminfo", T) or ("", 1)
    m = re.match(pat, text)
    assert (
        status == 0
        and m
        and m.group(1, 2, 4, 5, 6) == (str(l1), "0x1070fd0300aa0001", "15", "3", "SMINFO_MASTER")
    )
    later, _ = C.run(model, "gpu01", "sminfo", T + 10) or ("", 1)
    assert int(re.match(pat, later).group(3)) > int(m.group(3))  # type: ignore[union-attr]
    m = re.match(pat, (C.run(model, "gpu01", f"sminfo {l2}", T) or ("", 1))[0])
    assert m and m.group(4, 5, 6) == ("14", "2", "SMINFO_STANDBY")
    # sm1 down: sm2 takes over, sm1 no longer answers
    m = re.match(pat, C.sminfo(model, "gpu01", None, T, down={"sm1"})[0])
    assert m and m.group(1, 5) == (str(l2), "3")
    assert C.sminfo(model, "gpu01", l1, T, down={"sm1"})[1] == 255
    assert C.sminfo(model, "gpu01", None, T, down={"sm1", "sm2"})[1] == 255
    # embedded SM on a managed switch
    m8700 = TrafficModel(ib8700, seed=1, t0=T0)
    m = re.match(pat, C.sminfo(m8700, "node01", None, T)[0])
    # unpadded, as sminfo.c prints it ("0x%" PRIx64; the real sminfo on ibsim: "sm guid 0x8c0eb0300f60001")
    assert m and m.group(2) == "0x8c0eb0300f60001"


def test_ibqueryerrors_reports_scenario_ports(ib8700: Fabric) -> None:
    healthy = TrafficModel(ib8700, seed=1, t0=T0)
    text, status = C.ibqueryerrors(healthy, T, suppress=["PortXmitWait"])
    assert status == 0 and "Errors for" not in text
    assert text.splitlines()[-4].startswith("## Summary: ")
    assert text.endswith("## Suppressed: PortXmitWait\n")
    model = TrafficModel(ib8700, ["ib-symbol-errors:ib8700-leaf1:1/2"], seed=1, t0=T0)
    text, status = C.run(model, "node01", "ibqueryerrors -s PortXmitWait", T) or ("", 0)
    assert status == 1
    assert 'Errors for 0x8c0eb0300f60002 "MF0;ib8700-leaf1:MQM8700/U1"' in text
    assert "   GUID 0x8c0eb0300f60002 port 2: [SymbolErrorCounter == 600 (600.000)]" in text
    assert "port ALL: [SymbolErrorCounter == 600 (600.000)]" in text
    assert re.search(r"^##\s+\d+ ports checked, 1 ports have errors beyond threshold$", text, re.M)


def test_ethtool_matches_model_and_shows_storm(roce: Fabric) -> None:
    model = TrafficModel(roce, ["pause-storm:gpu03"], seed=1, t0=T0)
    text, status = C.run(model, "gpu03", "ethtool -S ens1f0np0", T) or ("", 1)
    assert status == 0 and text.startswith("NIC statistics:\n")
    vals = dict(re.findall(r"^     (\w+): (\d+)$", text, re.M))
    c = model.port_counters("gpu03", "mlx5_0", T)
    assert int(vals["tx_prio3_pause"]) == c["pfc_tx_pause.3"] > 20_000 * 29
    assert int(vals["tx_bytes_phy"]) == c["if_out_octets"]
    assert int(vals["np_cnp_sent"]) == c["np_cnp_sent"]
    assert int(vals["tx_pause_storm_warning_events"]) >= 2
    assert C.run(model, "gpu03", "ethtool -S nosuch0", T) == (
        "netlink error: no device matches name (offset 24)\nnetlink error: No such device\n",
        1,
    )


def test_switch_show_commands_carry_the_counters(roce: Fabric) -> None:
    model = TrafficModel(roce, ["pause-storm:gpu01", "congestion:gpu02"], seed=1, t0=T0)
    c3 = model.port_counters("leaf-r0", "swp1", T)
    text, _ = C.run(model, "leaf-r0", "nv show interface swp1 qos pfc-watchdog", T) or ("", 1)
    assert re.search(rf"^\s*3\s+(DEADLOCK|OK)\s+{c3['pfcwd_storm_detected.3']}$", text, re.M)
    assert c3["pfcwd_storm_detected.3"] > 10
    text, _ = C.run(model, "leaf-r0", "nv show interface swp2 qos roce counters", T) or ("", 1)
    c2 = model.port_counters("leaf-r0", "swp2", T)
    assert re.search(rf"^    ecn-marked-packets\s+{c2['ecn_marked.3']}\s+Tx ECN marked packets$", text, re.M)
    assert c2["ecn_marked.3"] > 1_000_000
    # SONiC: pfcwd stats and ECN marks per queue
    mi = TrafficModel(roce, ["pause-storm:gpu01:mlx5_1", "congestion:gpu02"], seed=1, t0=T0)
    text, _ = C.run(mi, "leaf-r1", "show pfcwd stats", T) or ("", 1)
    c = mi.port_counters("leaf-r1", "Ethernet0", T)
    assert re.search(
        rf"^\s*Ethernet0:3\s+(stormed|operational)\s+{c['pfcwd_storm_detected.3']}/{c['pfcwd_storm_restored.3']}\s",
        text,
        re.M,
    )
    text, _ = C.run(mi, "leaf-r1", "show queue wredcounters Ethernet8", T) or ("", 1)
    marks = mi.port_counters("leaf-r1", "Ethernet8", T)["ecn_marked.3"]
    assert re.search(rf"^\s*Ethernet8\s+UC3\s+0\s+0\s+{marks:,}\s", text, re.M)
    # EOS / NX-OS accept abbreviated interface names
    eos_ecn = "show qos interfaces Et1/1 ecn counters queue | json"
    assert (C.run(model, "leaf-r2", eos_ecn, T) or ("", 1))[1] == 0
    assert (C.run(model, "leaf-r3", "show queuing interface eth1/2", T) or ("", 1))[1] == 0
    assert (C.run(model, "leaf-r3", "show queuing interface ethernet1/99", T) or ("", 0))[1] == 1
    # not telemetry commands, or the wrong platform's command
    assert C.run(model, "leaf-r0", "show pfc counters", T) is None
    assert C.run(model, "leaf-r1", "nv show interface swp1 qos roce counters", T) is None
    assert C.run(model, "gpu01", "perfquery -x", T) is None  # RoCE fabric: no IB tools
    assert C.run(model, "leaf-r0", "", T) is None
