"""The one definition of a line break, and of text that is safe to put on one line of a device config.

Floor 0: imports nothing of fabriccfg, so every layer (inventory, render, diff, push, parsers) can use it.

A *line break* is every character Python's ``str.splitlines()`` breaks on, because that is what every
consumer in the chain uses (our diff, hier-config, netmiko, the mock CLIs):
``\\n \\r \\v \\f \\x1c \\x1d \\x1e \\x85 \\u2028 \\u2029`` (``\\r\\n`` is one break).
Splitting on ``"\\n"`` alone would disagree with them, so code that splits lines calls
:func:`split_lines` (or ``str.splitlines``, which is the same set; a test pins
:data:`LINE_BREAKS` to CPython's behaviour for every code point).

*Unsafe text* is a string holding a line break or any character of the Unicode categories Cc (control),
Cf (format: bidi overrides, zero-width joiners), Zl (line separator), Zp (paragraph separator) or Cs (lone
surrogates): a value rendered into a one-line position of a config must stay on that line and read as it
looks.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

LINE_BREAKS: frozenset[str] = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
"""Every character ``str.splitlines()`` treats as the end of a line."""

UNSAFE_CATEGORIES: frozenset[str] = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
"""Unicode general categories refused in inventory text (control, format, line/paragraph separators)."""


@dataclass(frozen=True, slots=True)
class UnsafeChar:
    """The first unsafe character of a string: where it is and what it is called."""

    index: int
    char: str

    @property
    def codepoint(self) -> str:
        """``U+2028``."""
        return f"U+{ord(self.char):04X}"

    @property
    def name(self) -> str:
        """``LINE SEPARATOR``; control characters have no Unicode name, so their common alias."""
        return unicodedata.name(self.char, "") or _CONTROL_NAMES.get(self.char, "CONTROL CHARACTER")

    @property
    def is_line_break(self) -> bool:
        return self.char in LINE_BREAKS

    def describe(self) -> str:
        """``U+2028 LINE SEPARATOR (a line break)`` for messages."""
        kind = "a line break" if self.is_line_break else _KIND.get(unicodedata.category(self.char), "unsafe")
        return f"{self.codepoint} {self.name} ({kind})"


_KIND = {"Cc": "a control character", "Cf": "an invisible format character", "Zl": "a line break",
         "Zp": "a line break", "Cs": "a lone surrogate"}

# Cc characters have no unicodedata.name(); these are their Unicode name aliases (NameAliases.txt).
_CONTROL_NAMES = {
    "\x00": "NULL", "\x07": "BELL", "\x08": "BACKSPACE", "\t": "CHARACTER TABULATION", "\n": "LINE FEED",
    "\v": "LINE TABULATION", "\f": "FORM FEED", "\r": "CARRIAGE RETURN", "\x1b": "ESCAPE",
    "\x1c": "FILE SEPARATOR", "\x1d": "GROUP SEPARATOR", "\x1e": "RECORD SEPARATOR", "\x1f": "UNIT SEPARATOR",
    "\x7f": "DELETE", "\x85": "NEXT LINE (NEL)",
}


def is_unsafe_char(char: str) -> bool:
    """True for a line break or a character of an unsafe category."""
    return char in LINE_BREAKS or unicodedata.category(char) in UNSAFE_CATEGORIES


def first_unsafe(text: str) -> UnsafeChar | None:
    """The first unsafe character of ``text``, or None when it may go on one config line."""
    if text.isprintable():  # fast path: isprintable() is False for every Cc, Cf, Zl, Zp and Cs character
        return None
    for i, char in enumerate(text):
        if is_unsafe_char(char):
            return UnsafeChar(i, char)
    return None


def first_line_break(text: str) -> UnsafeChar | None:
    """The first line break of ``text`` (by :data:`LINE_BREAKS`), or None."""
    if text.isprintable():
        return None
    for i, char in enumerate(text):
        if char in LINE_BREAKS:
            return UnsafeChar(i, char)
    return None


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """Split ``text`` into lines at every :data:`LINE_BREAKS` character (``\\r\\n`` counts once).

    Exactly ``str.splitlines``: kept as the one named place so a change of definition is one edit.
    """
    return text.splitlines(keepends)


def count_lines(text: str) -> int:
    """Number of lines :func:`split_lines` finds (a final line without a break counts)."""
    return len(text.splitlines())
