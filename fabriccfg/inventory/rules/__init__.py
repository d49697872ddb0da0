"""Fabric-wide rules: checks that relate several objects of a validated :class:`Fabric`.

A rule is a function registered with :func:`rule`; it yields :class:`Issue` objects naming the
data path to blame. ``run_rules`` turns them into positioned :class:`Finding` objects. Rule
families live in sibling modules (``lossless``, ``ib``, ``topology``, ``names`` ...), each
imported below so registering a rule is all it takes to ship one.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fabriccfg.inventory.findings import Finding, Severity, one_per_profile

if TYPE_CHECKING:
    from fabriccfg.inventory.findings import Source
    from fabriccfg.inventory.models import Fabric

PathT = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Issue:
    message: str
    path: PathT = ()
    severity: Severity | None = None  # overrides the rule's default


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    severity: Severity
    summary: str
    check: Callable[[Fabric], Iterable[Issue]]


RULES: dict[str, Rule] = {}


def rule(
    rule_id: str, severity: Severity, summary: str
) -> Callable[[Callable[[Fabric], Iterable[Issue]]], Callable[[Fabric], Iterable[Issue]]]:
    """Register a fabric-wide rule under a stable id."""

    def deco(fn: Callable[[Fabric], Iterable[Issue]]) -> Callable[[Fabric], Iterable[Issue]]:
        RULES[rule_id] = Rule(rule_id, severity, summary, fn)
        return fn

    return deco


def load_families() -> None:
    """Import every rule family module (each registers its rules on import)."""
    for mod in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{mod.name}")


_load_families = load_families


def run_rules(fabric: Fabric, src: Source) -> list[Finding]:
    if not RULES:
        _load_families()
    out: list[Finding] = []
    for r in RULES.values():
        try:
            for issue in r.check(fabric):
                out.append(src.finding(r.id, issue.severity or r.severity, issue.message, issue.path))
        except Exception as exc:  # a bug in one rule must not hide the others' findings
            out.append(
                src.finding(
                    "internal-error",
                    "error",
                    f"rule {r.id} failed ({type(exc).__name__}: {exc}); please report this",
                )
            )
    from fabriccfg.inventory.rules._util import clear_caches

    clear_caches()
    out = _collapse_profile_findings(out, src)
    out.sort(key=lambda f: (f.line, f.col, f.rule))
    return out


def _collapse_profile_findings(findings: list[Finding], src: Source) -> list[Finding]:
    """A setting inherited from a profile that breaks a rule is reported once, at the profile's line."""
    in_profiles = {where for path, where in src.positions.items() if path[:1] == ("profiles",)}
    if not in_profiles:
        return findings
    out: list[Finding] = []
    groups: dict[tuple[str, int, int], list[Finding]] = {}
    for f in findings:
        if (f.line, f.col) in in_profiles:
            groups.setdefault((f.rule, f.line, f.col), []).append(f)
        else:
            out.append(f)
    return out + one_per_profile(groups.values())
