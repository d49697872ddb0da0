"""A problem found in an inventory, with a stable rule id and a file position."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Finding:
    rule: str
    severity: Severity
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    path: tuple[str | int, ...] = field(default=(), compare=False)

    def format(self) -> str:
        """``file:line:col: severity[rule]: message`` (the compiler convention editors understand)."""
        return f"{self.file}:{self.line}:{self.col}: {self.severity}[{self.rule}]: {self.message}"

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["path"] = ".".join(str(p) for p in self.path)
        return out


def one_per_profile(groups: Iterable[list[Finding]]) -> list[Finding]:
    """One finding per group of the same mistake repeated by every device using a profile: the first,
    with how many more devices share it."""
    out: list[Finding] = []
    for same in groups:
        first = same[0]
        if len(same) > 1:
            first = dataclasses.replace(
                first, message=f"{first.message} (and {len(same) - 1} more devices using the same profile)"
            )
        out.append(first)
    return out


def has_errors(findings: list[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def cap(findings: list[Finding], limit: int) -> tuple[list[Finding], int]:
    """At most ``limit`` findings (0: all), errors first, back in file order; and how many were left out.

    A broken 16 MB file can hold a million mistakes: nobody reads past the first screenful.
    """
    if limit <= 0 or len(findings) <= limit:
        return list(findings), 0
    errors = [f for f in findings if f.severity == "error"]
    others = [f for f in findings if f.severity != "error"]
    kept = errors[:limit] if len(errors) >= limit else errors + others[:limit - len(errors)]
    keep = {id(f) for f in kept}
    return [f for f in findings if id(f) in keep], len(findings) - len(kept)


def capped_lines(findings: list[Finding], file: str, limit: int) -> list[str]:
    """``file:line:col: ...`` for the first ``limit`` findings, then one ``... and N more`` line."""
    shown, more = cap(findings, limit)
    out = [f.format() for f in shown]
    if more:
        hidden = [f for f in findings if id(f) not in {id(s) for s in shown}]
        errors = sum(f.severity == "error" for f in hidden)
        out.append(f"{file}: ... and {more} more ({errors} error(s), {more - errors} warning(s)) not "
                   "shown; --max-errors 0 shows all")
    return out


PathT = tuple[str | int, ...]


@dataclass
class Source:
    """Where each value of a loaded inventory came from."""

    file: str
    positions: dict[PathT, tuple[int, int]] = field(default_factory=dict)

    def locate(self, path: PathT) -> tuple[int, int]:
        """Position of ``path``, or of its closest ancestor that has one."""
        for n in range(len(path), -1, -1):
            pos = self.positions.get(tuple(path[:n]))
            if pos is not None:
                return pos
        return (1, 1)

    def finding(self, rule: str, severity: str, message: str, path: PathT = ()) -> Finding:
        line, col = self.locate(path)
        return Finding(rule, severity, message, self.file, line, col, tuple(path))  # type: ignore[arg-type]
