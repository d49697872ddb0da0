"""The run journal (issue 10 §2): records on disk before each change, report.json from it, ``--recover``'s
CLI contract, SIGTERM."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from killing import killed_push
from typer.testing import CliRunner

import fabriccfg
from fabriccfg.cli import app
from fabriccfg.push.journal import Journal, read_run, records
from fabriccfg.push.report import report_from_journal

ROCE = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_a_torn_last_line_is_ignored_and_in_flight_devices_are_reported(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.write("run-start", command="push", fabric="f", inventory="", devices=[
        {"name": "a", "platform": "nxos", "target": True}, {"name": "b", "platform": "eos", "target": True},
        {"name": "c", "platform": "eos", "target": True}])
    j.write("started", device="a", platform="nxos", tag="fc-x-0", backup=["backups/a/config.txt"], intent=[])
    j.state("a", "backed-up", "applying", restore={"have_checkpoint": True})
    j.write("started", device="b", platform="eos", tag="fc-x-1", backup=[], intent=[])
    j.state("b", "backed-up", "applying", "applied", "verified", "confirming", "committed")
    j.write("result", device="b", state="applied",
            result={"name": "b", "platform": "eos", "state": "applied"})
    j.close()
    with open(tmp_path / "journal.jsonl", "a") as fh:
        fh.write('{"t": 1, "event": "state", "device": "a", "sta')  # the kill hit mid-write
    assert records(tmp_path)[-1]["event"] == "result"
    trail = read_run(tmp_path)
    assert [d.name for d in trail.in_flight()] == ["a"]
    assert trail.devices["a"].last_state == "applying"
    assert trail.devices["a"].restore == {"have_checkpoint": True}
    rep = report_from_journal(tmp_path)
    by = {d.name: d for d in rep.devices}
    assert (by["a"].state, by["a"].in_flight) == ("failed", "applying")
    assert "push --recover" in by["a"].reason
    assert by["b"].state == "applied" and by["b"].in_flight is None
    assert by["c"].state == "skipped"
    assert rep.ended == "unknown" and rep.exit_code == 1
    assert (tmp_path / "journal.jsonl").stat().st_mode & 0o077 == 0


def test_every_state_is_on_disk_before_the_next_step(lab: Any, roce: Any) -> None:
    """A post-push check reads the journal from disk while the device is mid-change."""
    from fabriccfg.push.device import CheckContext

    seen: list[list[str]] = []

    def check(ctx: CheckContext) -> list[str]:
        run_dir = max((lb.runs).iterdir())
        seen.append([r.get("state", r["event"]) for r in records(run_dir) if r.get("device") == ctx.name])
        return []

    with lab(roce) as lb:
        rep = lb.push(["leaf-r3"], post_push_checks=[check])
    assert [d.state for d in rep.devices] == ["applied"]
    assert seen == [["started", "backed-up", "applying", "applied"]]
    states = [r.get("state", r["event"]) for r in records(rep.run_dir) if r.get("device") == "leaf-r3"]
    assert states == ["started", "backed-up", "applying", "applied", "verified", "confirming", "committed",
                      "applied"]
    started = next(r for r in records(rep.run_dir) if r["event"] == "started")
    assert started["kind"].startswith("configuration session") and started["tag"].startswith("fc-")
    assert (Path(rep.run_dir) / started["backup"][0]).is_file()
    assert (Path(rep.run_dir) / started["intent"][0]).is_file()
    assert len(started["intent_sha256"]) == 64


def test_recover_cli_contract(lab: Any, roce: Any, tmp_path: Path) -> None:
    """Exit 2 without a journal; a killed run: the device rolled back, exit 0, report.json rewritten;
    a second --recover says there is nothing to do and changes nothing."""
    res = run("push", "--recover", str(tmp_path))
    assert res.exit_code == 2 and "no journal.jsonl" in res.output
    with lab(roce) as lb:
        dev = lb.mock.device("leaf-r3")

        def slow(states: list[str]) -> None:
            if "started" in states and not dev.faults.slow:
                lb.mock.call(lambda: setattr(dev.faults, "slow", 0.05))

        try:
            run_dir, killed, states, code = killed_push(ROCE, lb.mock.endpoints_file, "leaf-r3",
                                                        tmp_path / "r", "applying", 0.1, seen=slow)
        finally:
            lb.mock.call(lambda: setattr(dev.faults, "slow", 0.0))
        assert killed and code == -signal.SIGKILL and states[-1] == "applying"
        assert not (run_dir / "report.json").exists()
        ep = str(lb.mock.endpoints_file)
        res = run("push", "--recover", str(run_dir), "--endpoints", ep, "--format", "json")
        assert res.exit_code == 0, res.output
        doc = json.loads(res.stdout)
        dev_doc = doc["devices"][0]
        assert (dev_doc["state"], dev_doc["recovered"], dev_doc["in_flight"]) == ("rolled-back", True, None)
        assert doc["recoveries"][0]["devices"] == {"leaf-r3": "rolled-back"}
        assert json.loads((run_dir / "report.json").read_text()) == doc
        size = (run_dir / "journal.jsonl").stat().st_size
        res = run("push", "--recover", str(run_dir), "--endpoints", str(lb.mock.endpoints_file))
        assert res.exit_code == 0 and "nothing to recover" in res.output
        assert (run_dir / "journal.jsonl").stat().st_size == size
        left = lb.mock.call(lambda: (sorted(dev.extra["sessions"]), sorted(dev.extra["checkpoints"])))
        assert left == ([], [])


def test_sigterm_finishes_the_journal_and_report_and_rolls_back(lab: Any, roce: Any, tmp_path: Path) -> None:
    """SIGTERM while lines are in flight: the device is rolled back and report.json says SIGTERM."""
    with lab(roce) as lb:
        dev = lb.mock.device("leaf-r2")
        runs = tmp_path / "runs"
        runs.mkdir()
        proc = subprocess.Popen(
            [sys.executable, "-m", "fabriccfg.cli", "push", str(ROCE), "--endpoints",
             str(lb.mock.endpoints_file), "-d", "leaf-r2", "--yes", "--format", "json",
             "--run-dir", str(runs)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and proc.poll() is None:
                dirs = list(runs.iterdir())
                recs = records(dirs[0]) if dirs and (dirs[0] / "journal.jsonl").exists() else []
                if any(r["event"] == "started" for r in recs) and not dev.faults.slow:
                    lb.mock.call(lambda: setattr(dev.faults, "slow", 0.05))  # keep the change in flight
                if any(r.get("state") == "applying" for r in recs):
                    break
                time.sleep(0.005)  # poll interval
            proc.send_signal(signal.SIGTERM)
            out, _ = proc.communicate(timeout=60)
        finally:
            lb.mock.call(lambda: setattr(dev.faults, "slow", 0.0))
            if proc.poll() is None:
                proc.kill()
        assert proc.returncode == 1
        report = json.loads(out)
        assert report["ended"] == "SIGTERM"
        assert [d["state"] for d in report["devices"]] == ["rolled-back"]
        assert json.loads((Path(report["run_dir"]) / "report.json").read_text())["ended"] == "SIGTERM"
        assert lb.mock.call(lambda: sorted(dev.extra["sessions"])) == []


def test_recover_leaves_alone_a_device_that_failed_before_its_change(lab: Any, roce: Any) -> None:
    """NVUE refuses a switch where someone else has a pending revision: the journal says the change never
    began, so --recover does not touch it (their pending revision survives)."""
    from fabriccfg.push.recover import recover

    with lab(roce) as lb:
        dev = lb.mock.device("leaf-r0")
        theirs = [*dev.running, "nv set system hostname theirs"]
        lb.mock.call(lambda: dev.extra.__setitem__("pending", theirs))
        rep = lb.push(["leaf-r0"])
        assert [d.state for d in rep.devices] == ["failed"]
        assert "pending NVUE revision" in rep.devices[0].reason
        assert recover(rep.run_dir, lb.mock.endpoints).devices == {}
        assert "nv set system hostname theirs" in lb.mock.call(lambda: list(dev.extra.get("pending") or []))
