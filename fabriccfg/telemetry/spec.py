"""What a platform's ``TELEMETRY`` attribute declares: SNMP tables and CLI commands with parsers.

Platform modules build a :class:`TelemetrySpec` from the shared building blocks below (the MIB
tables in :mod:`fabriccfg.telemetry.tables`, the parsers in :mod:`fabriccfg.telemetry.parsers`), so
that :func:`fabriccfg.telemetry.collect.collect` never branches on a platform name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from fabriccfg.telemetry.model import Kind, Sample
from fabriccfg.telemetry.oids import Oid
from fabriccfg.telemetry.parsers._common import IbContext

PortOf = Callable[[int], str | None]
"""ifIndex -> port name (None when unknown)."""
RowsToSamples = Callable[[str, PortOf, "dict[str, dict[tuple[int, ...], int | bytes | None]]"], list[Sample]]
"""(device, port_of, {column metric: {index: value}}) -> samples, for tables that need custom mapping."""


@dataclass
class CliContext:
    """What a CLI parser knows besides the output: the device that ran the command, the inventory
    port the command was about (per-NIC commands), and the IB name resolver for fabric-wide tools."""

    device: str
    port: str | None = None
    ib: IbContext = field(default_factory=IbContext)
    roce_prio: int = 3
    """The fabric's RoCE (lossless) priority = traffic class, for per-class outputs that do not say it."""
    ports: tuple[str, ...] = ()
    """The device's cabled ports in front-panel order (device-wide commands that report every port)."""


Parser = Callable[[str, CliContext], list[Sample]]
"""(command output, context) -> samples."""


@dataclass(frozen=True)
class SnmpColumn:
    metric: str
    oid: Oid
    kind: Kind
    states: Mapping[int, str] | None = None
    """For ``state`` columns: the enumeration's names."""


@dataclass(frozen=True)
class SnmpTable:
    """Columns sharing one index. ``index`` names the index components: ``ifIndex`` becomes the
    sample's port, ``_`` components are dropped, any other name becomes a label (``prio``, ``tc``)."""

    name: str
    columns: tuple[SnmpColumn, ...]
    index: tuple[str, ...] = ("ifIndex",)
    index_filter: Mapping[int, frozenset[int]] = field(default_factory=dict)
    """index position -> accepted values (e.g. Arista queue packetType 2 = mixed only)."""
    to_samples: RowsToSamples | None = None


@dataclass(frozen=True)
class CliCommand:
    """One command run over SSH. ``per="nic"`` runs it once per host NIC with ``{netdev}`` and
    ``{nic}`` filled in (the samples' port is the NIC name); ``technology`` limits it to fabrics of
    that technology."""

    name: str
    command: str
    parser: Parser
    per: Literal["device", "port", "nic", "first-nic", "fabric"] = "device"
    """``fabric``: a fabric-wide tool (ibnetdiscover, ibqueryerrors) run on one device only;
    ``port``: once per cabled port (``{port}`` filled in)."""
    technology: str | None = None
    followups: Callable[[list[Sample], CliContext], list[str]] | None = None
    """More command lines (parsed by the same parser) derived from this job's samples so far,
    e.g. ``sminfo LID`` for every SM port ibnetdiscover found."""
    batch: bool = False
    """The device's CLI is a POSIX shell: a ``port``/``nic`` command runs for all its items in ONE
    command line (``echo MARK; cmd; ...``, :mod:`fabriccfg.telemetry.batch`) and the output is cut at the
    markers, so a leaf costs one SSH round trip instead of one per port."""
    when: Callable[[object], bool] | None = None
    """Run only on devices for which this is true (e.g. a NOS release that has the command)."""


@dataclass(frozen=True)
class TelemetrySpec:
    snmp: tuple[SnmpTable, ...] = ()
    """Tables polled over SNMP when the device has an agent."""
    cli: tuple[CliCommand, ...] = ()
    """Commands run over SSH (what SNMP lacks, or everything for agent-less devices)."""
    cli_when_snmp: bool = True
    """Run ``cli`` even when SNMP answered (False: CLI is only a fallback)."""
