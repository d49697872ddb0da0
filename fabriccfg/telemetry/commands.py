"""Cross-platform CLI telemetry commands (tool + parser) and the helpers platform modules build theirs with.

Only tools that run the same way on several platforms live here (infiniband-diags on SM and GPU hosts,
``ethtool``, ``systemctl``); a platform's own show commands are declared in its platform module with
:func:`show`.
"""

from __future__ import annotations

from collections.abc import Callable

from fabriccfg.telemetry import parsers
from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.spec import CliCommand, CliContext


def _ibnetdiscover(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.ibnetdiscover.samples(ctx.device, text, ctx.ib)


def _ibqueryerrors(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.ibqueryerrors.samples(text, ctx.ib)


def _sminfo(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.sminfo.samples(ctx.device, text, ctx.ib)


def _sm_lids(samples: list[Sample], ctx: CliContext) -> list[str]:
    """``sminfo LID`` for every SM host port ibnetdiscover found: plain ``sminfo`` only shows the master."""
    lids = []
    for s in samples:
        if s.metric == "ib_node" and s.device in ctx.ib.sm_devices:
            lid = s.label("lid")
            if lid and lid.isdigit() and lid not in lids:
                lids.append(lid)
    return [f"sminfo {lid}" for lid in lids]


def _perfquery(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.perfquery.samples(ctx.device, text, ctx.port)


def _ethtool(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.ethtool.samples(ctx.device, text, ctx.port)


def services(*units: str) -> tuple[CliCommand, ...]:
    """``systemctl is-active UNIT`` (one command per unit: simple shells accept one) ->
    ``service_state{service=UNIT}``."""

    def command(unit: str) -> CliCommand:
        def parse(text: str, ctx: CliContext) -> list[Sample]:
            return parsers.systemctl.samples(ctx.device, text, (unit,))

        return CliCommand(f"systemctl:{unit}", f"systemctl is-active {unit}", parse)

    return tuple(command(u) for u in units)


IBNETDISCOVER = CliCommand("ibnetdiscover", "ibnetdiscover", _ibnetdiscover, per="fabric")
IBQUERYERRORS = CliCommand("ibqueryerrors", "ibqueryerrors", _ibqueryerrors, per="fabric")
SMINFO = CliCommand("sminfo", "sminfo", _sminfo, followups=_sm_lids)
IB_FABRIC_TOOLS = (
    CliCommand("ibnetdiscover", "ibnetdiscover", _ibnetdiscover, per="fabric", technology="infiniband"),
    CliCommand("ibqueryerrors", "ibqueryerrors", _ibqueryerrors, per="fabric", technology="infiniband"),
    CliCommand("sminfo", "sminfo", _sminfo, per="fabric", technology="infiniband", followups=_sm_lids),
)
"""infiniband-diags on a GPU host: the fabric-wide view when the fabric has no SM host."""
PERFQUERY_LOCAL = CliCommand("perfquery", "perfquery -x", _perfquery, per="first-nic",
                             technology="infiniband")
ETHTOOL = CliCommand("ethtool", "ethtool -S {netdev}", _ethtool, per="nic", technology="roce")


# --- building switch show commands (ECN marks, per-priority PFC, PFC watchdog: what SNMP lacks) -----
DeviceSamples = Callable[[str, str], list[Sample]]
"""(device, output) -> samples."""
PortSamples = Callable[[str, "str | None", str], list[Sample]]
"""(device, port, output) -> samples."""


def show(name: str, command: str, fn: DeviceSamples) -> CliCommand:
    """A per-device show command whose parser maps ``(device, output)`` to samples."""

    def parse(text: str, ctx: CliContext) -> list[Sample]:
        return fn(ctx.device, text)

    return CliCommand(name, command, parse)


def show_port(name: str, command: str, fn: PortSamples) -> CliCommand:
    """A per-port show command (``{port}`` in ``command``) whose parser maps ``(device, port, output)``."""

    def parse(text: str, ctx: CliContext) -> list[Sample]:
        return fn(ctx.device, ctx.port, text)

    return CliCommand(name, command, parse, per="port")

