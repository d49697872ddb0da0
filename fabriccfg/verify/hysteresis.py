"""Hysteresis for `watch`: a finding's shown severity changes only after N consistent rounds.

A finding's identity is *where* it is, not what its message says: ``(check, device, port, priority)``
(a storm-origin finding sits at its origin NIC or port). Each identity has a shown severity (ok when
absent). A round whose raw severity differs from the shown one starts (or continues) a run of rounds
at that new severity; the shown severity follows only when the run reaches ``up`` rounds (worse) or
``down`` rounds (better, including "gone"). Until then the last finding at the shown severity is
reported again, with ``details.hysteresis`` saying what this round saw.

With a state dir the tracks are saved after every round (``hysteresis-<scope>.json``, written
atomically) and read back when they are less than an hour old, so `watch --once` from a timer is damped
like the loop, and a restarted loop keeps its state.

Not damped, on purpose: UNKNOWN findings (no data, no baseline yet, a device that did not answer say
something about this round's data and pass through as they are), and the first verdict of a check that
had none the round before (the first round, or the round after "no baseline yet"): there is no known
state to be consistent with, so a storm that runs when watch starts is reported at once.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fabriccfg.verify.engine import RANK, CheckResult, CheckState, Finding, Report, Severity, worst

Identity = tuple[str, str | None, str | None, int | None]
DEFAULT_UP = 2
DEFAULT_DOWN = 3


def identity(f: Finding) -> Identity:
    return (f.check, f.device, f.port, f.priority)


def parse(text: str) -> tuple[int, int]:
    """'2/3' -> (2, 3): rounds to raise, rounds to lower. ValueError with a one-line message."""
    up, sep, down = text.partition("/")
    try:
        u, d = int(up), int(down)
    except ValueError:
        raise ValueError(f"--hysteresis {text!r}: write UP/DOWN rounds, e.g. 2/3 (1/1: off)") from None
    if not sep or not 1 <= u <= 100 or not 1 <= d <= 100:
        raise ValueError(f"--hysteresis {text!r}: UP and DOWN are round counts, 1-100")
    return u, d


@dataclass
class Track:
    shown: Severity
    finding: Finding | None
    """The latest finding at the shown severity (reported again while a change is pending)."""
    pending: Severity | None = None
    count: int = 0


class Hysteresis:
    """Per-identity shown state across rounds (in memory: one per watch loop)."""

    def __init__(self, up: int = DEFAULT_UP, down: int = DEFAULT_DOWN) -> None:
        self.up = up
        self.down = down
        self.tracks: dict[Identity, Track] = {}
        self.known: set[str] = set()
        """Checks that had a verdict (ok, warning or critical) in the previous round."""

    def apply(self, raw: Report) -> Report:
        passthrough = [f for f in raw.findings if f.severity == "unknown"]
        now: dict[Identity, Finding] = {}
        for f in raw.findings:
            if f.severity in ("warning", "critical"):
                prev = now.get(identity(f))
                if prev is None or RANK[f.severity] > RANK[prev.severity]:
                    now[identity(f)] = f
        for key, f in now.items():
            if key not in self.tracks:
                # a check with a verdict last round said "ok" here; otherwise there is no known state
                self.tracks[key] = Track("ok", None) if f.check in self.known else Track(f.severity, f)
        shown: list[Finding] = []
        for key in list(self.tracks):
            out = self._step(self.tracks[key], now.get(key))
            if out is not None:
                shown.append(out)
            if self.tracks[key].shown == "ok" and self.tracks[key].pending is None:
                del self.tracks[key]
        self.known = {r.check for r in raw.results if r.state in ("ok", "warning", "critical")}
        findings = passthrough + shown
        findings.sort(key=lambda f: (-RANK[f.severity], f.check, f.device or "", f.port or ""))
        by_check: dict[str, list[Finding]] = {}
        for f in findings:
            by_check.setdefault(f.check, []).append(f)
        results = [_result(r, by_check.get(r.check, [])) for r in raw.results]
        return dataclasses.replace(raw, status=worst(f.severity for f in findings), findings=findings,
                                   results=results)

    def _step(self, t: Track, f: Finding | None) -> Finding | None:
        sev: Severity = f.severity if f is not None else "ok"
        if sev == t.shown:
            t.pending, t.count = None, 0
            t.finding = f
            return f
        if sev == t.pending:
            t.count += 1
        else:
            t.pending, t.count = sev, 1
        need = self.up if RANK[sev] > RANK[t.shown] else self.down
        if t.count >= need:
            t.shown, t.finding, t.pending, t.count = sev, f, None, 0
            return f
        if t.finding is None:  # shown "ok": nothing to report while a raise is pending
            return None
        note = {"raw": sev, "rounds": t.count, "needed": need}
        return dataclasses.replace(t.finding, details={**t.finding.details, "hysteresis": note})


def _finding(d: dict[str, Any]) -> Finding:
    return Finding(d["check"], d["severity"], d.get("device"), d.get("port"), d.get("priority"),
                   d.get("value"), d.get("threshold"), d.get("hint", ""), d.get("message", ""),
                   d.get("origin"), list(d.get("path", [])), dict(d.get("details", {})))


def save(h: Hysteresis, path: Path, now: float) -> None:
    """Write the tracks atomically (a reader never sees half a file)."""
    doc = {"saved": now, "up": h.up, "down": h.down, "known": sorted(h.known),
           "tracks": [{"shown": t.shown, "pending": t.pending, "count": t.count,
                       "finding": t.finding.to_dict() if t.finding else None, "id": list(key)}
                      for key, t in h.tracks.items()]}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc), encoding="utf-8")
    tmp.replace(path)


def load(h: Hysteresis, path: Path, now: float, max_age_s: float) -> bool:
    """Restore saved tracks when the file is fresh and was written with the same UP/DOWN."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if not 0 <= now - float(doc["saved"]) <= max_age_s or (doc["up"], doc["down"]) != (h.up, h.down):
            return False
        tracks = {}
        for row in doc["tracks"]:
            c, d, p, pr = row["id"]
            tracks[(c, d, p, pr)] = Track(row["shown"], _finding(row["finding"]) if row["finding"] else None,
                                          row["pending"], int(row["count"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False  # missing or unreadable: start without history (nothing is hidden by that)
    h.tracks = tracks
    h.known = set(doc.get("known", []))
    return True


def _result(r: CheckResult, shown: list[Finding]) -> CheckResult:
    if shown:
        state: CheckState = worst(f.severity for f in shown)
    elif r.state in ("warning", "critical"):
        state = "ok"  # every raw finding of the check is still pending
    else:
        state = r.state
    return dataclasses.replace(r, state=state, findings=shown)
