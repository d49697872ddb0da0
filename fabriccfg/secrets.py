"""Resolve secret references (``env:NAME``, ``file:PATH``) at the moment of use.

Values are never logged or printed: errors name the reference, not its value, and
:class:`Redactor` scrubs every resolved secret from text that leaves the process (session logs,
reports, backups).
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import ahocorasick

log = logging.getLogger(__name__)


class SecretError(Exception):
    """A reference could not be resolved (message is safe to print)."""


_lock = threading.Lock()
_resolved: set[str] = set()
_warned_short = False

MIN_REDACT_LEN = 4
"""Shorter secrets are not redacted: replacing every "y" or "ab" in a text would wreck it."""


def _keep(value: str, source: str) -> None:
    """Remember ``value`` for redaction, or warn once (without the value) that it is too short."""
    global _warned_short
    with _lock:
        if len(value) >= MIN_REDACT_LEN:
            if value not in _resolved:
                _resolved.add(value)
                _added.append(value)
            return
        if _warned_short:
            return
        _warned_short = True
    log.warning("secret %s is shorter than %d characters: it cannot be redacted reliably from logs and "
                "reports; use a longer secret", source, MIN_REDACT_LEN)


def resolve(ref: str, *, base_dir: Path | None = None) -> str:
    """Return the secret a reference points to; remember it for redaction."""
    kind, _, where = ref.partition(":")
    if kind == "env":
        value = os.environ.get(where)
        if value is None:
            raise SecretError(f"environment variable {where} (from {ref!r}) is not set")
    elif kind == "file":
        path = Path(where).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        try:
            value = path.read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as exc:
            raise SecretError(f"cannot read secret file {path} (from {ref!r}): {exc.strerror}") from None
    else:
        raise SecretError(f"{ref!r} is not a secret reference (use env:NAME or file:PATH)")
    if not value:
        raise SecretError(f"secret {ref!r} is empty")
    _keep(value, repr(ref))
    return value


def remember(value: str, source: str = "from an endpoints file") -> None:
    """Register a secret obtained elsewhere (e.g. from an endpoints file) for redaction."""
    if value:
        _keep(value, source)


_AUTOMATON_ABOVE = 128
"""With more secrets than this (a fabric with per-device passwords), :func:`redact` scans the text once
with an Aho-Corasick automaton (pyahocorasick) instead of searching it once per secret. Measured on a
100 kB text: one search costs ~20 us per secret (0.3 ms for 16, 42 ms for 2,000), the automaton ~3 ms
whatever the count (the Python per-character scan it replaces: ~29 ms). Issue 14: redaction made push
CPU per device grow with the fabric."""
_REBUILD_AFTER = 64
"""Secrets added since the automaton was built are searched one by one until there are this many; then
it is rebuilt (a push that learns one password per device rebuilds N/64 times, not N times)."""
_added: list[str] = []
"""Secrets added since the automaton was built (``_keep`` appends)."""
_matcher: tuple[set[str], int, ahocorasick.Automaton | None, tuple[str, ...]] | None = None
"""(the secrets set it was built from, its size then, the automaton or None, the secrets to search one by
one, longest first): read without the lock, so a call on a text costs little when nothing changed."""


def _current() -> tuple[ahocorasick.Automaton | None, tuple[str, ...]]:
    """(automaton over most secrets or None, the secrets to search one by one), for the secrets known now."""
    global _matcher
    snap = _matcher
    if snap is not None and snap[0] is _resolved and snap[1] == len(_resolved):
        return snap[2], snap[3]
    with _lock:
        auto = snap[2] if snap is not None and snap[0] is _resolved else None
        if len(_resolved) <= _AUTOMATON_ABOVE:
            auto, plain = None, tuple(sorted(_resolved, key=len, reverse=True))
        elif auto is not None and len(_added) < _REBUILD_AFTER:
            plain = tuple(sorted(_added, key=len, reverse=True))
        else:
            auto = ahocorasick.Automaton()
            for s in _resolved:
                auto.add_word(s, len(s))
            auto.make_automaton()
            _added.clear()
            plain = ()
        _matcher = (_resolved, len(_resolved), auto, plain)
        return auto, plain


def redact(text: str) -> str:
    """Replace every known secret (of at least :data:`MIN_REDACT_LEN` characters) with ``********``.

    Where secrets overlap in the text, the leftmost match wins, and the longest of those starting there.
    """
    auto, plain = _current()
    if auto is not None:
        out: list[str] = []
        last = 0
        for end, size in auto.iter_long(text):  # non-overlapping, leftmost-longest
            out.append(text[last:end + 1 - size])
            out.append("********")
            last = end + 1
        if last:
            out.append(text[last:])
            text = "".join(out)
    for s in plain:
        if s in text:
            text = text.replace(s, "********")
    return text


def _holds_secret(text: str) -> bool:
    auto, plain = _current()
    if auto is not None and next(auto.iter(text), None) is not None:
        return True
    return any(s in text for s in plain)


def _strings(obj: object, out: list[str]) -> None:
    if isinstance(obj, str):
        out.append(obj)
    elif isinstance(obj, dict):
        for v in obj.values():
            _strings(v, out)
    elif isinstance(obj, list | tuple):
        for v in obj:
            _strings(v, out)


def known() -> frozenset[str]:
    """Every secret kept for redaction: for handing to this run's own worker processes (over a pipe, never
    on a command line, in the environment or on disk), so that they redact what this process does."""
    with _lock:
        return frozenset(_resolved)


def redact_tree(obj: object) -> object:
    """:func:`redact` every string inside a JSON-like value (dicts, lists, tuples), before it is serialised.

    Redacting the serialised text alone misses a secret that JSON escaping changed (a quote or a
    backslash in it). A value none of whose strings holds a secret comes back as it is, after one scan
    of all its strings joined (a joined text without a secret has none in any part): a push result with
    thousands of config lines costs one scan, not thousands of calls.
    """
    strings: list[str] = []
    _strings(obj, strings)
    if not _holds_secret("\n".join(strings)):
        return obj
    return _redact_each(obj)


def _redact_each(obj: object) -> object:
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: _redact_each(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_redact_each(v) for v in obj]
    return obj
