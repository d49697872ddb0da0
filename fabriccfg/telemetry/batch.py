"""Many per-port (or per-NIC) commands in one SSH command line, and the output cut back per item.

A switch or host whose CLI is a POSIX shell (Cumulus Linux, SONiC, Linux hosts) runs
``echo '@@fabriccfg:swp1'; nv show interface swp1 qos pfc-watchdog; echo '@@fabriccfg:swp2'; ...`` as
one command: one prompt round trip instead of 64, which is most of what a per-port command costs the
collector. Each item's output follows its marker line; a marker is recognised only as a whole line
(the terminal's echo of the command line carries it inside quotes, followed by ``';``), so echo
wrapping cannot forge one.
"""

from __future__ import annotations

import re

MARK = "@@fabriccfg:"
_ITEM = re.compile(r"[\w./:-]+")
_LINE = re.compile(r"@@fabriccfg:([\w./:-]+)\r?$", re.MULTILINE)
"""A marker line's text; :func:`split` keeps the matches that start a line. (With ``^`` in front the
regex engine tried every position of a 500 kB reply; a literal start lets it skip to the markers.)"""


def batch_line(items: list[tuple[str, str]]) -> str:
    """``[(item, command line), ...]`` -> one shell line that prints a marker before each command."""
    parts = []
    for item, line in items:
        if not _ITEM.fullmatch(item):
            raise ValueError(f"not a batchable item name: {item!r}")
        parts.append(f"echo '{MARK}{item}'; {line}")
    return "; ".join(parts)


def split(text: str) -> list[tuple[str | None, str]]:
    """``[(item, its output), ...]`` in output order; ``[(None, text)]`` when the text has no marker."""
    marks = [m for m in _LINE.finditer(text) if m.start() == 0 or text[m.start() - 1] == "\n"]
    if not marks:
        return [(None, text)]
    out: list[tuple[str | None, str]] = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(text)
        out.append((m.group(1), text[m.end() + 1:end]))
    return out
