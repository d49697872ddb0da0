"""Platform pieces for the stages: a platform package's submodules, found through the catalogue.

A platform package (see :mod:`fabriccfg.catalog`) may hold, each optional:

- ``render.py``: ``RENDER`` (a :class:`fabriccfg.render.spec.RenderSpec`) and its ``templates/`` folder;
- ``transaction.py``: ``TRANSACTION`` (a :class:`fabriccfg.push.transaction.Transaction` class);
- ``telemetry.py``: ``TELEMETRY`` (a :class:`fabriccfg.telemetry.spec.TelemetrySpec`);
- ``mock.py``: the mock profile (``Session`` / ``SHOW_COMMANDS`` / ``SNMP_AGENT``, see :mod:`fabriccfg.mock`).

A missing submodule means the platform lacks that capability (MQM8790 renders nothing and has no mock).
The registry imports no stage: it hands out what the package defines and each stage checks the type it
expects. Imported on demand, so the inventory and ``render`` never pull in the mock's SSH server.
"""

from __future__ import annotations

import importlib
from functools import cache
from types import ModuleType

from fabriccfg import catalog


@cache
def submodule(name: str, part: str) -> ModuleType | None:
    """``<platform package>.<part>`` of platform ``name``; None when the package has no such module
    (KeyError for an unknown platform)."""
    modname = f"{catalog.packages()[name]}.{part}"
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name != modname:
            raise
        return None


def piece(name: str, part: str, attr: str) -> object | None:
    """The attribute ``attr`` of ``<platform package>.<part>``; None when either is absent."""
    module = submodule(name, part)
    return getattr(module, attr, None) if module is not None else None


def render(name: str) -> object | None:
    """The platform's ``render.RENDER`` (None: it renders nothing)."""
    return piece(name, "render", "RENDER")


def transaction(name: str) -> object | None:
    """The platform's ``transaction.TRANSACTION`` class (None: never a push target)."""
    return piece(name, "transaction", "TRANSACTION")


def telemetry(name: str) -> object | None:
    """The platform's ``telemetry.TELEMETRY`` (None: nothing to collect from it directly)."""
    return piece(name, "telemetry", "TELEMETRY")


def mock_profile(name: str) -> ModuleType | None:
    """The platform's mock profile module (None when it ships none)."""
    return submodule(name, "mock")
