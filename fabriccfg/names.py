"""One rule for names a user types (devices, roles, check ids, hosts), for the CLI and the API alike:
an unknown name is a usage error with the closest known names suggested (docs/architecture.md,
"Contracts")."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric


def suggest(name: str, known: Iterable[str], n: int = 3) -> str:
    """`` (did you mean leaf-r0?)`` for the closest known names, or ``""`` when none is close."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=n, cutoff=0.6)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def unknown_names(kind: str, given: Sequence[str], known: Iterable[str], where: str = "") -> str | None:
    """The one-line complaint about names in ``given`` that are not in ``known``, or None:
    ``no device named 'leafr0' in the inventory (did you mean leaf-r0?)``; a short list of known
    names (at most 12) is appended."""
    pool = sorted(set(known))
    bad = [g for g in dict.fromkeys(given) if g not in pool]
    if not bad:
        return None
    place = f" in {where}" if where else ""
    if len(bad) == 1:
        text = f"no {kind} named {bad[0]!r}{place}{suggest(bad[0], pool)}"
    else:
        hints = [(g, suggest(g, pool)) for g in bad]
        text = f"no {kind}s named {', '.join(map(repr, bad))}{place}" + "".join(
            f"; for {g!r}{hint.replace(' (', ' ', 1).rstrip(')')}" for g, hint in hints if hint)
    if len(pool) <= 12:
        text += f"; {kind}s: {', '.join(pool) or 'none'}"
    return text


def selection_problem(fabric: Fabric, devices: Sequence[str], roles: Sequence[str]) -> str | None:
    """Why ``--device``/``--role`` cannot select from ``fabric`` (unknown names), or None."""
    problem = unknown_names("device", devices, fabric.devices, "the inventory")
    if problem is None:
        known_roles = {str(d.role) for d in fabric.devices.values()}
        problem = unknown_names("role", roles, known_roles, "the inventory")
    return problem


def select(fabric: Fabric, devices: Sequence[str], roles: Sequence[str]) -> list[str] | None:
    """Device names in inventory order: every device, or those named or with a named role (either
    matches, as ``push`` has always selected). ``None`` means all; names must be checked first."""
    if not devices and not roles:
        return None
    return [n for n, d in fabric.devices.items() if n in devices or str(d.role) in roles]
