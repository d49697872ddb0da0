"""The platform catalogue (ground floor): the facts every stage needs about a platform, and where they are.

A platform is a package (``fabriccfg/platforms/<name>/`` for the built-ins, any importable package for a
third party) registered under the ``fabriccfg.platforms`` entry-point group; its ``__init__`` defines
``PLATFORM`` (a :class:`PlatformInfo`: names, technology, port naming, example hardware, ASIC buffers)
and imports nothing but this module, so the inventory can read facts without importing any stage.
The stages' pieces (render spec, transaction, telemetry, mock) live in the package's submodules and
are loaded by :mod:`fabriccfg.registry`.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from types import ModuleType
from typing import Literal, Protocol

ENTRY_POINT_GROUP = "fabriccfg.platforms"

DeviceKind = Literal["switch", "sm-host", "gpu-host"]
_BREAKOUT = re.compile(r"^(\d+)x(\d+)G$", re.IGNORECASE)


def parse_breakout(mode: str) -> tuple[int, int] | None:
    """'4x100G' -> (4, 100); None when the text is not a breakout mode."""
    m = _BREAKOUT.match(mode.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def quantum_port_number(port: str) -> int | None:
    """NVIDIA Quantum port numbers (MQM8700 and MQM8790 share the ASIC and its numbering): '1/5' -> 5;
    a split '1/5/2' -> 10 (split-ready numbering: 2 x (N-1) + lane)."""
    parts = port.split("/")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return None
    if len(nums) == 2:
        return nums[1]
    if len(nums) == 3:
        return 2 * (nums[1] - 1) + nums[2]
    return None


class PortLayout(Protocol):
    """What port naming needs of a switch (the inventory's ``Switch`` is one), without importing the model."""

    @property
    def ports(self) -> int: ...

    @property
    def breakouts(self) -> Mapping[str, str]: ...


@dataclass(frozen=True, slots=True)
class AsicInfo:
    """Buffer facts of a switch ASIC generation.

    ``buffer_bytes`` is the packet buffer of the whole chip (datasheet figures); ECN thresholds
    above it can never trigger. ``headroom_budget_bytes`` is a conservative per-port, per-lossless
    priority headroom limit used when the inventory gives no ``roce.buffer.headroom_budget_bytes``
    (on SONiC the real limit is ``BUFFER_MAX_PARAM_TABLE|<port>.max_headroom_size``).
    """

    name: str
    buffer_bytes: int
    headroom_budget_bytes: int


@dataclass(frozen=True)
class ExampleHardware:
    """The switch ``fabriccfg gen`` builds a fabric of for this platform."""

    model: str
    asic: str
    radix: int


@dataclass(frozen=True)
class PlatformInfo:
    """Static facts about a platform (data, not behaviour)."""

    name: str
    kind: DeviceKind
    technologies: frozenset[str]
    device_type: str | None
    """netmiko device_type; None when the device has no CLI (MQM8790)."""
    has_snmp: bool = True
    needs_mgmt: bool = True
    config_style: Literal["cli", "json", "files", "none"] = "cli"
    """How configs diff: hierarchical CLI, JSON document, or whole files."""
    port_name: Callable[[int], str] | None = None
    """Front-panel port number (1-based) -> port name."""
    subport_name: Callable[[int, int, int], str] | None = None
    """(port, lane index 0-based, lanes) -> breakout sub-port name."""
    allowed_breakouts: frozenset[str] = field(default_factory=frozenset)
    fabric_port_number: Callable[[str], int | None] | None = None
    """Port name -> the number the fabric tools (ibnetdiscover) print, for IB switches."""
    not_a_target: str | None = None
    """Why the platform can never be a push target ("<model>: <reason>"), when it cannot."""
    example_hardware: ExampleHardware | None = None
    """What ``fabriccfg gen --platform NAME`` builds its switches of (None: gen does not offer it)."""
    asics: tuple[AsicInfo, ...] = ()
    """Buffer facts of the switch ASICs this platform's hardware uses (datasheet figures)."""
    """Buffer facts of the switch ASICs this platform's hardware uses (datasheet figures)."""
    cli_prompt: str | None = None
    """A prompt regex that matches both exec and config mode, for a CLI whose netmiko driver waits for
    only one of them (MLNX-OS: ``[>#]``; netmiko's ``#`` stalls 10 s at the ``>`` exec prompt)."""

    def port_names(self, switch: PortLayout) -> dict[str, int]:
        """All port names of ``switch`` (breakouts expanded) -> lane-speed share in Gb/s (0 = default)."""
        if self.port_name is None:
            return {}
        out: dict[str, int] = {}
        breakouts = {k: parse_breakout(v) for k, v in switch.breakouts.items()}
        for n in range(1, switch.ports + 1):
            name = self.port_name(n)
            mode = breakouts.get(name)
            if mode and self.subport_name is not None:
                lanes, speed = mode
                for lane in range(lanes):
                    out[self.subport_name(n, lane, lanes)] = speed
            else:
                out[name] = 0
        return out


@cache
def packages() -> dict[str, str]:
    """Platform name -> package path, from the ``fabriccfg.platforms`` entry points (built-ins included:
    fabriccfg's own distribution declares them the same way). The first distribution to claim a name wins."""
    table: dict[str, str] = {}
    found = entry_points(group=ENTRY_POINT_GROUP)
    for ep in sorted(found, key=lambda e: (not e.value.startswith("fabriccfg."), e.name)):
        table.setdefault(ep.name, ep.value)
    if not any(v.startswith("fabriccfg.platforms.") for v in table.values()):
        # an install made before the built-ins registered as entry points: say how to fix it
        raise RuntimeError("fabriccfg's platform entry points are missing: reinstall it (pip install -e .)")
    return table


@cache
def package(name: str) -> ModuleType:
    """The platform package of ``name`` (KeyError for an unknown platform)."""
    return importlib.import_module(packages()[name])


def info(name: str) -> PlatformInfo:
    """The facts of platform ``name`` (KeyError for an unknown platform)."""
    facts = getattr(package(name), "PLATFORM", None)
    if not isinstance(facts, PlatformInfo):
        raise TypeError(f"platform package {packages()[name]} has no PLATFORM (a catalog.PlatformInfo)")
    return facts


@cache
def asics() -> dict[str, AsicInfo]:
    """Every registered platform's ASIC facts by name (the first platform to declare an ASIC wins)."""
    out: dict[str, AsicInfo] = {}
    for name in names():
        for a in info(name).asics:
            out.setdefault(a.name, a)
    return out


def names() -> list[str]:
    """Every registered platform name, sorted."""
    return sorted(packages())
