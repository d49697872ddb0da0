"""Stable findings in `watch`: identities by place, hysteresis on severity, a storm path that does not
follow polling jitter. Snapshots come from the mock's traffic model (no sockets), with each device's
answer time jittered the way a real poll is."""

from __future__ import annotations

import itertools
import random

import pytest

from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.verify import hysteresis, storm, watch
from fabriccfg.verify.engine import CheckResult, Finding, Report

from .model_snapshot import snapshot

T0 = 1_700_000_000.0


def _watch(fabric, checks, scenarios, damping, step=2.0, start=6.0, jitter=0.05, seed=1):
    model = TrafficModel(fabric, scenarios, seed=0, t0=T0)
    rng = random.Random(seed)
    clock = {"t": start}

    def collect(_fabric, _targets):
        clock["t"] += step
        snap = snapshot(model, T0 + clock["t"])
        for d in snap.device_ts:  # a device answers a little earlier or later than the round's start
            snap.device_ts[d] += rng.uniform(-jitter, jitter)
        return snap

    return watch.Watcher(fabric, {n: None for n in fabric.devices}, checks, collect, damping=damping)


def _wd(report: Report) -> list[tuple[str | None, str | None, str]]:
    return sorted((f.device, f.port, f.severity) for f in report.findings
                  if f.check == "pfc-watchdog-fired" and f.severity != "unknown")


def _paths(report: Report) -> list[str]:
    return [" ".join(f.path) for f in report.findings if f.check == "pfc-storm-origin" and f.path]


@pytest.mark.parametrize("step", [2.0, 2.3])
def test_watchdog_finding_does_not_flap_on_a_steady_storm(roce, checks, step):
    """The mock's watchdog is stormed 0.4 s of each 0.6 s cycle, so a round sees the queue stormed
    (critical) or not (warning) depending on its phase: raw findings flap, shown findings must not."""
    raw = _watch(roce, checks, ["pause-storm:gpu03"], (1, 1), step=step)
    damped = _watch(roce, checks, ["pause-storm:gpu03"], (2, 3), step=step)
    raw_seen, shown = [], []
    for _ in range(6):
        raw_seen.append(_wd(raw.round()))
        shown.append(_wd(damped.round()))
    raw.close()
    damped.close()

    def changes(seq):
        return sum(1 for a, b in itertools.pairwise(seq) if a != b)

    assert changes(raw_seen[1:]) >= 2, raw_seen  # without damping it flaps
    # damped: one place, at most one change (warning -> critical once two stormed rounds were seen)
    assert all(len(x) == 1 and x[0][:2] == ("leaf-r0", "swp3") for x in shown[1:]), shown
    assert changes(shown[1:]) <= 1 and shown[-1] == [("leaf-r0", "swp3", "critical")], shown


def test_once_runs_share_damping_through_the_state_dir(roce, checks, tmp_path):
    """`watch --once` from a timer: each round is a new process; the state dir carries the tracks."""
    model = TrafficModel(roce, ["pause-storm:gpu03"], seed=0, t0=T0)
    clock = {"t": T0 + 6.0}

    def collect(_fabric, _targets):
        clock["t"] += 2.0
        return snapshot(model, clock["t"])

    def once(damping):
        w = watch.Watcher(roce, {n: None for n in roce.devices}, checks, collect,
                          state_dir=tmp_path / damping.replace("/", "-"), clock=lambda: clock["t"],
                          damping=hysteresis.parse(damping))
        try:
            return _wd(w.round())
        finally:
            w.close()

    raw, shown = [], []
    for _ in range(6):
        t = clock["t"]
        raw.append(once("1/1"))
        clock["t"] = t  # the damped run sees the same instant
        shown.append(once("2/3"))
    assert raw[0] == [] and len({tuple(x) for x in raw[1:]}) > 1, raw  # no baseline, then a flap
    assert shown[1:] == [shown[1]] * 5 and shown[1][0][:2] == ("leaf-r0", "swp3"), shown
    assert sorted(p.name for p in (tmp_path / "2-3").iterdir() if p.suffix == ".json") == [
        "hysteresis-roce_lab_watch.json"]


def test_storm_path_is_the_same_every_round(roce, checks):
    w = _watch(roce, checks, ["pause-storm:gpu03"], (2, 3), jitter=0.08)
    paths = []
    for _ in range(6):
        report = w.round()
        paths.append(_paths(report))
    w.close()
    assert paths[0] == []  # first round: no baseline yet
    assert len(paths[1]) == 1 and paths[1:] == [paths[1]] * 5, paths
    assert paths[1][0].startswith("gpu03:mlx5_0 leaf-r0:swp3 ")


def test_next_hop_ties_within_noise_by_port_name():
    a = storm.PausedPort("spine1", "swp5", 3, 0.52, 0)
    b = storm.PausedPort("spine1", "swp1", 3, 0.47, 0)
    c = storm.PausedPort("spine1", "swp10", 3, 0.49, 0)
    assert storm.next_hop([a, b, c]).port == "swp1"
    assert storm.next_hop([c, a]).port == "swp5"  # natural order: swp5 < swp10
    early = storm.PausedPort("spine1", "swp9", 3, 0.2, 0)
    assert storm.next_hop([early, storm.PausedPort("spine1", "swp1", 3, 0.9, 1)]).port == "swp9"
    assert storm.next_hop([storm.PausedPort("s", "swp1", 3, 0.3, 0), a]).port == "swp5"  # clearly more


def _report(*findings: Finding, checks=("c",)) -> Report:
    from fabriccfg.verify.engine import worst

    return Report(worst(f.severity for f in findings), list(findings),
                  [CheckResult(c, worst(f.severity for f in findings if f.check == c)) for c in checks])


def test_hysteresis_counts_consistent_rounds_per_identity():
    h = hysteresis.Hysteresis(up=2, down=3)
    crit = Finding("c", "critical", "leaf", "p1", 3, message="x")
    warn = Finding("c", "warning", "leaf", "p1", 3, message="a different message, same place")
    other = Finding("c", "warning", "leaf", "p2", 3)
    assert h.apply(_report()).status == "ok"  # the check had a verdict: a new finding must wait
    r = h.apply(_report(crit))
    assert r.status == "ok" and r.findings == [] and r.results[0].state == "ok"
    assert h.apply(_report(crit)).status == "critical"  # 2 rounds up
    for _ in range(2):  # 2 rounds lower: still critical, the held finding says what was seen
        r = h.apply(_report(warn))
        assert r.status == "critical" and r.findings[0].details["hysteresis"]["raw"] == "warning"
    r = h.apply(_report(crit))  # back up: the run at "warning" is broken
    assert r.status == "critical" and "hysteresis" not in r.findings[0].details
    for _ in range(2):
        assert h.apply(_report(warn, other)).findings[0].severity == "critical"
    r = h.apply(_report(warn, other))  # 3rd consistent round: lowered; p2 became visible after 2
    assert [(f.port, f.severity) for f in r.findings] == [("p1", "warning"), ("p2", "warning")]
    for _ in range(2):
        assert h.apply(_report()).status == "warning"  # clearing also takes 3 rounds
    assert h.apply(_report()).status == "ok" and h.tracks == {}


def test_hysteresis_first_verdict_and_unknown_pass_through():
    h = hysteresis.Hysteresis(up=2, down=3)
    nobase = Finding("c", "unknown", message="no baseline yet: ...")
    r = h.apply(Report("unknown", [nobase], [CheckResult("c", "unknown", findings=[nobase])]))
    assert r.status == "unknown" and r.findings == [nobase]
    crit = Finding("c", "critical", "leaf", "p1", 3)
    assert h.apply(_report(crit)).status == "critical"  # no known state before: shown at once
    assert h.apply(_report(crit)).status == "critical"
    off = hysteresis.Hysteresis(1, 1)
    off.apply(_report())
    assert off.apply(_report(crit)).status == "critical" and off.apply(_report()).status == "ok"


def test_parse_hysteresis():
    assert hysteresis.parse("2/3") == (2, 3)
    for bad in ("2", "0/3", "a/b", "2/101"):
        with pytest.raises(ValueError, match="--hysteresis"):
            hysteresis.parse(bad)
