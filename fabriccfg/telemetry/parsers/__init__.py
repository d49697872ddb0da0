"""Generic parsers for CLI telemetry (tools that serve several platforms), one module per tool; each has
``parse(text)`` (structured, tested against fixtures) and ``samples(...)`` (the
:class:`~fabriccfg.telemetry.model.Sample` view).

A platform's own show-command parsers live in its package (``fabriccfg/platforms/<name>/parsers.py``,
with its ``PARSERS`` table); :func:`all_parsers` joins them through the registry."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabriccfg import catalog, registry
from fabriccfg.telemetry.parsers import (
    ethtool,
    ibnetdiscover,
    ibqueryerrors,
    opensm_applied,
    perfquery,
    sminfo,
    systemctl,
)

PARSERS: dict[str, Callable[[str], Any]] = {
    "perfquery": perfquery.parse,
    "ibqueryerrors": ibqueryerrors.parse,
    "ibnetdiscover": ibnetdiscover.parse,
    "sminfo": sminfo.parse,
    "opensm_applied": opensm_applied.parse,
    "ethtool": ethtool.parse,
    "systemctl": systemctl.parse,
}
"""Tool name (the fixture folder) -> structured parser, for the generic tools."""


def all_parsers() -> dict[str, Callable[[str], Any]]:
    """The generic parsers plus every registered platform's ``parsers.PARSERS`` (tool name -> parser)."""
    out = dict(PARSERS)
    for name in catalog.names():
        table = registry.piece(name, "parsers", "PARSERS")
        if isinstance(table, dict):
            for tool, fn in table.items():
                out.setdefault(str(tool), fn)
    return out
