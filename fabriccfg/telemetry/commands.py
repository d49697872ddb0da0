"""Reusable CLI telemetry commands (tool + parser) that platform modules put in their ``TELEMETRY``."""

from __future__ import annotations

from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.parsers import (
    eos,
    ethtool,
    ibnetdiscover,
    ibqueryerrors,
    nvue,
    nxos,
    perfquery,
    sminfo,
    sonic,
    systemctl,
)
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
        if s.metric == "ib_node" and s.device in ctx.ib.sm_devices:
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
IB_FABRIC_TOOLS = (
    CliCommand("ibnetdiscover", "ibnetdiscover", _ibnetdiscover, per="fabric", technology="infiniband"),
    CliCommand("ibqueryerrors", "ibqueryerrors", _ibqueryerrors, per="fabric", technology="infiniband"),
    CliCommand("sminfo", "sminfo", _sminfo, per="fabric", technology="infiniband", followups=_sm_lids),
)
"""infiniband-diags on a GPU host: the fabric-wide view when the fabric has no SM host."""
PERFQUERY_LOCAL = CliCommand("perfquery", "perfquery -x", _perfquery, per="first-nic",
                             technology="infiniband")
ETHTOOL = CliCommand("ethtool", "ethtool -S {netdev}", _ethtool, per="nic", technology="roce")


# --- switch show commands (ECN marks, per-priority PFC, PFC watchdog: what SNMP lacks) --------------
def _cmd(name: str, command: str, fn: object, per: str = "device") -> CliCommand:
    if per == "port":
        def parse(text: str, ctx: CliContext) -> list[Sample]:
            return fn(ctx.device, ctx.port, text)  # type: ignore[operator,no-any-return]
    else:
        def parse(text: str, ctx: CliContext) -> list[Sample]:
            return fn(ctx.device, text)  # type: ignore[operator,no-any-return]
    return CliCommand(name, command, parse, per=per)  # type: ignore[arg-type]


def _nvue_roce(text: str, ctx: CliContext) -> list[Sample]:
    return nvue.roce_samples(ctx.device, ctx.port, text, ctx.roce_prio)


EOS_SHOW = (
    _cmd("eos-ecn", "show interfaces counters ecn", eos.ecn_samples),
    _cmd("eos-pfc", "show priority-flow-control counters", eos.pfc_samples),
    _cmd("eos-pfcwd", "show priority-flow-control counters watchdog", eos.watchdog_samples),
)
SONIC_SHOW = (
    _cmd("sonic-wred", "show queue wredcounters", sonic.ecn_samples),
    _cmd("sonic-queue", "show queue counters", sonic.queue_samples),
    _cmd("sonic-pfcwd", "show pfcwd stats", sonic.pfcwd_samples),
)
NVUE_SHOW = (
    CliCommand("nvue-roce", "nv show interface {port} qos roce counters", _nvue_roce, per="port"),
    _cmd("nvue-pfcwd", "nv show interface {port} qos pfc-watchdog", nvue.watchdog_samples, per="port"),
)
NXOS_SHOW = (
    _cmd("nxos-queuing", "show queuing interface {port}", nxos.queuing_samples, per="port"),
    _cmd("nxos-pfcwd", "show queuing pfc-queue interface {port} detail", nxos.pfc_queue_samples, per="port"),
)
