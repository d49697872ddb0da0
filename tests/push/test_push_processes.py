"""Issue 14: ``push --processes P`` spreads the devices over worker processes and still keeps one coherent
record; a worker or the parent killed mid-change still leaves every device at its backup or its intent.

The pushes run against the in-process mock fabric; the kill tests run a real ``fabriccfg push``
subprocess and aim the SIGKILL from its journal and the mock's command log (polled, never slept on).
The judge is the mock device's running config as the mock prints it (``test_push_sigkill``'s helpers),
compared with the backup file in the run folder and with the rendered intent, never ``same_config``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_push_sigkill import contains, norm, running_text

import fabriccfg
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.push import api
from fabriccfg.push.journal import Journal, records
from fabriccfg.push.recover import RecoverError, recover
from fabriccfg.push.report import report_from_journal
from fabriccfg.push.runner import RunnerOptions
from fabriccfg.render.engine import render_device

INVENTORY = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"
NAMES = ["leaf-r0", "leaf-r1", "leaf-r2", "leaf-r3"]
"""Cumulus NVUE, SONiC, EOS, NX-OS: two per worker process."""
VICTIM = "leaf-r3"
SLOW = 0.1
"""Seconds the victim waits after each line once its change began: the kill lands mid-change."""


@pytest.fixture
def mock(tmp_path: Path) -> Iterator[MockFabric]:
    with MockFabric(load_fabric(INVENTORY), workdir=tmp_path / "mock", snmp=False, processes=1) as m:
        yield m


def where(mock: MockFabric, run_dir: Path, name: str) -> str:
    """``backup``, ``intent`` or ``MIX``: the device's running config against the run's backup file and
    the rendered intent (every intent line present)."""
    dev = mock.fabric.devices[name]
    rendered = dict(render_device(mock.fabric, name).files)
    files = sorted(rendered)
    now = running_text(mock, name, dev.platform, files)
    backup = {f: (run_dir / "backups" / name / f).read_text() for f in files}
    if norm(now) == norm(backup):
        return "backup"
    if all(contains(dev.platform, now[f], rendered[f]) for f in files):
        return "intent"
    return "MIX"


@contextlib.contextmanager
def push_cli(mock: MockFabric, runs: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``fabriccfg push --processes 2`` as a child process; killed on the way out if it still runs."""
    runs.mkdir(parents=True, exist_ok=True)
    args = [sys.executable, "-m", "fabriccfg.cli", "push", str(INVENTORY), "--endpoints",
            str(mock.endpoints_file), "--yes", "--format", "json", "--run-dir", str(runs), "--processes", "2",
            "--workers", "4", "--timeout", "60", "--confirm-timeout", "120"]
    for name in NAMES:
        args += ["-d", name]
    with open(runs / "push.stderr", "wb") as err:
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err,
                                env={**os.environ, "COLUMNS": "150"})
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(10)


def journal(runs: Path) -> tuple[Path | None, list[dict[str, Any]]]:
    dirs = [d for d in runs.iterdir() if d.is_dir()] if runs.is_dir() else []
    if not dirs or not (dirs[0] / "journal.jsonl").is_file():
        return None, []
    return dirs[0], records(dirs[0])


def states(recs: list[dict[str, Any]], name: str) -> list[str]:
    return [r["state"] if r["event"] == "state" else r["event"] for r in recs
            if r.get("device") == name and r["event"] in ("started", "state")]


def kill_mid_change(mock: MockFabric, proc: subprocess.Popen[bytes], runs: Path,
                    whom: str) -> tuple[Path, int, list[int]]:
    """Once the victim has taken 3 lines of its change, SIGKILL ``whom`` (``worker``: the process pushing
    the victim; ``parent``: the push itself). Returns (run dir, the killed pid, the worker pids)."""
    dev = mock.device(VICTIM)
    mark: list[int] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        assert proc.poll() is None, (runs / "push.stderr").read_text()[-2000:]
        run_dir, recs = journal(runs)
        seen = states(recs, VICTIM)
        if "started" in seen and not dev.faults.slow:
            mock.call(lambda: setattr(dev.faults, "slow", SLOW))
        if "applying" in seen:
            if not mark:
                mark.append(mock.call(lambda: len(dev.log)))
            elif mock.call(lambda: len(dev.log)) >= mark[0] + 3:
                assert run_dir is not None
                workers = [p for r in recs if r["event"] == "workers" for p in r["pids"]]
                share = next(r["pid"] for r in recs if r["event"] == "share" and VICTIM in r["devices"])
                pid = share if whom == "worker" else proc.pid
                os.kill(pid, signal.SIGKILL)
                mock.call(lambda: setattr(dev.faults, "slow", 0.0))
                return run_dir, pid, workers
        time.sleep(0.005)  # poll interval of the journal file, not a synchronisation
    seen = states(journal(runs)[1], VICTIM)
    raise AssertionError(f"{VICTIM} never reached 3 lines into its change: {seen}")


def test_two_processes_push_each_device_once_into_one_journal(mock: MockFabric, tmp_path: Path) -> None:
    fabric = mock.fabric
    jobs = api.plan_jobs(fabric, mock.endpoints, list(fabric.devices))
    targets = [j.name for j in jobs if j.target]
    assert len(targets) >= 8
    rep = api.push(fabric, jobs, run_base=tmp_path / "runs", confirm_timeout=60,
                   runner=RunnerOptions(workers=5, timeout=60, processes=2))
    assert rep.options["processes"] == 2
    assert {d.name: d.state for d in rep.devices if d.target} == dict.fromkeys(targets, "applied")
    run_dir = Path(rep.run_dir)
    recs = records(run_dir)
    events = Counter(r["event"] for r in recs)
    assert events["run-start"] == 1 and events["run-end"] == 1
    pids = [p for r in recs if r["event"] == "workers" for p in r["pids"]]
    assert len(pids) == 2 and os.getpid() not in pids
    shares = [r for r in recs if r["event"] == "share"]
    assert sorted(r["pid"] for r in shares) == sorted(pids)
    assert sum(r["threads"] for r in shares) == 5  # --workers is the run's total, split, never added to
    given = [n for r in shares for n in r["devices"]]
    assert sorted(given) == sorted(targets)  # disjoint and complete
    for name in targets:  # one started and one result per device, its states in transaction order
        assert [r["event"] for r in recs if r.get("device") == name and r["event"] != "state"] == \
            ["started", "result"], name
        seen = states(recs, name)
        assert seen[:2] == ["started", "backed-up"] and seen[-1] == "committed", (name, seen)
        assert where(mock, run_dir, name) == "intent", name
    again = api.push(fabric, api.plan_jobs(fabric, mock.endpoints, list(fabric.devices)),
                     run_base=tmp_path / "runs", runner=RunnerOptions(workers=6, timeout=60, processes=2))
    assert {d.state for d in again.devices if d.target} == {"unchanged"}


def test_a_failed_batch_stops_later_batches_across_processes(tmp_path: Path) -> None:
    fabric = load_fabric(INVENTORY)
    with MockFabric(fabric, workdir=tmp_path / "mock", snmp=False, processes=1,
                    faults=["leaf-r1:unreachable"]) as m:
        rep = api.push(fabric, api.plan_jobs(fabric, m.endpoints, NAMES), run_base=tmp_path / "runs",
                       runner=RunnerOptions(workers=2, timeout=60, processes=2, batch=2))
    got = {d.name: (d.state, d.reason) for d in rep.devices}
    assert got["leaf-r0"][0] == "applied" and got["leaf-r1"][0] == "failed"
    for name in ("leaf-r2", "leaf-r3"):
        assert got[name] == ("skipped", "not started: batch 1 failed (1 failure(s), budget 0); later batches "
                                        "not started"), got[name]
    assert rep.stopped.startswith("batch 1 failed")


def test_a_check_that_cannot_go_to_a_worker_keeps_the_push_in_one_process(mock: MockFabric,
                                                                          tmp_path: Path) -> None:
    rep = api.push(mock.fabric, api.plan_jobs(mock.fabric, mock.endpoints, NAMES), run_base=tmp_path / "runs",
                   runner=RunnerOptions(workers=4, timeout=60, processes=2),
                   post_push_checks=[lambda ctx: []])
    assert rep.options["processes"] == 1
    assert any("pushed in one process, not 2" in w for w in rep.warnings), rep.warnings
    assert {d.state for d in rep.devices} == {"applied"}
    assert not [r for r in records(Path(rep.run_dir)) if r["event"] == "workers"]


def test_a_worker_killed_mid_change_leaves_its_devices_at_backup_or_intent(mock: MockFabric,
                                                                          tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with push_cli(mock, runs) as proc:
        run_dir, killed, workers = kill_mid_change(mock, proc, runs, "worker")
        code = proc.wait(120)
    assert killed in workers and killed != proc.pid
    assert code in (0, 1), (runs / "push.stderr").read_text()[-2000:]
    report = json.loads((run_dir / "report.json").read_text())  # the parent lived: it wrote the report
    assert report["ended"] == "completed" and report["exit_code"] == code
    devices = {d["name"]: d for d in report["devices"]}
    victim = devices[VICTIM]
    assert victim["state"] in ("rolled-back", "applied") and victim["recovered"] is True, victim
    assert f"push worker process {killed} died (SIGKILL)" in victim["reason"], victim["reason"]
    for name in NAMES:
        at = where(mock, run_dir, name)
        d = devices[name]
        assert d["in_flight"] is None, d
        if d["state"] == "rolled-back":
            assert at == "backup", (name, d["reason"])
        elif d["state"] == "applied":
            assert at == "intent", (name, d["reason"])
        else:  # a device the dead worker never started
            assert d["state"] == "skipped" and at == "backup" and "died (SIGKILL)" in d["reason"], d
    assert recover(run_dir, mock.endpoints).devices == {}  # nothing was left in flight


def test_the_parent_killed_mid_change_makes_its_workers_roll_back_and_exit(mock: MockFabric,
                                                                           tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    with push_cli(mock, runs) as proc:
        run_dir, killed, workers = kill_mid_change(mock, proc, runs, "parent")
        assert proc.wait(30) == -signal.SIGKILL and killed == proc.pid
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and any(_alive(p) for p in workers):
        time.sleep(0.05)  # poll for the workers' exit, not a synchronisation
    assert not any(_alive(p) for p in workers), "the workers outlived their parent"
    recs = records(run_dir)
    results = {r["device"]: r["state"] for r in recs if r["event"] == "result"}
    assert results.get(VICTIM) == "rolled-back", (results, states(recs, VICTIM))  # journaled by its worker
    assert not (run_dir / "report.json").exists()
    report = report_from_journal(run_dir)  # the workers finished every device they had: none in flight
    assert report.ended == "unknown"
    for d in report.devices:
        at = where(mock, run_dir, d.name) if (run_dir / "backups" / d.name).is_dir() else "backup"
        assert d.in_flight is None and d.state in ("rolled-back", "applied", "skipped"), d
        assert at == ("intent" if d.state == "applied" else "backup"), (d.name, d.state, d.reason)
    assert recover(run_dir, mock.endpoints).devices == {}


def test_recover_waits_for_a_live_worker_process(tmp_path: Path) -> None:
    journal_ = Journal(tmp_path)
    journal_.write("run-start", command="push", pid=2**22 + 7, devices=[{"name": "leaf-r0"}])
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        journal_.write("workers", pids=[sleeper.pid])
        journal_.write("started", device="leaf-r0", platform="cumulus-nvue", backup=[], intent=[])
        journal_.close()
        with pytest.raises(RecoverError, match=f"worker process.*pid {sleeper.pid}"):
            recover(tmp_path, {})
    finally:
        sleeper.kill()
        sleeper.wait(10)
    out = recover(tmp_path, {})  # the worker is gone: recovery proceeds (here: no endpoint to reach)
    assert out.devices["leaf-r0"].state == "failed"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False
