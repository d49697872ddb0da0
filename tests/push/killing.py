"""A ``fabriccfg push`` subprocess killed at a point chosen from its journal (shared by the SIGKILL test
and the fault table). Polls the journal file; the only sleeps are the poll interval and the random
part of the kill point, never a synchronisation."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fabriccfg import registry
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.mock.ssh import DeviceState


def device_states(run_dir: Path, name: str) -> list[str]:
    path = run_dir / "journal.jsonl"
    if not path.is_file():
        return []
    out = []
    for line in path.read_text().splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        rec = json.loads(line)
        if rec.get("device") == name and rec["event"] in ("started", "state"):
            out.append("started" if rec["event"] == "started" else rec["state"])
    return out


def run_dirs(base: Path) -> set[Path]:
    return set(base.iterdir()) if base.is_dir() else set()


def killed_push(inventory: Path, endpoints: Path, name: str, runs: Path, kill_after: str,
                delay: float, sig: int = signal.SIGKILL,
                seen: Callable[[list[str]], None] | None = None,
                ready: Callable[[list[str]], bool] | None = None) -> tuple[Path, bool, list[str], int]:
    """Start the push, send ``sig`` ``delay`` s after the device's ``kill_after`` record.

    ``seen``: called with the device's journal states at every poll (a test may change the mock then).
    ``ready``: when given, decides instead of ``kill_after`` (called with the states at every poll).

    Returns (run dir, whether the process was still running when signalled, the device's journal states,
    the process's exit status).
    """
    env = {**os.environ, "COLUMNS": "150"}
    runs.mkdir(parents=True, exist_ok=True)
    errlog = open(runs / "push.stderr", "wb")  # noqa: SIM115 - closed below, after the process ended
    before = run_dirs(runs)
    proc = subprocess.Popen(
        [sys.executable, "-m", "fabriccfg.cli", "push", str(inventory), "--endpoints", str(endpoints),
         "-d", name, "--yes", "--format", "json", "--run-dir", str(runs), "--timeout", "60",
         "--confirm-timeout", "120"],
        stdout=subprocess.DEVNULL, stderr=errlog, env=env)
    deadline = time.monotonic() + 30
    run_dir: Path | None = None
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            new = {d for d in run_dirs(runs) - before if d.is_dir()}
            if new:
                run_dir = new.pop()
                states = device_states(run_dir, name)
                if seen is not None:
                    seen(states)
                if (ready(states) if ready is not None else kill_after in states):
                    break
            time.sleep(0.005)  # poll interval of the journal file, not a synchronisation
        else:
            if proc.poll() is None:
                raise AssertionError(f"{name}: no {kill_after!r} record within 30 s")
        if proc.poll() is None:
            time.sleep(delay)  # the random part of the kill point
        killed = proc.poll() is None
        proc.send_signal(sig)
        proc.wait(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        errlog.close()
    if run_dir is None:
        new = {d for d in run_dirs(runs) - before if d.is_dir()}
        assert new, f"{name}: the push made no run folder"
        run_dir = new.pop()
    return run_dir, killed, device_states(run_dir, name), int(proc.returncode)


def reset(mock: MockFabric, name: str, platform: str) -> None:
    """Give the device its factory state again (pending timers of a killed run become no-ops)."""
    dev: DeviceState = mock.device(name)
    prof = registry.mock_profile(platform)
    assert prof is not None

    def do() -> None:
        for s in dict(dev.extra.get("sessions") or {}).values():
            timer = getattr(s, "timer", None)
            if timer is not None:
                timer.cancel()
        confirm = dev.extra.get("confirm")
        if confirm is not None:
            confirm.timer.cancel()
        dev.running, dev.saved = None, None
        dev.files.clear()
        dev.extra.clear()
        dev.disconnect_fired = False
        prof.PROFILE.init_state(dev)

    mock.call(do)
