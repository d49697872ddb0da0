"""Parsers for CLI telemetry, one module per tool; each has ``parse(text)`` (structured, tested against
fixtures) and ``samples(...)`` (the :class:`~fabriccfg.telemetry.model.Sample` view)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.parsers import ethtool, ibnetdiscover, ibqueryerrors, perfquery, sminfo

PARSERS: dict[str, Callable[[str], Any]] = {
    "perfquery": perfquery.parse,
    "ibqueryerrors": ibqueryerrors.parse,
    "ibnetdiscover": ibnetdiscover.parse,
    "sminfo": sminfo.parse,
    "ethtool": ethtool.parse,
}
"""Tool name (the fixture folder) -> structured parser."""
