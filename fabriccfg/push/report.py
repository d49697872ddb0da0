"""The record of a push or live-diff run: ``runs/<UTC timestamp>/`` with ``report.json``, backups, logs.

Everything written here passes through :func:`fabriccfg.secrets.redact` first: a run folder is
meant to be attached to a ticket or kept as a CI artefact.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from fabriccfg import secrets

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

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        del out["skip_label"]  # display-only: ``reason`` says it in full
        # ``error``: the failure (failed / rolled-back); ``reason`` also explains skips and dry-runs
        out["error"] = self.reason if self.state in ("failed", "rolled-back") else None
        return out


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
            "warnings": self.warnings,
            "summary": self.summary(),
            "exit_code": self.exit_code,
            "devices": [d.to_dict() for d in self.devices],
        }

    def to_json(self) -> str:
        # redact values before encoding (JSON escaping could hide a secret from a text search) and after
        return secrets.redact(json.dumps(_redacted(self.to_dict()), indent=2, sort_keys=False)) + "\n"

    def write(self) -> Path:
        path = Path(self.run_dir) / "report.json"
        write_text(path, self.to_json())
        return path


def _redacted(obj: Any) -> Any:
    if isinstance(obj, str):
        return secrets.redact(obj)
    if isinstance(obj, dict):
        return {k: _redacted(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_redacted(v) for v in obj]
    return obj
