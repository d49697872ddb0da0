"""Helpers for column-aligned show-command tables."""

from __future__ import annotations

import re

from fabriccfg.text import split_lines

_NUM = re.compile(r"^-?[\d,]+$")


def num(text: str) -> int | None:
    """'1,047,195' -> 1047195; 'N/A' / '-' -> None."""
    t = text.strip()
    if not _NUM.match(t):
        return None
    return int(t.replace(",", ""))


_RULE = frozenset("-+ =")
_HEADER_RULE = frozenset("-+ ")


def data_lines(text: str) -> list[list[str]]:
    """Whitespace-split rows of a table, skipping blank, header-rule (``----``) and header lines
    (a header is any line before a rule line)."""
    lines = [line.strip() for line in split_lines(text)]
    rows: list[list[str]] = []
    rule_seen = False
    last = len(lines) - 1
    for i, s in enumerate(lines):
        if not s:
            continue
        if _RULE.issuperset(s):
            rule_seen = True
            continue
        if not rule_seen and i < last and (nxt := lines[i + 1]) and _HEADER_RULE.issuperset(nxt):
            continue  # header line right before its rule
        rows.append(s.split())
    return rows
