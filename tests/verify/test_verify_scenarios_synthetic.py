"""Each mock scenario's signature, built as synthetic snapshots, yields its expected finding."""

from __future__ import annotations

from fabriccfg.verify.engine import Report

from .conftest import ids, run
from .synth import Synth


def _only(report: Report, *expected: str) -> None:
    got = ids(report)
    assert set(expected) <= got, report.to_dict()["findings"]
    extra = got - set(expected)
    assert not extra, [f.to_dict() for f in report.findings if f.check in extra]


def test_healthy_roce_has_no_findings(roce, checks):
    report = run(Synth(roce), checks)
    assert report.findings == [], [f.to_dict() for f in report.findings]
    assert report.status == "ok" and report.exit_code == 0
    states = {r.check: r.state for r in report.results}
    assert states["pfc-pause-storm"] == "ok"
    assert states["ib-xmit-wait"] == "skipped"


def test_healthy_ib_has_no_findings(ib, checks):
    report = run(Synth(ib), checks)
    assert report.findings == [], [f.to_dict() for f in report.findings]
    states = {r.check: r.state for r in report.results}
    assert states["ib-cabling"] == "ok" and states["sm-health"] == "ok" and states["sharp-health"] == "ok"


def test_single_snapshot_rate_checks_are_unknown_no_baseline(roce, checks):
    """One snapshot on a healthy fabric: state checks are OK, rate checks UNKNOWN "no baseline yet"."""
    report = run(Synth(roce), checks, times=(10.0,))
    assert report.status == "unknown" and report.exit_code == 3
    states = {r.check: r for r in report.results}
    for cid in ("pfc-pause-storm", "pfc-storm-origin", "ecn-congestion", "lossless-queue-drops"):
        assert states[cid].state == "unknown" and "no baseline yet" in states[cid].message, cid
    assert states["link-state-speed"].state == "ok" and states["eth-cabling"].state == "ok"
    assert {f.severity for f in report.findings} == {"unknown"}
    assert all("no baseline yet" in f.message for f in report.findings)


def test_single_snapshot_state_finding_outranks_no_baseline(roce, checks):
    """A check that needs no rate still decides the status when it finds something."""
    s = Synth(roce)
    s.set_state("leaf-r0", "swp29", "oper_status", "down")
    report = run(s, checks, times=(10.0,))
    assert report.status == "critical" and report.exit_code == 2
    assert ("link-state-speed", "critical") in {(f.check, f.severity) for f in report.findings}
    assert any(f.severity == "unknown" and "no baseline yet" in f.message for f in report.findings)


def test_congestion(roce, checks):
    s = Synth(roce)
    leaf_port = roce.neighbours[("gpu04", "mlx5_0")]
    s.add_rate(*leaf_port, "ecn_marked", 0.15 * s._base_rate(*leaf_port) / 4096 * 0.8, tc=3)
    s.add_rate("gpu04", "mlx5_0", "np_cnp_sent", 20000)
    s.add_rate(*leaf_port, "pfc_tx_pause", 500, prio=3)
    s.add_rate("gpu04", "mlx5_0", "pfc_rx_pause", 500, prio=3)
    s.add_rate("gpu04", "mlx5_0", "pfc_rx_pause_duration", 50_000, prio=3)
    report = run(s, checks)
    _only(report, "ecn-congestion", "cnp-rate")
    ecn = next(f for f in report.findings if f.check == "ecn-congestion")
    assert (ecn.device, ecn.port, ecn.priority) == (*leaf_port, 3)
    assert 0.14 < ecn.value < 0.16 and ecn.severity == "warning"


def test_lossless_drop(roce, checks):
    s = Synth(roce)
    s.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    s.add_rate("leaf-r2", "Ethernet3/1", "tc_wred_discard", 5, tc=0)  # another class: not lossless
    report = run(s, checks)
    _only(report, "lossless-queue-drops")
    f = report.findings[0]
    assert (f.device, f.port, f.priority, f.severity) == ("leaf-r2", "Ethernet3/1", 3, "critical")
    assert f.value == 80 and report.exit_code == 2


def test_link_flap_roce(roce, checks):
    s = Synth(roce)
    s.set_state("leaf-r1", "Ethernet16", "oper_status", "down", 13.0)
    s.set_state("gpu03", "mlx5_1", "oper_status", "down", 13.0)
    s.add_rate("leaf-r1", "Ethernet16", "if_in_errors", 50, 11.0)
    report = run(s, checks)
    assert {"link-state-speed", "link-errors"} <= ids(report)
    down = [f for f in report.findings if f.check == "link-state-speed"]
    assert {(f.device, f.port) for f in down} == {("leaf-r1", "Ethernet16"), ("gpu03", "mlx5_1")}
    assert all(f.severity == "critical" and f.value == "down" for f in down)


def test_speed_mismatch_is_warning(roce, checks):
    s = Synth(roce)
    s.set_state("leaf-r0", "swp29", "speed_mbps", 200000)
    report = run(s, checks)
    f = next(f for f in report.findings if f.check == "link-state-speed")
    assert f.severity == "warning" and f.value == 200000


def test_ib_congestion_stall_ratio(ib, checks):
    s = Synth(ib)
    # 30 % stall at HDR: 0.3 * 25e9 B/s / 8 B per tick
    s.add_rate("ib-leaf-r0", "1/31", "PortXmitWait", 0.3 * 200e9 / 8 / 8)
    report = run(s, checks)
    _only(report, "ib-xmit-wait")
    f = report.findings[0]
    assert (f.device, f.port, f.severity) == ("ib-leaf-r0", "1/31", "critical")
    assert abs(f.value - 0.3) < 1e-6


def test_ib_symbol_errors(ib, checks):
    s = Synth(ib)
    s.add_rate("ib-leaf-r1", "1/3", "SymbolErrorCounter", 20)
    report = run(s, checks)
    _only(report, "ib-symbol-errors")
    assert report.findings[0].severity == "critical" and report.findings[0].value == 20


def test_ib_link_flap(ib, checks):
    s = Synth(ib)
    s.add_rate("ib-leaf-r0", "1/2", "LinkDownedCounter", 0.5, 11.0)
    s.add_rate("gpu02", "mlx5_0", "LinkDownedCounter", 0.5, 11.0)
    s.add_rate("ib-leaf-r0", "1/2", "PortXmitDiscards", 3, 11.0)
    report = run(s, checks)
    assert {"ib-link-downed", "ib-xmit-discards"} <= ids(report)
    assert report.status == "critical"


def test_ib_saturated_counter_is_unknown_not_rate(ib, checks):
    s = Synth(ib)
    s.add_rate("ib-leaf-r0", "1/5", "SymbolErrorCounter", 65535)  # sticks at 65535
    report = run(s, checks)
    f = next(f for f in report.findings if f.check == "ib-symbol-errors")
    assert f.severity == "unknown" and "saturated" in f.message and f.value is None


def test_counter_wrap_no_false_alert(roce, ib, checks):
    for fabric in (roce, ib):
        s = Synth(fabric, wrap=True)
        report = run(s, checks)
        assert report.findings == [], [f.to_dict() for f in report.findings]


def test_reboot_no_false_alert(roce, ib, checks):
    for fabric, dev in ((roce, "leaf-r1"), (roce, "gpu02"), (ib, "sm1")):
        s = Synth(fabric)
        s.reboots[dev] = 11.0
        report = run(s, checks)
        assert report.findings == [], [f.to_dict() for f in report.findings]


def test_cabling_swap_ethernet(roce, checks):
    s = Synth(roce)
    a, b = ("leaf-r0", "swp1"), ("leaf-r0", "swp2")
    s.swapped[a] = roce.neighbours[b]
    s.swapped[b] = roce.neighbours[a]
    report = run(s, checks)
    _only(report, "eth-cabling")
    assert {(f.device, f.port) for f in report.findings} == {a, b}
    assert all(f.severity == "critical" and "miscabled" in f.message for f in report.findings)


def test_cabling_swap_ib(ib, checks):
    s = Synth(ib)
    a, b = ("ib-leaf-r0", "1/1"), ("ib-leaf-r0", "1/2")
    s.swapped[a] = ib.neighbours[b]
    s.swapped[b] = ib.neighbours[a]
    report = run(s, checks)
    _only(report, "ib-cabling")
    assert {(f.device, f.port) for f in report.findings} == {a, b}


def test_sm_two_masters_and_sharp_down(ib, checks):
    s = Synth(ib)
    s.set_state("sm2", "", "sm_state", "master")
    s.set_state("sm1", "sharp_am", "service_state", "failed")
    report = run(s, checks)
    assert {"sm-health", "sharp-health"} <= ids(report)
    sm = [f for f in report.findings if f.check == "sm-health"]
    assert any("2 master" in f.message for f in sm)


def test_unreachable_device_is_unknown(roce, checks):
    s = Synth(roce)
    s.unreachable.add("leaf-r3")
    report = run(s, checks)
    f = next(f for f in report.findings if f.check == "collect")
    assert f.device == "leaf-r3" and f.severity == "unknown"
    assert report.status == "unknown" and report.exit_code == 3


def test_user_check_dir_overrides_and_adds(roce, checks, tmp_path):
    from fabriccfg.verify.engine import load_checks

    (tmp_path / "ecn.yaml").write_text(
        "id: ecn-congestion\nvalue: ratio(rate(ecn_marked), rate(tc_tx_pkts))\nwarn: '> 0.01'\n"
        "scope: {technology: [roce], kinds: [switch], priority: lossless}\nhint: tuned\n"
    )
    (tmp_path / "util.yaml").write_text(
        "id: uplink-utilisation\nvalue: ratio(rate(if_out_octets) * 8, link_bps)\nwarn: 0.2\n"
        "scope: {kinds: [switch], ports: 'swp(29|30)'}\n"
    )
    mine = load_checks([tmp_path])
    assert next(c for c in mine if c.id == "ecn-congestion").hint == "tuned"
    report = run(Synth(roce), mine)
    util = [f for f in report.findings if f.check == "uplink-utilisation"]
    assert {(f.device, f.port) for f in util} == {("leaf-r0", "swp29"), ("leaf-r0", "swp30")}
    assert all(abs(f.value - 0.3) < 1e-6 for f in util)


def test_device_level_user_check(ib, tmp_path):
    from fabriccfg.verify.engine import load_checks

    (tmp_path / "sm.yaml").write_text(
        "id: sm-standby\nvalue: value(sm_state)\ncrit: {expr: \"value != 'master'\", show: master}\n"
        "scope: {kinds: [sm-host], level: device, devices: 'sm1'}\nhint: failover happened\n"
    )
    s = Synth(ib)
    s.set_state("sm1", "", "sm_state", "standby", 11.0)
    report = run(s, load_checks([tmp_path], shipped=False))
    (f,) = report.findings
    assert (f.check, f.device, f.port, f.value, f.severity) == (
        "sm-standby",
        "sm1",
        None,
        "standby",
        "critical",
    )
    assert f.message.endswith("(critical: master)")
