"""Acceptance tests of the guarded push against the real mock fabric (issue 5)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from fabriccfg.push.device import CheckContext
from fabriccfg.push.report import RunReport
from fabriccfg.render.diff import diff_device

ROCE_SWITCHES = ["leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3"]  # NVUE, SONiC, EOS, NX-OS


def states(report: RunReport) -> dict[str, str]:
    return {d.name: d.state for d in report.devices}


def dev(report: RunReport, name: str) -> Any:
    return next(d for d in report.devices if d.name == name)


def backup_of(report: RunReport, name: str) -> dict[str, str]:
    return {Path(p).name: (Path(report.run_dir) / p).read_text() for p in dev(report, name).backup}


VOLATILE = re.compile(r"^(?:!Time: |## Generated at ).*\n", re.MULTILINE)
"""Header lines stamped with the time the config was shown (NX-OS '!Time:', MLNX-OS '## Generated at'):
the only lines allowed to differ."""


def same_text(before: dict[str, str], now: dict[str, str]) -> bool:
    """The judge of a rollback: the device's running-config text equals the backup text, file by file.

    Deliberately not the production ``same_config`` (a diff both ways): the code under test is not its
    own judge."""
    return before.keys() == now.keys() and all(
        VOLATILE.sub("", before[k]) == VOLATILE.sub("", now[k]) for k in before)


def assert_restored(lb: Any, report: RunReport, name: str, platform: str) -> None:
    """The device's running config equals the backup taken before the push."""
    before = backup_of(report, name)
    now = lb.running([name])[name]
    assert before, f"{name}: no backup in the run folder"
    assert same_text(before, now), f"{name}: running config differs from its backup ({platform})"


def eos_sessions(lb: Any, name: str) -> list[tuple[str, str]]:
    """``show configuration sessions`` on the switch, parsed: what an operator would see."""
    from fabriccfg.connect import connect
    from fabriccfg.platforms.eos.transaction import sessions

    conn = connect(lb.mock.endpoints[name])
    try:
        conn.enable()
        return sessions(conn.fc_command("show configuration sessions"))
    finally:
        conn.disconnect()


# --------------------------------------------------------------------------- the happy path
@pytest.mark.parametrize(("fabric_name", "names"), [
    ("roce", [*ROCE_SWITCHES, "spine1", "gpu01"]),
    ("ib8700", ["ib8700-spine1", "ib8700-leaf1", "ib8700-leaf2"]),
    ("ib8790", ["sm1", "sm2", "ib-leaf-r0"]),
])
def test_push_then_diff_is_clean_and_a_second_push_is_unchanged(lab: Any, request: Any, fabric_name: str,
                                                                 names: list[str]) -> None:
    fabric = request.getfixturevalue(fabric_name)
    with lab(fabric) as lb:
        before = lb.diff(names)
        assert any(d.changed for d in before.devices if d.target), "the fresh mock should differ from intent"
        first = lb.push(names)
        targets = [d for d in first.devices if d.target]
        assert {d.name: d.state for d in targets} == {d.name: "applied" for d in targets}, \
            {d.name: d.reason for d in targets}
        assert first.exit_code == 0
        after = lb.diff(names)
        assert [d.name for d in after.devices if d.target and (d.changed or d.state == "failed")] == []
        second = lb.push(names)
        assert {d.name: d.state for d in second.devices if d.target} == {d.name: "unchanged" for d in targets}
        assert second.exit_code == 0
        for d in first.devices:
            if not d.target:  # MQM8790: reported, with the reason, never pushed
                assert d.state == "skipped" and "not a push target" in d.reason


def test_report_json_has_the_documented_fields(lab: Any, roce: Any) -> None:
    import json

    with lab(roce) as lb:
        rep = lb.push(["leaf-r3"])
    doc = json.loads((Path(rep.run_dir) / "report.json").read_text())
    assert Path(rep.run_dir).parent == lb.runs and Path(rep.run_dir).name.endswith("Z")
    d = doc["devices"][0]
    assert d["state"] in ("unchanged", "applied", "rolled-back", "failed", "skipped")
    for key in ("name", "platform", "diff", "timings", "reason", "error", "backup", "session_log"):
        assert key in d
    assert {"connect", "fetch", "apply", "verify", "confirm", "total"} <= set(d["timings"])
    assert (Path(rep.run_dir) / d["backup"][0]).is_file()
    assert (Path(rep.run_dir) / d["session_log"]).is_file()
    assert doc["exit_code"] == 0 and doc["summary"]["applied"] == 1


# --------------------------------------------------------------------------- faults
def test_auth_fail_and_unreachable_fail_only_that_device(lab: Any, roce: Any) -> None:
    with lab(roce, faults=["leaf-r0:auth-fail", "leaf-r2:unreachable"]) as lb:
        rep = lb.push(["leaf-r0", "leaf-r2", "leaf-r3", "spine1"])
    st = states(rep)
    assert st == {"leaf-r0": "failed", "leaf-r2": "failed", "leaf-r3": "applied", "spine1": "applied"}
    assert "authentication failed" in dev(rep, "leaf-r0").reason
    assert "cannot reach" in dev(rep, "leaf-r2").reason
    assert rep.exit_code == 1


CASES = [  # (fabric fixture, device, platform, reject regex matching a line of its diff)
    ("roce", "leaf-r2", "eos", "qos map dscp"),
    ("roce", "leaf-r3", "nxos", "service-policy"),
    ("roce", "leaf-r0", "cumulus-nvue", "nv set qos pfc"),
    ("roce", "leaf-r1", "sonic", "PORT_QOS_MAP"),
    ("ib8700", "ib8700-leaf1", "mlnxos-ib", "ib partition"),
]


@pytest.mark.parametrize(("fabric_name", "name", "platform", "rx"), CASES)
def test_disconnect_mid_change_rolls_back_to_the_backup(lab: Any, request: Any, fabric_name: str, name: str,
                                                         platform: str, rx: str) -> None:
    fabric = request.getfixturevalue(fabric_name)
    with lab(fabric, faults=[f"{name}:disconnect-after=2"]) as lb:
        rep = lb.push([name])
        d = dev(rep, name)
        assert d.state == "rolled-back", d.reason
        assert d.rollback_verified is True
        assert rep.exit_code == 1
        assert_restored(lb, rep, name, platform)
        if platform == "eos":
            assert eos_sessions(lb, name) == [], "a configure session was left behind"


@pytest.mark.parametrize(("fabric_name", "name", "platform", "rx"), CASES)
def test_rejected_line_rolls_back_to_the_backup(lab: Any, request: Any, fabric_name: str, name: str,
                                                platform: str, rx: str) -> None:
    fabric = request.getfixturevalue(fabric_name)
    with lab(fabric, faults=[f"{name}:reject={rx}"]) as lb:
        rep = lb.push([name])
        d = dev(rep, name)
        assert d.state == "rolled-back", d.reason
        assert "reject" in d.reason
        assert_restored(lb, rep, name, platform)
        if platform == "eos":
            assert eos_sessions(lb, name) == [], "a configure session was left behind"


def test_opensm_host_disconnect_restores_its_files(lab: Any, ib8790: Any) -> None:
    # file writes count: 3 backup copies, then the 2nd upload of a new file drops the session
    with lab(ib8790, faults=["sm1:disconnect-after=5"]) as lb:
        rep = lb.push(["sm1"])
        assert dev(rep, "sm1").state == "rolled-back", dev(rep, "sm1").reason
        assert_restored(lb, rep, "sm1", "opensm-host")


def test_opensm_unknown_key_fails_the_precheck_and_restores_the_files(lab: Any, ib8790: Any,
                                                                    tmp_path: Path) -> None:
    """opensm -F FILE -c OUT prints 'Unrecognized token: "KEY"' and exits 0: still a failed pre-check."""
    from fabriccfg.push import api
    from fabriccfg.push.runner import RunnerOptions
    from fabriccfg.render.engine import render_spec

    user = tmp_path / "templates" / "opensm-host"
    user.mkdir(parents=True)
    spec = render_spec("opensm-host")
    assert spec is not None and spec.templates is not None
    shipped = (spec.templates / "opensm.conf.j2").read_text()
    (user / "opensm.conf.j2").write_text(shipped.rstrip("\n") + "\nbogus_tuning_knob 42\n")
    with lab(ib8790) as lb:
        jobs = api.plan_jobs(lb.fabric, lb.mock.endpoints, ["sm1"], tmp_path / "templates")
        assert "bogus_tuning_knob 42" in jobs[0].intended["opensm.conf"]
        rep = api.push(lb.fabric, jobs, run_base=lb.runs, confirm_timeout=60.0,
                       runner=RunnerOptions(workers=1, timeout=30.0))
        d = dev(rep, "sm1")
        assert d.state in ("rolled-back", "failed"), d.reason
        assert 'pre-check of opensm.conf failed: Unrecognized token: "bogus_tuning_knob"' in d.reason
        assert rep.exit_code == 1
        assert_restored(lb, rep, "sm1", "opensm-host")
        assert "bogus_tuning_knob" not in lb.running(["sm1"])["sm1"].get("opensm.conf", "")


def test_hostkey_changed_is_refused_unless_insecure(lab: Any, roce: Any) -> None:
    with lab(roce, faults=["leaf-r3:hostkey-changed"]) as lb:
        rep = lb.push(["leaf-r3"])
        assert dev(rep, "leaf-r3").state == "failed"
        assert "host key" in dev(rep, "leaf-r3").reason
        assert lb.diff(["leaf-r3"]).devices[0].changed is None  # nothing was read either
        rep = lb.push(["leaf-r3"], insecure_host_keys=True)
        assert dev(rep, "leaf-r3").state == "applied"


def test_slow_device_fails_at_its_timeout_without_delaying_the_others(lab: Any, roce: Any) -> None:
    with lab(roce, faults=["leaf-r3:slow=10"]) as lb:
        t0 = time.monotonic()
        rep = lb.push(["leaf-r3", "leaf-r2", "spine1", "leaf-r0"], workers=2, timeout=3.0)
        wall = time.monotonic() - t0
    st = states(rep)
    assert st == {"leaf-r3": "failed", "leaf-r2": "applied", "spine1": "applied", "leaf-r0": "applied"}
    assert "timed out" in dev(rep, "leaf-r3").reason
    assert dev(rep, "leaf-r3").timings["total"] < 3.0 + 1.5
    assert wall < 8.0  # never waits for the slow device's 10 s responses


# --------------------------------------------------------------------------- commit-confirm
@pytest.mark.parametrize(("name", "platform"), [("leaf-r2", "eos"), ("leaf-r0", "cumulus-nvue"),
                                                 ("leaf-r3", "nxos"), ("leaf-r1", "sonic")])
def test_failed_verification_brings_the_old_config_back(lab: Any, roce: Any, name: str,
                                                        platform: str) -> None:
    def veto(ctx: CheckContext) -> list[str]:
        return ["post-push check says no"]

    with lab(roce) as lb:
        rep = lb.push([name], post_push_checks=[veto])
        d = dev(rep, name)
        assert d.state == "rolled-back" and "post-push check says no" in d.reason
        assert_restored(lb, rep, name, platform)
        if platform == "eos":
            assert eos_sessions(lb, name) == []


@pytest.mark.parametrize(("name", "platform"), [("leaf-r2", "eos"), ("leaf-r0", "cumulus-nvue")])
def test_unconfirmed_commit_is_reverted_by_the_platform_timer(lab: Any, roce: Any, name: str,
                                                              platform: str) -> None:
    """fabriccfg dies after apply: the platform's own commit-confirm timer brings the old config back."""
    from fabriccfg import registry
    from fabriccfg.connect import connect
    from fabriccfg.push.transaction import TxContext

    with lab(roce) as lb:
        job = lb.jobs([name])[0]
        conn = connect(job.endpoint)
        ctx = TxContext(name=name, platform=platform, tag="fc-timer-0", differ=diff_device,
                        confirm_timeout=1.0)
        tx = registry.transaction(platform)(ctx)
        before = tx.fetch(conn, sorted(job.intended))
        diff = diff_device(platform, job.intended, before)
        tx.backup(conn, before)
        tx.apply(conn, diff, job.intended)
        assert not tx.verify(conn, job.intended)  # the change is live ...
        conn.disconnect()  # ... and fabriccfg is gone before confirming
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if same_text(before, lb.running([name])[name]):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the commit timer did not revert the change")


# --------------------------------------------------------------------------- dry-run, secrets
def test_dry_run_changes_nothing(lab: Any, roce: Any) -> None:
    names = ["leaf-r0", "leaf-r2", "leaf-r3"]
    with lab(roce) as lb:
        before = lb.running(names)
        rep = lb.push(names, dry_run=True)
        assert set(states(rep).values()) == {"skipped"}
        assert all(d.changed and d.diff and "dry-run" in d.reason for d in rep.devices)
        assert rep.exit_code == 1 and rep.dry_run
        now = lb.running(names)
        for d in rep.devices:
            assert same_text(before[d.name], now[d.name]), d.name


def test_secrets_never_reach_the_run_folder(lab: Any, roce: Any) -> None:
    with lab(roce, faults=["leaf-r2:reject=qos map", "leaf-r0:auth-fail"]) as lb:
        secrets = set()
        for ep in lb.mock.endpoints.values():
            secrets.add(ep.password)
            if ep.snmp is not None:
                secrets.update(v for v in (ep.snmp.community, ep.snmp.auth_key, ep.snmp.priv_key) if v)
        secrets.discard(None)
        lb.push(["leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3", "gpu01"])
        lb.diff(["leaf-r3"])
    files = [p for p in lb.runs.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".log") for p in files) and any(p.name == "report.json" for p in files)
    for p in files:
        text = p.read_bytes().decode("utf-8", "replace")
        for s in secrets:
            assert s not in text, f"a secret leaked into {p}"


def test_canary_failure_leaves_the_rest_untouched(lab: Any, roce: Any) -> None:
    from fabriccfg.push.runner import RunnerOptions

    names = ["leaf-r3", "leaf-r2", "spine1", "leaf-r0"]
    with lab(roce, faults=["leaf-r3:reject=service-policy"]) as lb:
        before = lb.running(["spine1"])
        rep = lb.push(names, runner=RunnerOptions(workers=4, canary=1, timeout=30))
        st = states(rep)
        assert st["leaf-r3"] == "rolled-back"
        assert {st[n] for n in ("leaf-r2", "spine1", "leaf-r0")} == {"skipped"}
        assert all("canary" in dev(rep, n).reason for n in ("leaf-r2", "spine1", "leaf-r0"))
        assert same_text(before["spine1"], lb.running(["spine1"])["spine1"])


def test_eos_stale_session_from_an_earlier_run_is_cleared(lab: Any, roce: Any) -> None:
    """A crashed run's half-built session (napalm#1921's stale session) is removed, and reported."""
    from fabriccfg.connect import connect

    with lab(roce) as lb:
        conn = connect(lb.mock.endpoints["leaf-r2"])
        conn.enable()
        conn.fc_command("configure session fc-dead01-0")
        conn.fc_command("qos map dscp 26 to traffic-class 3")
        conn.disconnect()  # leaves the session pending, as a crash would
        assert [n for n, _ in eos_sessions(lb, "leaf-r2")] == ["fc-dead01-0"]
        rep = lb.push(["leaf-r2"])
        d = dev(rep, "leaf-r2")
        assert d.state == "applied", d.reason
        assert any("stale configure session fc-dead01-0" in n for n in d.notes)
        assert eos_sessions(lb, "leaf-r2") == []


def test_rollback_judge_sees_a_leftover_line_but_not_the_time_stamp() -> None:
    base = "!Command: show running-config\n!Time: Tue Dec 01 14:27:04 2026\n\nhostname leaf-r3\n"
    later = base.replace("14:27:04", "14:27:05")
    assert same_text({"config.txt": base}, {"config.txt": later})
    assert not same_text({"config.txt": base}, {"config.txt": later + "interface Ethernet1/1\n  mtu 9216\n"})
    assert not same_text({"config.txt": base}, {"config.txt": base, "extra.txt": ""})
