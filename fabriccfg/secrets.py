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
            _resolved.add(value)
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


_INDEX_ABOVE = 512
"""With more secrets than this (a fabric with per-device passwords), :func:`redact` scans the text once
through an index instead of searching it once per secret: the cost stops growing with the fabric
(measured on a 2.9 kB text: the per-secret search costs ~2.6 us per secret, the scan ~1.5 ms flat)."""
_index: tuple[tuple[int, int], int, dict[str, tuple[str, ...]]] | None = None


def _prefix_index() -> tuple[int, dict[str, tuple[str, ...]]]:
    """(k, {first k characters: secrets, longest first}), rebuilt when the set of secrets changed."""
    global _index
    with _lock:
        version = (id(_resolved), len(_resolved))  # secrets are only ever added
        if _index is not None and _index[0] == version:
            return _index[1], _index[2]
        k = min(len(s) for s in _resolved)
        groups: dict[str, list[str]] = {}
        for s in sorted(_resolved, key=len, reverse=True):
            groups.setdefault(s[:k], []).append(s)
        _index = (version, k, {p: tuple(v) for p, v in groups.items()})
        return _index[1], _index[2]


def redact(text: str) -> str:
    """Replace every known secret (of at least :data:`MIN_REDACT_LEN` characters) with ``********``."""
    with _lock:
        many = len(_resolved) > _INDEX_ABOVE
        secrets = () if many else tuple(sorted(_resolved, key=len, reverse=True))
    if not many:
        for s in secrets:
            if s in text:
                text = text.replace(s, "********")
        return text
    k, index = _prefix_index()
    out: list[str] = []
    i = last = 0
    end = len(text) - k
    while i <= end:
        found = index.get(text[i:i + k])
        hit = next((s for s in found if text.startswith(s, i)), None) if found else None
        if hit is None:
            i += 1
            continue
        out.append(text[last:i])
        out.append("********")
        i = last = i + len(hit)
    out.append(text[last:])
    return "".join(out)


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
