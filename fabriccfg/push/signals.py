"""Ctrl-C and SIGTERM during a push: handlers that only set flags, installed for the run and put back after.

Both the one-process runner and the multi-process parent use it, so a push reacts to signals the same way
whichever path runs it."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable, Iterator, Mapping
from typing import Any

Handler = Callable[[int, Any], None]


@contextlib.contextmanager
def handled(handlers: Mapping[signal.Signals, Handler]) -> Iterator[None]:
    """Install ``handlers`` for the ``with`` block and restore the previous ones. Off the main thread
    Python refuses to install handlers: the block runs anyway (KeyboardInterrupt still applies there)."""
    previous: dict[signal.Signals, Any] = {}
    for sig, handler in handlers.items():
        with contextlib.suppress(ValueError):
            previous[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def notice(nth: int, terminated: bool) -> tuple[str, str]:
    """(why, what to tell the operator) for the ``nth`` Ctrl-C of a run (a SIGTERM counts as two): the
    first stops new devices, the second ends in-flight sessions."""
    if nth == 1:
        why = "terminated (SIGTERM)" if terminated else "interrupted (Ctrl-C)"
        return why, ("interrupted: no new devices start; in-flight devices finish or roll back "
                     "(Ctrl-C again to end their sessions)")
    why = "terminated (SIGTERM) mid-run" if terminated else "interrupted (Ctrl-C twice) mid-run"
    return why, f"{why}: ending in-flight sessions"
