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
