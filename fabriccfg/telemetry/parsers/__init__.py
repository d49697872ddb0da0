"""Parsers for CLI telemetry, one module per tool; each has ``parse(text)`` (structured, tested against
fixtures) and ``samples(...)`` (the :class:`~fabriccfg.telemetry.model.Sample` view).

Importing the package imports every parser module, so ``parsers.<tool>`` is always there."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fabriccfg.telemetry.parsers import (
    eos,
    ethtool,
    ibnetdiscover,
    ibqueryerrors,
    nvue,
    nxos,
    opensm_applied,
    perfquery,
    sminfo,
    sonic,
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
    "eos_ecn": eos.parse_ecn,
    "eos_pfc": eos.parse_pfc,
    "eos_pfcwd": eos.parse_watchdog,
    "sonic_pfcwd": sonic.parse_pfcwd,
    "sonic_queue": sonic.parse_queue_counters,
    "sonic_wred": sonic.parse_wred,
    "sonic_pfc": sonic.parse_pfc,
    "nvue_roce": nvue.parse_roce_counters,
    "nvue_pfcwd": nvue.parse_watchdog,
    "nxos_queuing": nxos.parse_queuing,
    "nxos_pfc_queue": nxos.parse_pfc_queue,
}
"""Tool name (the fixture folder) -> structured parser."""
