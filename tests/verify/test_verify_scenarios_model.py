"""Every scenario of the mock's traffic model yields its expected finding; healthy, counter-wrap and
reboot yield none. Snapshots come from the real TrafficModel at explicit model times."""

from __future__ import annotations

import pytest

from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.verify.engine import Context, Report, evaluate

from .model_snapshot import snapshot

T0 = 1_700_000_000.0


def verify(fabric, checks, scenarios, times) -> Report:
    model = TrafficModel(fabric, scenarios, seed=0, t0=T0)
    return evaluate(checks, Context(fabric, [snapshot(model, T0 + t) for t in times]))


def found(report: Report) -> set[tuple[str, str | None, str | None]]:
    return {(f.check, f.device, f.port) for f in report.findings}


def show(report: Report) -> list[dict]:
    return [f.to_dict() for f in report.findings]


TIMES = (20.0, 22.0, 24.0)


@pytest.mark.parametrize("lab", ["roce", "ib"])
@pytest.mark.parametrize("scenarios", [[], ["counter-wrap"]], ids=["healthy", "counter-wrap"])
def test_no_findings(request, checks, lab, scenarios):
    fabric = request.getfixturevalue(lab)
    report = verify(fabric, checks, scenarios, TIMES)
    assert report.findings == [], show(report)


@pytest.mark.parametrize(
    "lab,device",
    [("roce", "leaf-r1"), ("roce", "gpu02"), ("roce", "spine1"), ("ib", "ib-leaf-r0"), ("ib", "sm2")],
)
def test_reboot_no_false_alert(request, checks, lab, device):
    fabric = request.getfixturevalue(lab)
    for times in ((8.0, 12.0, 14.0), (9.0, 10.5, 30.0), (5.0, 9.5, 11.0)):
        report = verify(fabric, checks, [f"reboot:{device}"], times)
        bad = [f for f in report.findings if f.severity != "unknown" or f.check != "collect"]
        assert bad == [], (times, show(report))


def test_congestion(roce, checks):
    report = verify(roce, checks, ["congestion:gpu04"], TIMES)
    checks_found = {f.check for f in report.findings}
    assert "ecn-congestion" in checks_found and "cnp-rate" in checks_found, show(report)
    assert not {"pfc-pause-storm", "pfc-storm-origin", "lossless-queue-drops"} & checks_found, show(report)
    ecn = [f for f in report.findings if f.check == "ecn-congestion"]
    assert all(f.device.startswith("leaf-r") and f.priority == 3 for f in ecn)


def test_pause_storm_origin_and_path(roce, checks):
    report = verify(roce, checks, ["pause-storm:gpu03"], (0.5, 6.0, 7.0, 8.0))
    origin = [f for f in report.findings if f.check == "pfc-storm-origin"]
    assert len(origin) == 1, show(report)
    f = origin[0]
    assert f.origin == "gpu03:mlx5_0" and f.device == "gpu03"
    assert f.path[:2] == ["gpu03:mlx5_0", "leaf-r0:swp3"], f.path
    hops = f.details["hops"]
    assert hops[:2] == ["gpu03", "leaf-r0"] and hops[2] in ("spine1", "spine2"), hops
    assert len(hops) >= 4, hops
    assert ("pfc-pause-storm", "leaf-r0", "swp3") in found(report), show(report)
    assert "pfc-watchdog-fired" in {x.check for x in report.findings}
    assert report.exit_code == 2


def test_pause_storm_early_first_hop_only(roce, checks):
    report = verify(roce, checks, ["pause-storm:gpu06:mlx5_2"], (0.2, 0.8, 1.4))
    f = next(f for f in report.findings if f.check == "pfc-storm-origin")
    assert f.origin == "gpu06:mlx5_2" and f.path[:2] == ["gpu06:mlx5_2", "leaf-r2:Ethernet6/1"]


def test_lossless_drop(roce, checks):
    report = verify(roce, checks, ["lossless-drop:leaf-r2:Ethernet3/1"], TIMES)
    assert found(report) == {("lossless-queue-drops", "leaf-r2", "Ethernet3/1")}, show(report)
    assert report.findings[0].priority == 3 and report.exit_code == 2


def test_link_flap_roce(roce, checks):
    report = verify(roce, checks, ["link-flap:leaf-r1:Ethernet16"], (10.0, 12.0, 14.0))
    where = {(f.device, f.port) for f in report.findings}
    assert ("leaf-r1", "Ethernet16") in where, show(report)
    assert where <= {("leaf-r1", "Ethernet16"), ("gpu03", "mlx5_1")}, show(report)
    assert report.status == "critical"


def test_link_flap_ib(ib, checks):
    report = verify(ib, checks, ["link-flap:ib-leaf-r0:1/2"], (10.0, 12.0, 14.0))
    assert ("ib-link-downed", "ib-leaf-r0", "1/2") in found(report), show(report)
    assert {(f.device, f.port) for f in report.findings} <= {("ib-leaf-r0", "1/2"), ("gpu02", "mlx5_0")}


def test_ib_congestion(ib, checks):
    report = verify(ib, checks, ["ib-congestion:ib-leaf-r1:1/31"], TIMES)
    assert found(report) == {("ib-xmit-wait", "ib-leaf-r1", "1/31")}, show(report)
    f = report.findings[0]
    assert 0.2 < f.value < 0.4 and f.severity == "critical"


def test_ib_symbol_errors(ib, checks):
    report = verify(ib, checks, ["ib-symbol-errors:ib-spine1:1/1"], TIMES)
    assert ("ib-symbol-errors", "ib-spine1", "1/1") in found(report), show(report)
    assert {f.check for f in report.findings} == {"ib-symbol-errors"}, show(report)


def test_cabling_swap_roce(roce, checks):
    report = verify(roce, checks, ["cabling-swap:leaf-r0:swp1,leaf-r0:swp2"], TIMES)
    assert found(report) == {("eth-cabling", "leaf-r0", "swp1"), ("eth-cabling", "leaf-r0", "swp2")}, show(
        report
    )


def test_cabling_swap_ib(ib, checks):
    report = verify(ib, checks, ["cabling-swap:ib-leaf-r0:1/31,ib-leaf-r0:1/33"], TIMES)
    assert found(report) == {("ib-cabling", "ib-leaf-r0", "1/31"), ("ib-cabling", "ib-leaf-r0", "1/33")}, (
        show(report)
    )


def test_link_flap_caught_while_down(roce, ib, checks):
    report = verify(roce, checks, ["link-flap:leaf-r1:Ethernet16"], (8.0, 10.0, 12.0))
    f = next(f for f in report.findings if (f.device, f.port) == ("leaf-r1", "Ethernet16"))
    assert f.check == "link-state-speed" and f.value == "down"
    report = verify(ib, checks, ["link-flap:ib-leaf-r0:1/2"], (8.0, 10.0, 12.0))
    assert ("link-state-speed", "ib-leaf-r0", "1/2") in found(report), show(report)
