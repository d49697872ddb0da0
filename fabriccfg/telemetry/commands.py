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


def _sm_applied(text: str, ctx: CliContext) -> list[Sample]:
    return parsers.opensm_applied.samples(ctx.device, text, ctx.ib)


PKEY_PROBES = 4
"""CA ports whose P_Key table ``verify`` reads (first, last and evenly spread by name)."""


def _pkey_probes(samples: list[Sample], ctx: CliContext) -> list[str]:
    """``smpquery pkeys LID`` on a sample of CA ports ibnetdiscover found, once this host's OpenSM log
    showed a routing result (a host without an OpenSM log, like the modelled mock, probes nothing)."""
    if not any(s.metric == "sm_routing_engine" and s.device == ctx.device for s in samples):
        return []
    cas: dict[str, tuple[str, str]] = {}
    for s in samples:
        if s.metric == "ib_node" and s.label("type") == "ca":
            lid, guid = s.label("lid"), s.label("guid")
            desc = str(s.value)
            if lid and lid.isdigit() and guid and "aggregation node" not in desc.lower():
                cas.setdefault(desc, (lid, guid))
    names = sorted(cas)
    if not names:
        return []
    step = max(1, (len(names) - 1) // max(1, PKEY_PROBES - 1))
    picks = list(dict.fromkeys([*names[::step][:PKEY_PROBES - 1], names[-1]]))
    return [f"echo '# pkeys lid {cas[n][0]} guid {cas[n][1]} desc {n}'; smpquery pkeys {cas[n][0]}"
            for n in picks if "'" not in n]


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
SM_APPLIED = CliCommand(
    "sm-applied", f"grep -hsE '{parsers.opensm_applied.LOG_PATTERN}' /var/log/opensm.log",
    _sm_applied, followups=_pkey_probes)
"""What the running OpenSM applied: routing engine and roots from its log (default log path), then
``smpquery pkeys`` on sampled CA ports (partitions as applied)."""
PERFQUERY_LOCAL = CliCommand("perfquery", "perfquery -x", _perfquery, per="first-nic",
                             technology="infiniband")
ETHTOOL = CliCommand("ethtool", "ethtool -S {netdev}", _ethtool, per="nic", technology="roce", batch=True)
"""All NICs of a host in one shell line (hosts run bash; :mod:`fabriccfg.telemetry.batch`)."""


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

