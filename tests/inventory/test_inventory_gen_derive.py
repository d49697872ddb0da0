"""`gen` builds valid fabrics at any size; derived values match the vendor formulas."""

from __future__ import annotations

import copy

import pytest

from fabriccfg.inventory.derive import (
    effective_nic_qos,
    effective_switch_qos,
    headroom_budget_bytes,
    link_headroom_bytes,
    pfc_headroom_bytes,
)
from fabriccfg.inventory.gen import GenError, dump_yaml, generate, plan
from fabriccfg.inventory.load import loads

from .conftest import ROCE, load_data


@pytest.mark.parametrize("technology", ["infiniband", "roce"])
@pytest.mark.parametrize("gpus", [16, 128, 1024])
def test_gen_validates_without_errors(technology: str, gpus: int) -> None:
    result = loads(dump_yaml(generate(gpus, technology)), f"gen-{gpus}.yaml")  # type: ignore[arg-type]
    assert result.ok, [f.format() for f in result.findings if f.severity == "error"][:5]
    assert not result.findings, [f.format() for f in result.findings][:5]
    fab = result.fabric
    assert fab is not None
    assert sum(len(h.nics) for h in fab.hosts) == gpus  # one NIC per GPU with 8 rails


@pytest.mark.parametrize(
    ("technology", "kwargs"),
    [
        ("infiniband", {"gpus_per_node": 4}),
        ("infiniband", {"rails": 1}),
        ("roce", {"rails": 4, "oversubscription": "2:1"}),
        ("roce", {"oversubscription": "3:1", "platform": "sonic"}),
        ("roce", {"platform": "eos"}),
        ("roce", {"platform": "nxos", "gpus_per_node": 4, "rails": 2}),
        ("infiniband", {"oversubscription": "2:1"}),
    ],
)
def test_gen_options(technology: str, kwargs: dict[str, object]) -> None:
    data = generate(3000, technology, **kwargs)  # type: ignore[arg-type]
    result = loads(dump_yaml(data))
    assert result.ok, [f.format() for f in result.findings if f.severity == "error"][:5]
    assert {f.rule for f in result.findings} <= {"leaf-oversubscription"}


def test_gen_is_deterministic_and_shaped() -> None:
    assert dump_yaml(generate(512, "roce")) == dump_yaml(generate(512, "roce"))
    p = plan(16384, "infiniband")
    assert p.tiers == 3 and p.radix == 40 and p.leaves == p.sus * 8
    assert plan(128, "roce").tiers == 2
    assert plan(16384, "roce").cores > 0


def test_gen_rejects_impossible_requests() -> None:
    for kwargs in (
        {"gpus": 0},
        {"gpus": 8, "oversubscription": "x"},
        {"gpus": 8, "rails": 0},
        {"gpus": 8, "oversubscription": "1:3"},
    ):
        with pytest.raises(GenError):
            generate(technology="roce", **kwargs)  # type: ignore[arg-type]
    with pytest.raises(GenError):
        generate(8, "roce", platform="unmanaged-ib")
    with pytest.raises(GenError):
        generate(200_000, "infiniband", gpus_per_node=1, rails=40)


def test_pfc_headroom_formula() -> None:
    # roce.md §7.3 worked example: 400G, 5 m, MTU 4200 -> (301 + 10.8) * 400 + 2.72 * 4200 = 136 144
    assert pfc_headroom_bytes(400, 5, 4200) == 136_144
    assert pfc_headroom_bytes(400, 5, 9216) == 149_788
    assert pfc_headroom_bytes(10, 0, 0) == pfc_headroom_bytes(40, 0, 0) == 301 * 40  # clamped to 40G
    assert pfc_headroom_bytes(100, 100, 1500) == 100 * (301 + 216) + 4080


def test_effective_qos_and_budget() -> None:
    data = copy.deepcopy(ROCE)
    data["switches"][0]["qos"] = {"roce_dscp": 24, "pfc_enabled": False}
    data["hosts"][0]["nics"][0]["qos"] = {"mtu": 9000, "pfc_priorities": [3, 4]}
    data["roce"]["buffer"] = {"headroom_budget_bytes": 300_000}
    fab = load_data(data).fabric
    assert fab is not None
    sw = effective_switch_qos(fab, fab.switches[0])
    assert (sw.roce_dscp, sw.roce_priority, sw.pfc_enabled, sw.mtu) == (24, 3, False, 9216)
    nic = effective_nic_qos(fab, fab.hosts[0].nics[0])
    assert (nic.trust, nic.mtu, nic.pfc_priorities, nic.cnp_dscp) == ("dscp", 9000, (3, 4), 48)
    plain = effective_nic_qos(fab, fab.hosts[1].nics[0])
    assert (plain.mtu, plain.pfc_priorities) == (4200, (3,))
    assert headroom_budget_bytes(fab, fab.switches[0]) == 300_000
    assert link_headroom_bytes(fab, fab.links[0]) == pfc_headroom_bytes(400, 3, 9216)
