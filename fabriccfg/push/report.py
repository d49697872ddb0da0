"""The record of a push or live-diff run: ``runs/<UTC timestamp>/`` with ``report.json``, backups, logs.

Everything written here passes through :func:`fabriccfg.secrets.redact` first: a run folder is
meant to be attached to a ticket or kept as a CI artefact.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fabriccfg import secrets
from fabriccfg.push.journal import read_run

State = Literal["unchanged", "applied", "rolled-back", "failed", "skipped"]
STATES: tuple[State, ...] = ("unchanged", "applied", "rolled-back", "failed", "skipped")
GOOD_STATES: frozenset[str] = frozenset({"unchanged", "applied"})


@dataclass
class DeviceResult:
    """One device's outcome (``state`` is final once the runner reports it)."""

    name: str
    platform: str
    state: State = "skipped"
    target: bool = True
    """False for devices that can never be push targets (no transaction, e.g. MQM8790, or nothing rendered):
    reported, not counted in the exit code, and folded into one line by the displays."""
    reason: str = ""
    """Why a device was skipped, or the error that failed / rolled it back (safe to print)."""
    changed: bool | None = None
    """Whether running differed from intent (None: never fetched)."""
    diff: str = ""
    commands: list[str] = field(default_factory=list)
    patch: list[dict[str, Any]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    backup: list[str] = field(default_factory=list)
    """Run-folder paths of the backed-up running config files."""
    session_log: str | None = None
    notes: list[str] = field(default_factory=list)
    rollback_verified: bool | None = None
    """After a rollback: True when the re-fetched running config equals the backup."""
    skip_label: str = ""
    """For a device that is not a target: why, in a few words (displays only; not in ``report.json``)."""
    in_flight: str | None = None
    """The journal's last state when the run ended before this device finished (its change may be
    partial until ``push --recover``); None once the device reached a final state."""
    recovered: bool = False
    """True when ``state`` is the outcome of ``push --recover`` rather than of the push itself."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["skip_label"]  # display-only: ``reason`` says it in full
        # ``error``: the failure (failed / rolled-back); ``reason`` also explains skips and dry-runs
        out["error"] = self.reason if self.state in ("failed", "rolled-back") else None
        return out

    def journal_dict(self) -> dict[str, Any]:
        """:meth:`to_dict` plus what the displays need (for the journal's ``result`` record)."""
        out = self.to_dict()
        out["skip_label"] = self.skip_label
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DeviceResult:
        known = {f.name for f in fields(cls)}
        res = cls(**{k: v for k, v in data.items() if k in known})
        if res.state not in STATES:
            res.state = "failed"
        return res


def utc_stamp(t: float | None = None) -> str:
    return datetime.fromtimestamp(time.time() if t is None else t, UTC).strftime("%Y%m%dT%H%M%SZ")


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_run_dir(base: str | Path = "runs") -> Path:
    """Create ``base/<UTC timestamp>/`` (a suffix when two runs start in the same second), mode 0700."""
    base = Path(base)
    base.mkdir(parents=True, exist_ok=True)
    stamp = utc_stamp()
    for n in range(1, 1000):
        path = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        return path
    raise OSError(f"cannot create a run folder under {base}")


def write_text(path: Path, text: str) -> None:
    """Write ``text`` redacted, atomically, readable by the owner only."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secrets.redact(text))
    tmp.replace(path)


def safe_part(name: str) -> str:
    """A file-name-safe form of a device or file name (never escapes the run folder)."""
    out = "".join(c if c.isalnum() or c in "-_.@" else "_" for c in name)
    return out.lstrip(".") or "_"


@dataclass
class RunReport:
    command: str
    fabric: str
    inventory: str
    run_dir: str
    dry_run: bool = False
    started: float = field(default_factory=time.time)
    finished: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    devices: list[DeviceResult] = field(default_factory=list)
    interrupted: bool = False
    stopped: str = ""
    """Why the runner stopped starting new devices (failure budget, failed batch, Ctrl-C), if it did."""
    warnings: list[str] = field(default_factory=list)
    ended: str = "completed"
    """How the run ended: ``completed``, ``interrupted``, ``SIGTERM``, ``exception: ...`` or ``unknown``
    (no ``run-end`` record: the process was killed)."""
    recoveries: list[dict[str, Any]] = field(default_factory=list)
    """One entry per ``push --recover``: when, and each recovered device's final state."""

    @property
    def exit_code(self) -> int:
        """0 when every targeted device is unchanged or applied, 1 otherwise."""
        return 0 if all(d.state in GOOD_STATES for d in self.devices if d.target) else 1

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {s: 0 for s in STATES}
        for d in self.devices:
            if d.target:
                counts[d.state] += 1
        return counts

    def to_dict(self) -> dict[str, Any]:
        from fabriccfg import __version__

        finished = self.finished or time.time()
        return {
            "tool": "fabriccfg",
            "version": __version__,
            "command": self.command,
            "fabric": self.fabric,
            "inventory": self.inventory,
            "run_dir": self.run_dir,
            "dry_run": self.dry_run,
            "started": iso(self.started),
            "finished": iso(finished),
            "duration_s": round(finished - self.started, 3),
            "options": self.options,
            "interrupted": self.interrupted,
            "stopped": self.stopped,
            "ended": self.ended,
            "warnings": self.warnings,
            "summary": self.summary(),
            "exit_code": self.exit_code,
            "devices": [d.to_dict() for d in self.devices],
            "recoveries": self.recoveries,
        }

    def to_json(self) -> str:
        # redact values before encoding (JSON escaping could hide a secret from a text search) and after
        tree = secrets.redact_tree(self.to_dict())
        return secrets.redact(json.dumps(tree, indent=2, sort_keys=False)) + "\n"

    def write(self) -> Path:
        path = Path(self.run_dir) / "report.json"
        write_text(path, self.to_json())
        return path


def report_from_journal(run_dir: str | Path) -> RunReport:
    """The run's report, rebuilt from its journal alone (also after a kill: devices without a final
    result are ``failed`` with ``in_flight`` set to the state they were in)."""
    trail = read_run(run_dir)
    start = trail.start
    rep = RunReport(command=str(start.get("command", "push")), fabric=str(start.get("fabric", "")),
                    inventory=str(start.get("inventory", "")), run_dir=str(run_dir),
                    dry_run=bool(start.get("dry_run", False)), started=float(start.get("t", time.time())),
                    options=dict(start.get("options") or {}))
    end = trail.end
    if end is not None:
        rep.finished = float(end.get("t", time.time()))
        rep.interrupted = bool(end.get("interrupted", False))
        rep.stopped = str(end.get("stopped", ""))
        rep.warnings = [str(w) for w in end.get("warnings", [])]
        rep.ended = str(end.get("ended", "completed"))
    else:
        rep.finished = float(trail.records[-1].get("t", time.time())) if trail.records else None
        rep.ended = "unknown"
        rep.warnings = ["the run ended without a run-end record (killed?): devices in flight are listed "
                        f"with in_flight; run 'fabriccfg push --recover {run_dir}'"]
    for dev in trail.devices.values():
        if dev.recovered is not None and isinstance(dev.recovered.get("result"), dict):
            res = DeviceResult.from_dict(dev.recovered["result"])
            res.recovered = True
        elif dev.result is not None and isinstance(dev.result.get("result"), dict):
            res = DeviceResult.from_dict(dev.result["result"])
        else:
            res = DeviceResult(dev.name, dev.platform, target=dev.target)
            if dev.started is not None:
                res.state = "failed"
                res.in_flight = dev.last_in_flight
                res.backup = [str(p) for p in dev.started.get("backup", [])]
                res.reason = (f"the run ended while this device was {dev.last_in_flight}: its change may be "
                              f"partial; run 'fabriccfg push --recover {run_dir}'")
            else:
                res.state = "skipped"
                res.reason = f"not started: the run ended ({rep.ended})"
        if dev.result is not None and res.in_flight is None and dev.needs_recovery and not res.recovered:
            res.in_flight = dev.last_in_flight
        rep.devices.append(res)
    for r in trail.records:
        if r.get("event") == "recover-end":
            rep.recoveries.append({"at": iso(float(r.get("t", 0))), "devices": dict(r.get("devices") or {}),
                                   "exit_code": r.get("exit_code")})
    return rep
