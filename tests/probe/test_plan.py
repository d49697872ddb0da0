"""The pair plan covers every leaf that has GPU hosts with at most 2 x leaves pairs."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fabriccfg.cli import app
from fabriccfg.probe import plan

from .conftest import ROOT, generated


def check_plan(fabric):
    pairs = plan.plan(fabric)
    # the leaves are read from the inventory's cabling here, not from the plan module
    leaves = {
        fabric.neighbours[(h.name, n.name)][0]
        for h in fabric.hosts
        for n in h.nics
        if (h.name, n.name) in fabric.neighbours
    }
    covered = {fabric.neighbours[(p.client.host, p.client.nic)][0] for p in pairs}
    covered |= {fabric.neighbours[(p.server.host, p.server.nic)][0] for p in pairs}
    assert covered == leaves
    assert len(pairs) <= 2 * len(leaves)
    assert all(p.client.host != p.server.host for p in pairs if p.kind == "same-leaf")
    return pairs, leaves


@pytest.mark.parametrize("technology", ["roce", "infiniband"])
def test_1k_gpu_gen_fabric_plan(technology):
    fabric = generated(1024, technology)
    pairs, leaves = check_plan(fabric)
    kinds = {p.kind for p in pairs}
    assert "same-leaf" in kinds and kinds & {"cross-leaf", "cross-pod"}
    if technology == "infiniband":  # 3 tiers at radix 40: the plan crosses pods
        assert "cross-pod" in kinds
    assert len(pairs) == len(leaves) + (len(leaves) + 1) // 2


def test_labs(roce, ib, ib8700):
    for fabric in (roce, ib, ib8700):
        pairs, _ = check_plan(fabric)
        # a rail-optimised lab has one leaf per rail: spines are reached by cross-rail pairs
        assert any(p.kind == "cross-rail" for p in pairs)


def test_plan_is_deterministic_and_limited_to_hosts(roce):
    assert plan.plan(roce) == plan.plan(roce)
    some = plan.plan(roce, ["gpu01", "gpu02"])
    assert {p.client.host for p in some} | {p.server.host for p in some} <= {"gpu01", "gpu02"}
    with pytest.raises(plan.PlanError, match="not GPU hosts"):
        plan.plan(roce, ["leaf-r0"])


def test_cli_plan_and_usage_errors():
    inv = str(ROOT / "inventories" / "roce-lab.yaml")
    r = CliRunner().invoke(app, ["probe", inv, "--plan"])
    assert r.exit_code == 0 and r.stdout.startswith("pair plan: 6 pairs") and "same-leaf" in r.stdout
    r = CliRunner().invoke(app, ["probe", inv, "--plan", "--hosts", "gpu01,gpu03"])
    assert r.exit_code == 0 and "cover 4 of 4 leaves" in r.stdout
    for args, text in (
        (["--hosts", "nope"], "no GPU host named 'nope'"),
        (["--tools", "iperf"], "--tools"),
        (["--format", "xml"], "--format"),
    ):
        r = CliRunner().invoke(app, ["probe", inv, *args])
        assert r.exit_code == 3 and text in r.output and "Traceback" not in r.output
