"""The rich Console every command prints through: on a terminal as rich sets it up; in a log, no hard wraps.

rich lays text out for 80 columns when stdout is not a terminal and breaks long lines there (a run
folder path ends up alone on the next line). In CI logs and pipes a line must stay one line, so
text is never wrapped (``soft_wrap``) and tables and rules get :data:`LOG_WIDTH` columns, or
``COLUMNS`` when it is set. ``NO_COLOR`` (any non-empty value) turns colour off everywhere.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, TextIO

import typer

from fabriccfg.secrets import redact

if TYPE_CHECKING:
    from rich.console import Console

LOG_WIDTH = 150
"""Columns for tables and rules when the output is not a terminal and ``COLUMNS`` is not set."""


def is_tty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def _columns() -> int | None:
    value = os.environ.get("COLUMNS", "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def console(stderr: bool = False, *, min_width: int | None = None) -> Console:
    """A Console on stdout (or stderr); ``min_width``: never narrower (wide tables)."""
    from rich.console import Console

    no_color = os.environ.get("NO_COLOR", "") != ""
    if is_tty(sys.stderr if stderr else sys.stdout):
        con = Console(stderr=stderr, no_color=no_color)
    else:
        con = Console(stderr=stderr, no_color=no_color, soft_wrap=True, width=_columns() or LOG_WIDTH)
    if min_width is not None and con.width < min_width:
        con.width = min_width
    return con


def fail(message: str, code: int = 2) -> typer.Exit:
    """One ``fabriccfg: error:`` line on stderr, secrets redacted; the caller raises the Exit returned."""
    typer.echo(f"fabriccfg: error: {redact(message)}", err=True)
    return typer.Exit(code)
