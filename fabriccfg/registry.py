"""Platform registry: platform name -> its module (``PLATFORM`` + capability attributes).

Built-in platforms are listed here; third-party packages add one through the
``fabriccfg.platforms`` entry-point group (value: the module path).
"""

from __future__ import annotations

import importlib
from functools import cache
from importlib.metadata import entry_points
from types import ModuleType

from fabriccfg.platforms.base import PlatformInfo

BUILTIN: dict[str, str] = {
    "mlnxos-ib": "fabriccfg.platforms.mlnxos_ib",
    "unmanaged-ib": "fabriccfg.platforms.unmanaged_ib",
    "cumulus-nvue": "fabriccfg.platforms.cumulus_nvue",
    "sonic": "fabriccfg.platforms.sonic",
    "eos": "fabriccfg.platforms.eos",
    "nxos": "fabriccfg.platforms.nxos",
    "opensm-host": "fabriccfg.platforms.opensm_host",
    "connectx-host": "fabriccfg.platforms.connectx_host",
}


@cache
def _table() -> dict[str, str]:
    table = dict(BUILTIN)
    for ep in entry_points(group="fabriccfg.platforms"):
        table.setdefault(ep.name, ep.value)
    return table


@cache
def module(name: str) -> ModuleType:
    """The platform module for ``name`` (KeyError for an unknown platform)."""
    return importlib.import_module(_table()[name])


@cache
def mock_profile(name: str) -> ModuleType | None:
    """The mock profile module of ``name`` (``fabriccfg.mock.profiles.<platform module>``), None when the
    platform has none. Imported on demand: profiles pull in the mock's SSH server (asyncssh)."""
    modname = f"fabriccfg.mock.profiles.{_table()[name].rsplit('.', 1)[-1]}"
    try:
        return importlib.import_module(modname)
    except ModuleNotFoundError as exc:
        if exc.name != modname:
            raise
        return None


def info(name: str) -> PlatformInfo:
    info_: PlatformInfo = module(name).PLATFORM
    return info_


def names() -> list[str]:
    return sorted(_table())
