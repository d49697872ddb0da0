"""Focused tests of each rendering convention (units, encodings, classes, formulas)."""

from __future__ import annotations

import json
import math
import re

import pytest
from render_helpers import by_platform, fabric_from

from fabriccfg.inventory.derive import pfc_headroom_bytes
from fabriccfg.inventory.models import Fabric
from fabriccfg.render import filters
from fabriccfg.render.derive import facts, pause_quanta
from fabriccfg.render.engine import RenderedDevice, RenderError, render_device, render_fabric

Rendered = dict[str, dict[str, RenderedDevice]]


def _odd_ecn() -> Fabric:
    """roce-lab with ECN thresholds that are not whole kilobytes (unit conversions show)."""
    return fabric_from("roce-lab", ("kmin_bytes: 150000, kmax_bytes: 1500000, pmax_percent: 100",
                                    "kmin_bytes: 150001, kmax_bytes: 2000000, pmax_percent: 20"))


# --------------------------------------------------------------------------- ECN units per platform
def test_ecn_units_per_platform() -> None:
    devs = {d.name: d for d in render_fabric(_odd_ecn())}
    nvue = devs["leaf-r0"].files["config.txt"]
    assert "traffic-class 3 min-threshold 150001" in nvue  # bytes
    assert "traffic-class 3 max-threshold 2000000" in nvue
    assert "traffic-class 3 probability 20" in nvue  # documented 1..100 (NVUE reference, QoS)
    wred = json.loads(devs["leaf-r1"].files["config_db.json"])["WRED_PROFILE"]["ROCE_LOSSLESS"]
    assert (wred["green_min_threshold"], wred["green_max_threshold"]) == ("150001", "2000000")  # bytes
    assert wred["green_drop_probability"] == "20" and wred["ecn"] == "ecn_all"
    eos = devs["leaf-r2"].files["config.txt"]
    assert ("random-detect ecn minimum-threshold 150001 bytes maximum-threshold 2000000 bytes "
            "max-mark-probability 20 weight 0") in eos
    nxos = devs["leaf-r3"].files["config.txt"]
    assert ("random-detect minimum-threshold 151 kbytes maximum-threshold 2000 kbytes drop-probability 20 "
            "weight 0 ecn") in nxos  # kbytes, rounded up


def test_default_ecn_matches_nvidia_defaults(rendered: Rendered) -> None:
    nxos = by_platform(rendered, "nxos")[0].files["config.txt"]
    assert "minimum-threshold 150 kbytes maximum-threshold 1500 kbytes" in nxos


# --------------------------------------------------------------------------- headroom
@pytest.mark.parametrize(("speed", "cable", "mtu", "expected"), [
    (400, 5, 4200, 136144),     # roce.md §7.3 worked example: (301 + 10.8) * 400 + 2.72 * 4200
    (400, 5, 9216, math.ceil((301 + 2.16 * 5) * 400 + 2.72 * 9216)),
    (10, 3, 1500, math.ceil((301 + 2.16 * 3) * 40 + 2.72 * 1500)),  # speed clamped to 40G
])
def test_headroom_formula(speed: int, cable: int, mtu: int, expected: int) -> None:
    assert pfc_headroom_bytes(speed, cable, mtu) == expected


def test_port_headroom_uses_formula(fabrics: dict[str, Fabric]) -> None:
    fabric = fabrics["roce-lab"]
    sw = fabric.devices["leaf-r0"]
    ports = {p.name: p for p in facts(fabric).switch_ports(sw, 9216)}  # type: ignore[arg-type]
    assert ports["swp1"].cable_m == 3 and ports["swp1"].speed_gbps == 400
    assert ports["swp1"].headroom_bytes == pfc_headroom_bytes(400, 3, 9216)
    assert ports["swp29"].headroom_bytes == pfc_headroom_bytes(400, 20, 9216)
    assert ports["swp1"].pause_quanta == 905 == pause_quanta(400)
    nvue = render_device(fabric, "leaf-r0").files["config.txt"]
    assert f"headroom at 9216 B: {pfc_headroom_bytes(400, 3, 9216)} B" in nvue
    assert "nv set qos pfc roce-3m cable-length 3" in nvue
    assert "nv set qos pfc roce-20m cable-length 20" in nvue


def test_sonic_static_buffer_profile_from_formula() -> None:
    fabric = fabric_from("roce-lab", ("host_mtu: 4200", "host_mtu: 4200\n  buffer: {model: static}"))
    doc = json.loads(render_device(fabric, "leaf-r1").files["config_db.json"])
    name = "pg_lossless_400000_3m_profile"
    prof = doc["BUFFER_PROFILE"][name]
    xoff = math.ceil(pfc_headroom_bytes(400, 3, 9216) / 1024) * 1024
    assert prof["xoff"] == str(xoff) and prof["xon"] == str(18432) and prof["size"] == str(xoff + 18432)
    assert prof["pool"] == "ingress_lossless_pool"
    assert doc["BUFFER_PG"]["Ethernet0|3"] == {"profile": name}
    assert doc["BUFFER_PG"]["Ethernet224|3"] == {"profile": "pg_lossless_400000_20m_profile"}


def test_sonic_dynamic_buffers_and_cable_length(rendered: Rendered) -> None:
    doc = json.loads(rendered["roce-lab"]["leaf-r1"].files["config_db.json"])
    assert "BUFFER_PROFILE" not in doc
    assert doc["BUFFER_PG"]["Ethernet0|3"] == {"profile": "NULL"}
    assert doc["CABLE_LENGTH"]["AZURE"]["Ethernet0"] == "3m"
    assert doc["CABLE_LENGTH"]["AZURE"]["Ethernet224"] == "20m"


# --------------------------------------------------------------------------- SONiC classes and references
def test_sonic_dscp_26_on_lossless_class(rendered: Rendered) -> None:
    for dev in by_platform(rendered, "sonic"):
        doc = json.loads(dev.files["config_db.json"])
        dscp = doc["DSCP_TO_TC_MAP"]["ROCE"]
        assert sorted(map(int, dscp)) == list(range(64))
        assert dscp["26"] == "3" and dscp["48"] == "6"
        assert dscp["3"] == "0" and dscp["4"] == "0"  # not SONiC's stock DSCP 3/4 convention
        assert doc["TC_TO_PRIORITY_GROUP_MAP"]["ROCE"]["3"] == "3"
        for key, fields in doc["PORT_QOS_MAP"].items():
            if key == "global":
                assert fields == {"dscp_to_tc_map": "ROCE"}
                continue
            assert fields["pfc_enable"] == "3" and fields["pfcwd_sw_enable"] == "3"
            assert fields["dscp_to_tc_map"] == "ROCE"
        assert doc["PFC_WD"]["GLOBAL"] == {"POLL_INTERVAL": "100"}
        wd = {"action": "drop", "detection_time": "200", "restoration_time": "400"}
        assert doc["PFC_WD"]["Ethernet0"] == wd


def test_sonic_reference_syntax_per_release() -> None:
    old = fabric_from("roce-lab", ('mgmt: 192.0.2.12, rail: 1, os_release: "202305"',
                                   'mgmt: 192.0.2.12, rail: 1, os_release: "202012"'))
    doc = json.loads(render_device(old, "leaf-r1").files["config_db.json"])
    assert doc["PORT_QOS_MAP"]["Ethernet0"]["dscp_to_tc_map"] == "[DSCP_TO_TC_MAP|ROCE]"
    assert doc["QUEUE"]["Ethernet0|3"]["wred_profile"] == "[WRED_PROFILE|ROCE_LOSSLESS]"
    assert doc["QUEUE"]["Ethernet0|6"]["scheduler"] == "[SCHEDULER|CNP_STRICT]"
    new = json.loads(render_device(old, "spine2").files["config_db.json"])
    assert new["QUEUE"]["Ethernet0|3"]["wred_profile"] == "ROCE_LOSSLESS"


# --------------------------------------------------------------------------- CNP strict on every platform
def test_cnp_strict_on_every_platform(rendered: Rendered) -> None:
    roce = rendered["roce-lab"]
    seen = set()
    for dev in roce.values():
        seen.add(dev.platform)
        if dev.platform == "cumulus-nvue":
            text = dev.files["config.txt"]
            assert "nv set qos egress-scheduler default-global traffic-class 6 mode strict" in text
            assert "nv set qos egress-queue-mapping default-global switch-priority 6 traffic-class 6" in text
            assert "nv set qos mapping default-global dscp 48 switch-priority 6" in text
        elif dev.platform == "sonic":
            doc = json.loads(dev.files["config_db.json"])
            assert doc["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
            for key, fields in doc["QUEUE"].items():
                if key.endswith("|6"):
                    assert doc["SCHEDULER"][fields["scheduler"]] == {"type": "STRICT"}
            assert sum(k.endswith("|6") for k in doc["QUEUE"]) == len(doc["CABLE_LENGTH"]["AZURE"])
        elif dev.platform == "eos":
            text = dev.files["config.txt"]
            assert "qos map dscp 48 to traffic-class 6" in text
            # EOS: queues above the highest round-robin ('no priority') queue are strict priority
            rr = {int(q) for q in re.findall(r"tx-queue (\d+)\n\s+no priority", text)}
            assert rr and max(rr) < 6 and not re.search(r"tx-queue 6\n\s+no priority", text)
        elif dev.platform == "nxos":
            text = dev.files["config.txt"]
            assert "class type queuing c-out-8q-q6\n    priority level 1" in text
            assert "class CNP\n    set qos-group 6" in text and "match dscp 48" in text
        elif dev.platform == "connectx-host":
            expected = dev.files["roce-expected.txt"]
            assert "ens1f0np0.roce_np.cnp_dscp=48" in expected
            assert "ens1f0np0.roce_np.cnp_802p_prio=6" in expected
    assert seen == {"cumulus-nvue", "sonic", "eos", "nxos", "connectx-host"}


# --------------------------------------------------------------------------- InfiniBand
def test_partitions_default_first_with_ibta_encodings(rendered: Rendered) -> None:
    confs = [d.files["partitions.conf"] for d in by_platform(rendered, "opensm-host")]
    assert confs
    for text in confs:
        assert text.splitlines()[0] == "Default=0x7fff,ipoib:ALL=full;"
        assert "compute=0x0101,ipoib,mtu=5,rate=17:ALL_CAS=full;" in text


@pytest.mark.parametrize(("mtu", "code"), [(256, 1), (512, 2), (1024, 3), (2048, 4), (4096, 5)])
def test_ib_mtu_encoding(mtu: int, code: int) -> None:
    assert filters.ib_mtu(mtu) == code


@pytest.mark.parametrize(("gbps", "code"), [(10, 3), (40, 7), (100, 16), (200, 17), (400, 21)])
def test_ib_rate_encoding(gbps: int, code: int) -> None:
    assert filters.ib_rate(gbps) == code


def test_partition_device_members_resolve_to_guids() -> None:
    fabric = fabric_from("ib-lab-mqm8790", ("        - {device: ALL_CAS, membership: full}",
                                            "        - {device: gpu01, membership: limited}"))
    text = render_device(fabric, "sm1").files["partitions.conf"]
    assert "compute=0x0101,ipoib,mtu=5,rate=17:0x1070fd0300010000=limited,0x1070fd0300010100=limited," in text


def test_opensm_booleans_are_exactly_true_false(rendered: Rendered) -> None:
    for dev in by_platform(rendered, "opensm-host"):
        text = dev.files["opensm.conf"]
        for line in text.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            _, _, value = line.partition(" ")
            if value.lower() in ("true", "false", "yes", "no", "on", "off"):
                assert value in ("TRUE", "FALSE"), line
        assert "qos FALSE" in text and "accum_log_file TRUE" in text


def test_opensm_host_roles(rendered: Rendered) -> None:
    ib = rendered["ib-lab-mqm8790"]
    assert "sharp_enabled 2" in ib["sm1"].files["opensm.conf"]  # mlnx flavour + SHARP
    assert "sharp_am.cfg" in ib["sm1"].files and "sharp_am.cfg" in ib["sm2"].files  # standby AM on sm2 too
    assert "ib_port_guid 0x1070fd0300aa0001" in ib["sm1"].files["sharp_am.cfg"]
    assert "sm_priority 15" in ib["sm1"].files["opensm.conf"]
    assert "sm_priority 14" in ib["sm2"].files["opensm.conf"]
    roots = ib["sm1"].files["root_guids.conf"].split()
    assert roots == ["0xb8599f0300fc0001", "0xb8599f0300fc0002"]  # the spines
    assert '0xb8599f0300fc0003 "ib-leaf-r0"' in ib["sm1"].files["node-name-map"]


def test_upstream_flavour_has_no_mlnx_keys() -> None:
    fabric = fabric_from("ib-lab-mqm8790", ("opensm_flavour: mlnx", "opensm_flavour: upstream"),
                         ("sharp: {enabled: true, am_host: sm1}", "sharp: {enabled: false}"))
    text = render_device(fabric, "sm1").files["opensm.conf"]
    assert "sharp_enabled" not in text


def test_mlnxos_embedded_sm(rendered: Rendered) -> None:
    ib = rendered["ib-lab-mqm8700"]
    spine = ib["ib8700-spine1"].files["config.txt"]
    assert "   ib sm\n" in spine and "ib smnode ib8700-spine1 sm-priority 15" in spine
    assert "ib partition storage pkey 0x0202 force" in spine
    assert "ib partition storage member all type limited force" in spine
    assert "ib partition Default mtu 4K force" in spine
    leaf2 = ib["ib8700-leaf2"].files["config.txt"]
    assert "no ib sm" in leaf2 and "interface ib 1/9 module-type qsfp-split-2 force" in leaf2


# --------------------------------------------------------------------------- hosts
def test_connectx_script(rendered: Rendered) -> None:
    gpu = rendered["roce-lab"]["gpu01"]
    script = gpu.files["roce-setup.sh"]
    assert script.startswith("#!/usr/bin/env bash")
    assert "mlnx_qos -i ens1f0np0 --trust dscp" in script
    assert "mlnx_qos -i ens1f0np0 --pfc 0,0,0,1,0,0,0,0" in script
    assert "cma_roce_tos -d mlx5_0 -t 106" in script
    assert 'write_if_diff "$ecn/roce_rp/rpg_time_reset" 300' in script
    assert 'write_if_diff "$cc/rp_time_reset" 300' in script  # mainline debugfs fallback
    assert "ens1f0np0.pfc=0,0,0,1,0,0,0,0" in gpu.files["roce-expected.txt"]
    assert "--dscp2prio" not in script  # DSCP 26 >> 3 == 3 already
    assert not rendered["ib-lab-mqm8790"].get("gpu01")  # IB hosts: nothing to render


# --------------------------------------------------------------------------- engine behaviour
def test_render_is_deterministic(fabrics: dict[str, Fabric]) -> None:
    from render_helpers import INVENTORIES

    from fabriccfg.inventory.load import load_fabric

    for name, fabric in fabrics.items():
        again = load_fabric(INVENTORIES / f"{name}.yaml")
        first = [(d.name, d.files) for d in render_fabric(fabric)]
        second = [(d.name, d.files) for d in render_fabric(again)]
        assert first == second


def test_filters_and_selection(fabrics: dict[str, Fabric]) -> None:
    roce = fabrics["roce-lab"]
    assert [d.name for d in render_fabric(roce, role="spine")] == ["spine1", "spine2"]
    assert [d.name for d in render_fabric(roce, devices=["leaf-r2", "gpu01"])] == ["gpu01", "leaf-r2"]
    with pytest.raises(RenderError, match="nope"):
        render_fabric(roce, devices=["nope"])
    assert render_device(fabrics["ib-lab-mqm8790"], "ib-spine1").files == {}


def test_user_templates_override_shipped(tmp_path, fabrics: dict[str, Fabric]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "eos").mkdir()
    (tmp_path / "eos" / "config.txt.j2").write_text("! custom {{ device.name }} mtu {{ eos_mtu }}\n")
    out = render_device(fabrics["roce-lab"], "leaf-r2", templates_dir=tmp_path)
    assert out.files["config.txt"] == "! custom leaf-r2 mtu 9214\n"
    nvue = render_device(fabrics["roce-lab"], "leaf-r0", templates_dir=tmp_path).files["config.txt"]
    assert "nv set" in nvue


def test_strict_undefined(tmp_path, fabrics: dict[str, Fabric]) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "nxos").mkdir()
    (tmp_path / "nxos" / "config.txt.j2").write_text("{{ no_such_value }}\n")
    with pytest.raises(RenderError, match="no_such_value"):
        render_device(fabrics["roce-lab"], "leaf-r3", templates_dir=tmp_path)


def test_conversion_filters() -> None:
    assert filters.tf(True) == "TRUE" and filters.tf(0) == "FALSE"
    assert filters.colon_guid("0x08c0eb0300f60001") == "08:c0:eb:03:00:f6:00:01"
    assert filters.hex_pkey(0x101) == "0x0101"
    assert filters.kbytes(150000) == 150 and filters.kbytes(150001) == 151
    assert filters.seconds(200) == "0.2" and filters.seconds(1000) == "1" and filters.seconds(1110) == "1.11"
    assert filters.tos(26) == 106
    assert filters.mlnx_mtu(4096) == "4K" and filters.mlnx_mtu(2048) == "2K"
    assert filters.cable(2.1) == 3
