"""The run journal: ``runs/<UTC ts>/journal.jsonl``, one JSON record per line, append-only, fsynced.

Why: a push killed with SIGKILL runs no handler, so the only record of what was in flight is what was
on disk before the kill. Every device writes a ``started`` record *before* its change begins (its
platform, transaction kind, tag, backup and intent paths and digests) and a ``state`` record after
every state change; each record is flushed to the disk (``fsync``; the folder too when the file is
created) before the step it announces runs. ``fabriccfg push --recover RUN_DIR`` and
:func:`fabriccfg.push.report.report_from_journal` read it back; a torn last line (the kill hit
mid-write) is ignored.

Records (``event``): ``run-start``, ``workers`` (pids of push worker processes, before they get a
device), ``share`` (the devices one worker process is given), ``started``, ``state``, ``result`` (a
device's final ``DeviceResult``), ``run-end``, ``recover-start``, ``recovered``, ``recover-end``.
Worker processes append to the same file: each record is one ``write`` to a file opened ``O_APPEND``,
so records never interleave.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fabriccfg import secrets

JOURNAL = "journal.jsonl"

IN_FLIGHT = ("started", "backed-up", "applying", "applied", "verified", "confirming", "committed",
             "rolling-back")
"""Device states after which a killed run leaves the device to ``--recover``."""
DONE = ("unchanged", "applied", "rolled-back")
"""Final result states that need no recovery."""


def digest(files: Mapping[str, str]) -> str:
    """sha256 over ``{file name: text}`` (names sorted): what the journal records of a config."""
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode("utf-8") + b"\0" + files[name].encode("utf-8") + b"\0")
    return h.hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """Append records to ``RUN_DIR/journal.jsonl`` (thread-safe); durable once ``write`` returns."""

    def __init__(self, run_dir: str | Path) -> None:
        self.path = Path(run_dir) / JOURNAL
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        created = not self.path.exists()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        if created:
            _fsync_dir(self.path.parent)

    def write(self, event: str, **fields: Any) -> None:
        """Append one record and fsync it (secrets redacted, like every file of a run folder)."""
        self.write_many([{"event": event, **fields}])

    def write_many(self, recs: list[dict[str, Any]]) -> None:
        """Append records (each with an ``event``) in one write and one fsync.

        The fsync runs outside the lock: workers' records still go in whole lines and in order, and
        their fsyncs overlap (one disk flush covers every record written before it).
        """
        now = round(time.time(), 3)
        tree = [secrets.redact_tree({"t": now, **r}) for r in recs]
        lines = [secrets.redact(json.dumps(t, separators=(",", ":"))) + "\n" for t in tree]
        data = "".join(lines).encode("utf-8")
        with self._lock:
            fd = self._fd
            if fd is None:
                return
            os.write(fd, data)
            self._pending += 1
        try:
            os.fsync(fd)  # close() waits for pending syncs, so fd stays open until this returns
        finally:
            with self._lock:
                self._pending -= 1
                if self._pending == 0:
                    self._idle.notify_all()

    def state(self, device: str, *states: str, **fields: Any) -> None:
        """One ``state`` record per state in ``states`` (same fields), in one write."""
        self.write_many([{"event": "state", "device": device, "state": s, **fields} for s in states])

    def close(self) -> None:
        with self._lock:
            self._idle.wait_for(lambda: self._pending == 0, timeout=10.0)
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)
                self._fd = None


def records(run_dir: str | Path) -> list[dict[str, Any]]:
    """Every complete record of a run's journal (a torn or garbled line is skipped)."""
    path = Path(run_dir) / JOURNAL
    out: list[dict[str, Any]] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.endswith("\n"):
                break  # the kill hit mid-write: this record never completed
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(rec, dict) and isinstance(rec.get("event"), str):
                out.append(rec)
    return out


@dataclass
class DeviceTrail:
    """What the journal says about one device."""

    name: str
    platform: str = ""
    target: bool = True
    started: dict[str, Any] | None = None
    """The ``started`` record (None: the device's change never began)."""
    states: list[dict[str, Any]] = field(default_factory=list)
    result: dict[str, Any] | None = None
    """The push's final ``result`` record (None: the run ended before the device finished)."""
    recovered: dict[str, Any] | None = None
    """The last ``recovered`` record (``--recover``'s outcome)."""

    @property
    def last_state(self) -> str:
        return str(self.states[-1]["state"]) if self.states else ("started" if self.started else "")

    @property
    def last_in_flight(self) -> str:
        """The last state that left the change in flight (``failed`` after a skipped rollback is not one)."""
        for rec in reversed(self.states):
            if rec.get("state") in IN_FLIGHT:
                return str(rec["state"])
        return "started" if self.started else ""

    @property
    def restore(self) -> dict[str, Any]:
        """The transaction's restore fields from the latest state record that carries them."""
        for rec in reversed(self.states):
            if isinstance(rec.get("restore"), dict):
                return dict(rec["restore"])
        return {}

    @property
    def began(self) -> bool:
        """True once the on-device restore point existed (``backed-up``): a change may be partial."""
        return any(rec.get("state") == "backed-up" for rec in self.states)

    @property
    def needs_recovery(self) -> bool:
        """True when the device's change began and neither the push nor a recovery finished it.

        A device that failed before its restore point existed (e.g. NVUE refusing a switch where someone
        else has a pending revision) never changed and is left alone.
        """
        if self.started is None:
            return False
        if self.recovered is not None:
            return str(self.recovered.get("state")) not in DONE
        if self.result is not None:
            return self.began and str(self.result.get("state")) not in DONE
        return True


@dataclass
class RunTrail:
    start: dict[str, Any]
    devices: dict[str, DeviceTrail]
    end: dict[str, Any] | None
    records: list[dict[str, Any]]

    def in_flight(self) -> list[DeviceTrail]:
        return [d for d in self.devices.values() if d.needs_recovery]


class JournalError(Exception):
    """The run folder has no usable journal (message is safe to print)."""


def read_run(run_dir: str | Path) -> RunTrail:
    """The journal of ``run_dir`` folded per device; raises :class:`JournalError`."""
    path = Path(run_dir) / JOURNAL
    if not path.is_file():
        raise JournalError(f"{run_dir}: no {JOURNAL} here (not a push run folder, or older than journals)")
    recs = records(run_dir)
    start = next((r for r in recs if r["event"] == "run-start"), None)
    if start is None:
        raise JournalError(f"{path}: no run-start record")
    devices: dict[str, DeviceTrail] = {}
    for d in start.get("devices", []):
        if isinstance(d, dict) and isinstance(d.get("name"), str):
            devices[d["name"]] = DeviceTrail(d["name"], str(d.get("platform", "")),
                                             bool(d.get("target", True)))
    end = None
    for rec in recs:
        name = rec.get("device")
        trail = devices.setdefault(name, DeviceTrail(name)) if isinstance(name, str) else None
        ev = rec["event"]
        if ev == "run-end":
            end = rec
        elif trail is None:
            continue
        elif ev == "started":
            trail.started, trail.states, trail.result, trail.recovered = rec, [], None, None
        elif ev == "state":
            trail.states.append(rec)
        elif ev == "result":
            trail.result = rec
        elif ev == "recovered":
            trail.recovered = rec
    return RunTrail(start, devices, end, recs)


def iter_events(recs: list[dict[str, Any]], event: str) -> Iterator[dict[str, Any]]:
    return (r for r in recs if r.get("event") == event)
