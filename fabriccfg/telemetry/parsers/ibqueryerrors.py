"""``ibqueryerrors`` output (infiniband-diags ibqueryerrors.c; ``ib.md`` §5).

::

    Errors for 0x2c903006e29b0 "MF0;ys23ib4:SX6036/U1"
       GUID 0x2c903006e29b0 port ALL: [LinkDownedCounter == 48] [PortXmitWait == 4294967295]
       GUID 0x2c903006e29b0 port 5: [SymbolErrorCounter == 65535] [PortXmitWait == 84704351 (80.780M)]
    ## Summary: 4 nodes checked, 4 bad nodes found

Only counters beyond the threshold (default 0) are printed, so an absent counter is 0 under the
default thresholds. A value printed with a human-readable suffix ``(21.677M)`` comes from the
64-bit PortCountersExtended (``sat64``); a bare value has its PortCounters width (``SymbolErrorCounter``
16 bits: 65535 means saturated). The ``port ALL`` aggregate is kept in :func:`parse` and left out of
:func:`samples` (it double counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.parsers._common import IbContext, ib_kind, norm_guid

_NODE = re.compile(r'^Errors for\s+(?:(?P<guid>0x[0-9a-fA-F]+)\s+)?"(?P<desc>.*)"\s*$')
_PORT = re.compile(r"^GUID\s+(?P<guid>0x[0-9a-fA-F]+)\s+port\s+(?P<port>\d+|ALL):\s*(?P<rest>.*)$")
_COUNTER = re.compile(r"\[(?P<name>[A-Za-z0-9_]+)\s*==\s*(?P<value>\d+)(?:\s*\((?P<human>[^)]*)\))?\]")
_SUMMARY_NODES = re.compile(r"^##\s*Summary:\s*(\d+)\s+nodes checked,\s*(\d+)\s+bad nodes found")
_SUMMARY_PORTS = re.compile(r"^##\s*(\d+)\s+ports checked,\s*(\d+)\s+ports have errors beyond threshold")
_THRESHOLD = re.compile(r"\[(?P<name>[A-Za-z0-9_]+)\s*=\s*(?P<value>\d+)\]")


@dataclass
class ErrNode:
    guid: str | None
    desc: str
    ports: dict[str, dict[str, int]] = field(default_factory=dict)
    wide: dict[str, set[str]] = field(default_factory=dict)
    """port -> counters printed with a human suffix (64-bit)."""
    port_guid: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"guid": self.guid, "desc": self.desc, "port_guid": self.port_guid, "ports": self.ports,
                "wide": {p: sorted(v) for p, v in self.wide.items()}}


@dataclass
class ErrReport:
    nodes: list[ErrNode] = field(default_factory=list)
    nodes_checked: int | None = None
    bad_nodes: int | None = None
    ports_checked: int | None = None
    bad_ports: int | None = None
    thresholds: dict[str, int] = field(default_factory=dict)
    suppressed: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"nodes": [n.to_json() for n in self.nodes], "nodes_checked": self.nodes_checked,
                "bad_nodes": self.bad_nodes, "ports_checked": self.ports_checked, "bad_ports": self.bad_ports,
                "thresholds": self.thresholds, "suppressed": self.suppressed}


def parse(text: str) -> ErrReport:
    rep = ErrReport()
    node: ErrNode | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _NODE.match(line)
        if m:
            node = ErrNode(guid=norm_guid(m.group("guid")) if m.group("guid") else None, desc=m.group("desc"))
            rep.nodes.append(node)
            continue
        m = _PORT.match(line)
        if m:
            if node is None:
                node = ErrNode(guid=norm_guid(m.group("guid")), desc="")
                rep.nodes.append(node)
            if node.port_guid is None:
                node.port_guid = norm_guid(m.group("guid"))
            port = m.group("port")
            counters = node.ports.setdefault(port, {})
            for c in _COUNTER.finditer(m.group("rest")):
                counters[c.group("name")] = int(c.group("value"))
                if c.group("human") is not None:
                    node.wide.setdefault(port, set()).add(c.group("name"))
            continue
        m = _SUMMARY_NODES.match(line)
        if m:
            rep.nodes_checked, rep.bad_nodes = int(m.group(1)), int(m.group(2))
            continue
        m = _SUMMARY_PORTS.match(line)
        if m:
            rep.ports_checked, rep.bad_ports = int(m.group(1)), int(m.group(2))
            continue
        if line.startswith("## Thresholds:"):
            rep.thresholds = {t.group("name"): int(t.group("value")) for t in _THRESHOLD.finditer(line)}
            continue
        if line.startswith("## Suppressed:"):
            rep.suppressed = line.split(":", 1)[1].replace(",", " ").split()
    return rep


def samples(text: str, ctx: IbContext | None = None) -> list[Sample]:
    ctx = ctx or IbContext()
    out: list[Sample] = []
    for node in parse(text).nodes:
        for port, counters in node.ports.items():
            if port == "ALL":
                continue
            # switches: "Errors for 0x<node guid>"; CAs: the GUID on the port line is the port's
            device, pname = ctx.endpoint(node.guid, node.desc or None, int(port),
                                         node.port_guid if node.guid is None else None)
            wide = node.wide.get(port, set())
            for name, value in counters.items():
                out.append(Sample(device, pname, name, (), value, ib_kind(name, name in wide)))
    return out
