"""Issue 10 §2: SIGKILL ``fabriccfg push`` mid-change on every platform, ``--recover``, and show each device
ends at its backup or its intent, never a mix.

The push runs as a real subprocess against the in-process mock fabric. The kill point comes from the
run's journal (after the device's Nth record) plus a seeded random delay; the test polls the journal
file, it never sleeps to synchronise. The judge is plain text: the mock device's running config, as the
mock itself prints it, against the backup file in the run folder and against the running config a
clean push produced (which must contain every line of the rendered intent), compared line by line
after stripping trailing whitespace, blank lines and the timestamp header lines (``!Time:``,
``## Generated at``) the devices print. The production ``same_config`` is not used.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path

import pytest
from killing import killed_push, reset

import fabriccfg
from fabriccfg import registry
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.mock.ssh import DeviceState
from fabriccfg.push import api
from fabriccfg.push.recover import recover
from fabriccfg.push.runner import RunnerOptions
from fabriccfg.render.engine import render_device

INVENTORIES = Path(fabriccfg.__file__).parent / "data" / "inventories"
CASES = [  # (inventory, device, platform)
    ("roce-lab.yaml", "leaf-r0", "cumulus-nvue"),
    ("roce-lab.yaml", "leaf-r1", "sonic"),
    ("roce-lab.yaml", "leaf-r2", "eos"),
    ("roce-lab.yaml", "leaf-r3", "nxos"),
    ("roce-lab.yaml", "gpu01", "connectx-host"),
    ("ib-lab-mqm8700.yaml", "ib8700-leaf1", "mlnxos-ib"),
    ("ib-lab-mqm8790.yaml", "sm1", "opensm-host"),
]
KILL_AFTER = ("started", "backed-up", "applying", "applied")
"""Journal states after which a kill is aimed (plus a random delay): before, at and inside the change."""
KILLS_PER_PLATFORM = 3
ATOMIC = ("eos", "nxos", "cumulus-nvue")
"""Platforms whose commit is atomic: a kill alone (before any recovery) never leaves a mix."""
SEED = int(os.environ.get("FABRICCFG_SIGKILL_SEED", "1010"))
VOLATILE = ("!Time:", "## Generated at")


# --------------------------------------------------------------------------- the judge (test-owned)
def running_text(mock: MockFabric, name: str, platform: str, files: list[str]) -> dict[str, str]:
    """The device's running config as the mock prints it, per rendered file name."""
    dev: DeviceState = mock.device(name)

    def read() -> dict[str, str]:
        if platform in ("eos", "nxos", "mlnxos-ib"):
            prof = registry.mock_profile(platform)
            assert prof is not None
            return {files[0]: prof.PROFILE.session_class(dev).show_running()}
        if platform == "cumulus-nvue":
            return {files[0]: "".join(line + "\n" for line in dev.running)}
        if platform == "sonic":
            return {files[0]: json.dumps(dev.running, indent=4, sort_keys=True) + "\n"}
        spec = registry.render(platform)
        paths = dict(spec.install_paths or {})
        return {f: dev.files.get(paths.get(f, f"/etc/fabriccfg/{f}"), "") for f in files}

    out: dict[str, str] = mock.call(read)
    return out


def norm(files: dict[str, str]) -> dict[str, list[str]]:
    return {name: [ln.rstrip() for ln in text.split("\n") if ln.strip() and not ln.startswith(VOLATILE)]
            for name, text in files.items()}


def intent_lines(platform: str, text: str) -> list[str]:
    """Lines of the rendered intent that must appear in the running config once it is applied."""
    if platform in ("cumulus-nvue",):
        return [ln.strip() for ln in text.splitlines() if ln.strip().startswith("nv set ")]
    return [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("!", "#"))]


def contains(platform: str, running: str, intent: str) -> bool:
    if platform == "sonic":
        have, want = json.loads(running), json.loads(intent)
        return all(have.get(t, {}).get(k, {}).get(f) == v
                   for t, rows in want.items() for k, row in rows.items() for f, v in row.items())
    lines = set(running.splitlines()) | {ln.strip() for ln in running.splitlines()}
    return all(ln in lines or ln.strip() in lines for ln in intent_lines(platform, intent))


# --------------------------------------------------------------------------- mock fabrics
@pytest.fixture(scope="module")
def mocks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, MockFabric]]:
    started: dict[str, MockFabric] = {}
    try:
        for inv in sorted({c[0] for c in CASES}):
            fab = load_fabric(INVENTORIES / inv)
            m = MockFabric(fab, workdir=tmp_path_factory.mktemp("mock"), snmp=False, processes=1)
            started[inv] = m.start()
        yield started
    finally:
        for m in started.values():
            m.stop()


@pytest.mark.parametrize(("inventory", "name", "platform"), CASES, ids=[c[2] for c in CASES])
def test_sigkill_mid_push_then_recover_leaves_backup_or_intent(
        mocks: dict[str, MockFabric], tmp_path: Path, inventory: str, name: str, platform: str) -> None:
    mock = mocks[inventory]
    inv = INVENTORIES / inventory
    rendered = dict(render_device(mock.fabric, name).files)
    files = sorted(rendered)

    # reference: the factory config, and the running config after a clean push of the intent
    reset(mock, name, platform)
    factory = running_text(mock, name, platform, files)
    jobs = api.plan_jobs(mock.fabric, mock.endpoints, [name])
    rep = api.push(mock.fabric, jobs, run_base=tmp_path / "ref", runner=RunnerOptions(workers=1, timeout=30),
                   confirm_timeout=120)
    assert [d.state for d in rep.devices] == ["applied"], rep.devices[0].reason
    intended = running_text(mock, name, platform, files)
    for f in files:
        assert contains(platform, intended[f], rendered[f]), f"{name}: a clean push does not hold the intent"
    assert norm(intended) != norm(factory)

    rng = random.Random(f"{SEED}-{platform}")
    outcomes = []
    for k in range(KILLS_PER_PLATFORM):
        reset(mock, name, platform)
        kill_after = KILL_AFTER[(k + rng.randrange(len(KILL_AFTER))) % len(KILL_AFTER)]
        delay = rng.uniform(0.0, 0.08)
        runs = tmp_path / f"runs{k}"
        run_dir, killed, states, _ = killed_push(inv, mock.endpoints_file, name, runs, kill_after, delay)
        assert (run_dir / "journal.jsonl").is_file()
        backup_files = {f: (run_dir / "backups" / name / f).read_text() for f in files
                        if (run_dir / "backups" / name / f).is_file()}
        backup = backup_files if len(backup_files) == len(files) else factory
        assert norm(backup) == norm(factory), f"{name}: the backup file is not the factory config"

        def where() -> str:
            now = norm(running_text(mock, name, platform, files))
            return "backup" if now == norm(backup) else "intent" if now == norm(intended) else "MIX"

        killed_at = where()
        if platform in ATOMIC:
            assert killed_at != "MIX", f"{name}: the kill alone left a partial config (journal {states})"
        out = recover(run_dir, mock.endpoints)
        at = where()
        outcomes.append((kill_after, round(delay, 3), killed, states[-1] if states else "-", killed_at, at,
                         {n: d.state for n, d in out.devices.items()}))
        assert at != "MIX", (f"{name}: after kill #{k} ({kill_after}+{delay:.3f}s, journal {states}) and "
                             f"--recover the running config is neither backup nor intent: {outcomes[-1]}")
        if name in out.devices:
            expect = "rolled-back" if at == "backup" else "applied"
            assert out.devices[name].state == expect, (out.devices[name].reason, outcomes[-1])
            report = json.loads((run_dir / "report.json").read_text())
            dev = next(d for d in report["devices"] if d["name"] == name)
            assert dev["state"] == expect and dev["recovered"] is True
        again = recover(run_dir, mock.endpoints)  # idempotent: nothing left in flight
        assert again.devices == {}
        if platform in ("eos", "nxos"):
            left = mock.call(lambda: sorted(mock.device(name).extra["sessions"]))
            assert left == [], f"{name}: configuration sessions left behind: {left}"
    assert any(o[2] for o in outcomes), f"{name}: no kill landed before the push ended: {outcomes}"
    print(f"{platform}: {outcomes}")


def test_the_judge_sees_a_partial_config(mocks: dict[str, MockFabric], tmp_path: Path) -> None:
    """Negative control: one intent line applied by hand (what a line-by-line push killed after one
    line leaves) is neither the backup nor the intent to the judge above."""
    from fabriccfg.mock.confmode import ConfigEditor

    mock, name, platform = mocks["ib-lab-mqm8700.yaml"], "ib8700-leaf1", "mlnxos-ib"
    files = sorted(render_device(mock.fabric, name).files)
    reset(mock, name, platform)
    factory = norm(running_text(mock, name, platform, files))
    jobs = api.plan_jobs(mock.fabric, mock.endpoints, [name])
    rep = api.push(mock.fabric, jobs, run_base=tmp_path, runner=RunnerOptions(workers=1, timeout=30))
    assert [d.state for d in rep.devices] == ["applied"]
    intended = norm(running_text(mock, name, platform, files))
    first = next(c for c in rep.devices[0].commands if c.strip() and not c.startswith("no "))
    reset(mock, name, platform)
    prof = registry.mock_profile(platform)
    assert prof is not None
    mock.call(lambda: ConfigEditor(prof.GRAMMAR, mock.device(name).running).apply(first.strip()))
    partial = norm(running_text(mock, name, platform, files))
    assert partial not in (factory, intended)
