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
_matcher: tuple[int, ahocorasick.Automaton] | None = None
"""(id of the secrets set it was built from, the automaton)."""
_added: list[str] = []
"""Secrets added since the automaton was built (``_keep`` appends)."""


def _automaton() -> tuple[ahocorasick.Automaton, tuple[str, ...]]:
    """(automaton over most secrets, the few added since it was built, longest first)."""
    global _matcher
    with _lock:
        if _matcher is not None and _matcher[0] == id(_resolved) and len(_added) < _REBUILD_AFTER:
            return _matcher[1], tuple(sorted(_added, key=len, reverse=True))
        auto = ahocorasick.Automaton()
        for s in _resolved:
            auto.add_word(s, len(s))
        auto.make_automaton()
        _matcher = (id(_resolved), auto)
        _added.clear()
        return auto, ()


def redact(text: str) -> str:
    """Replace every known secret (of at least :data:`MIN_REDACT_LEN` characters) with ``********``.

    Where secrets overlap in the text, the leftmost match wins, and the longest of those starting there.
    """
    with _lock:
        many = len(_resolved) > _AUTOMATON_ABOVE
        secrets = () if many else tuple(sorted(_resolved, key=len, reverse=True))
    if not many:
        for s in secrets:
            if s in text:
                text = text.replace(s, "********")
        return text
    auto, pending = _automaton()
    out: list[str] = []
    last = 0
    for end, size in auto.iter_long(text):  # non-overlapping, leftmost-longest
        out.append(text[last:end + 1 - size])
        out.append("********")
        last = end + 1
    if last:
        out.append(text[last:])
        text = "".join(out)
    for s in pending:
        if s in text:
            text = text.replace(s, "********")
    return text


def known() -> frozenset[str]:
    """Every secret kept for redaction: for handing to this run's own worker processes (over a pipe, never
    on a command line, in the environment or on disk), so that they redact what this process does."""
    with _lock:
        return frozenset(_resolved)


def redact_tree(obj: object) -> object:
    """:func:`redact` every string inside a JSON-like value (dicts, lists, tuples), before it is serialised.

    Redacting the serialised text alone misses a secret that JSON escaping changed (a quote or a
    backslash in it).
    """
    if isinstance(obj, str):
        return redact(obj)
    if isinstance(obj, dict):
        return {k: redact_tree(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [redact_tree(v) for v in obj]
    return obj
