"""Reusable CLI telemetry commands (tool + parser) that platform modules put in their ``TELEMETRY``."""

from __future__ import annotations

from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.parsers import ethtool, ibnetdiscover, ibqueryerrors, perfquery, sminfo, systemctl
from fabriccfg.telemetry.spec import CliCommand, CliContext


def _ibnetdiscover(text: str, ctx: CliContext) -> list[Sample]:
    return ibnetdiscover.samples(ctx.device, text, ctx.ib)


def _ibqueryerrors(text: str, ctx: CliContext) -> list[Sample]:
    return ibqueryerrors.samples(text, ctx.ib)


def _sminfo(text: str, ctx: CliContext) -> list[Sample]:
    return sminfo.samples(ctx.device, text, ctx.ib)


def _sm_lids(samples: list[Sample], ctx: CliContext) -> list[str]:
    """``sminfo LID`` for every SM host port ibnetdiscover found: plain ``sminfo`` only shows the master."""
    lids = []
    for s in samples:
        if s.metric == "ib_node" and s.device in ctx.ib.sm_devices and s.label("type") == "ca":
            lid = s.label("lid")
            if lid and lid.isdigit() and lid not in lids:
                lids.append(lid)
    return [f"sminfo {lid}" for lid in lids]


def _perfquery(text: str, ctx: CliContext) -> list[Sample]:
    return perfquery.samples(ctx.device, text, ctx.port)


def _ethtool(text: str, ctx: CliContext) -> list[Sample]:
    return ethtool.samples(ctx.device, text, ctx.port)


def services(*units: str) -> tuple[CliCommand, ...]:
    """``systemctl is-active UNIT`` (one command per unit: simple shells accept one) ->
    ``service_state{service=UNIT}``."""

    def command(unit: str) -> CliCommand:
        def parse(text: str, ctx: CliContext) -> list[Sample]:
            return systemctl.samples(ctx.device, text, (unit,))

        return CliCommand(f"systemctl:{unit}", f"systemctl is-active {unit}", parse)

    return tuple(command(u) for u in units)


IBNETDISCOVER = CliCommand("ibnetdiscover", "ibnetdiscover", _ibnetdiscover, per="fabric")
IBQUERYERRORS = CliCommand("ibqueryerrors", "ibqueryerrors", _ibqueryerrors, per="fabric")
SMINFO = CliCommand("sminfo", "sminfo", _sminfo, followups=_sm_lids)
PERFQUERY_LOCAL = CliCommand("perfquery", "perfquery -x", _perfquery, per="first-nic", technology="infiniband")
ETHTOOL = CliCommand("ethtool", "ethtool -S {netdev}", _ethtool, per="nic", technology="roce")
