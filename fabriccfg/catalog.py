"""The platform seam: everything that differs between platforms is declared by one module.

Each module in ``fabriccfg.platforms`` defines ``PLATFORM`` (a :class:`PlatformInfo`) plus one
attribute per capability, each owned by that capability's package and filled in by the module:

- ``RENDER``: what files the platform renders and the derived context its templates need
  (``fabriccfg.render``);
- ``TRANSACTION``: how to back up, diff, apply, verify, confirm and roll back on a netmiko
  connection (``fabriccfg.push``);
- ``TELEMETRY``: SNMP tables and CLI collectors with their parsers (``fabriccfg.telemetry``).

The mock profile lives in ``fabriccfg.mock.profiles.<module>`` (``fabriccfg.platforms.mock_profile``).
Nothing outside these places branches on a platform name; the capability packages hold only the
platform-independent machinery (e.g. ``fabriccfg.push.transaction.CliTransaction``,
``fabriccfg.push.files.FilesTransaction``, ``fabriccfg.telemetry.commands``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Switch

DeviceKind = Literal["switch", "sm-host", "gpu-host"]
_BREAKOUT = re.compile(r"^(\d+)x(\d+)G$", re.IGNORECASE)


def parse_breakout(mode: str) -> tuple[int, int] | None:
    """'4x100G' -> (4, 100); None when the text is not a breakout mode."""
    m = _BREAKOUT.match(mode.strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


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

    def port_names(self, switch: Switch) -> dict[str, int]:
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
