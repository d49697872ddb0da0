"""Helpers for column-aligned show-command tables."""

from __future__ import annotations

import re

_NUM = re.compile(r"^-?[\d,]+$")


def num(text: str) -> int | None:
    """'1,047,195' -> 1047195; 'N/A' / '-' -> None."""
    t = text.strip()
    if not _NUM.match(t):
        return None
    return int(t.replace(",", ""))


def data_lines(text: str) -> list[list[str]]:
    """Whitespace-split rows of a table, skipping blank, header-rule (``----``) and header lines
    (a header is any line before a rule line)."""
    lines = text.splitlines()
    rows: list[list[str]] = []
    rule_seen = False
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if set(s) <= set("-+ ="):
            rule_seen = True
            continue
        nxt = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if not rule_seen and nxt and set(nxt) <= set("-+ "):
            continue  # header line right before its rule
        rows.append(s.split())
    return rows
