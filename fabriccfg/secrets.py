"""Resolve secret references (``env:NAME``, ``file:PATH``) at the moment of use.

Values are never logged or printed: errors name the reference, not its value, and
:class:`Redactor` scrubs every resolved secret from text that leaves the process (session logs,
reports, backups).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path


class SecretError(Exception):
    """A reference could not be resolved (message is safe to print)."""


_lock = threading.Lock()
_resolved: set[str] = set()


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
    with _lock:
        _resolved.add(value)
    return value


def remember(value: str) -> None:
    """Register a secret obtained elsewhere (e.g. from an endpoints file) for redaction."""
    if value:
        with _lock:
            _resolved.add(value)


def redact(text: str) -> str:
    """Replace every known secret in ``text`` with ``********``."""
    with _lock:
        secrets = sorted(_resolved, key=len, reverse=True)
    for s in secrets:
        if s in text:
            text = text.replace(s, "********")
    return text
