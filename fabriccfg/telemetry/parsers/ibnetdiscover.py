"""``ibnetdiscover`` topology output, default and ``-p/--ports`` formats (``ib.md`` §6).

Default format: node blocks (``vendid=``, ``devid=``, ``sysimgguid=``, ``switchguid=`` / ``caguid=``),
a ``Switch``/``Ca`` line, then one line per connected port::

    Switch\t41 "S-b8599f0300fc6de4"\t\t# "MF0;r-ufm-sw95:MQM8700/U1" enhanced port 0 lid 13 lmc 0
    [24]\t"H-ec0d9a03007d7d0b"[1](ec0d9a03007d7d0b) \t\t# "r-dcs96 HCA-2" lid 28 4xEDR
    Ca\t1 "H-0002c9030004829c"\t\t# "MT25408 ConnectX Mellanox Technologies"
    [1](2c9030004829d) \t"S-0002c902004827b0"[9]\t\t# lid 78 lmc 0 "Infiniscale-IV ..." lid 13 4xQDR

Whitespace is free (the real captures collapse tabs). ``-p`` format: one line per port::

    SW  2052 35 0x506b4b03005c2740 4x EDR - CA  1432  1 0x506b4b0300cc02a6 ( 'ib-i4l1s01' - 'p0001 HCA-1' )
    SW  2052 37 0x506b4b03005c2740 4x ???                                    'ib-i4l1s01'

A link appears twice (once from each end) in the default format; :func:`samples` reports each
node's view, so the cabling check sees both ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._common import IbContext, norm_guid

_NODE = re.compile(
    r'^(?P<type>Switch|Ca|Rt)\s+(?P<nports>\d+)\s+"(?P<id>[SHR]-[0-9a-fA-F]+)"\s*'
    r'(?:#\s*"(?P<desc>[^"]*)"(?P<rest>.*))?$'
)
_SW_PORT = re.compile(
    r'^\[(?P<port>\d+)\]\s*(?:\((?P<pguid>[0-9a-fA-F]+)\))?\s*"(?P<rid>[SHR]-[0-9a-fA-F]+)"\[(?P<rport>\d+)\]'
    r'(?:\((?P<rpguid>[0-9a-fA-F]+)\))?\s*(?:#\s*(?P<comment>.*))?$'
)
_COMMENT_SW = re.compile(r'^"(?P<rdesc>[^"]*)"\s+lid\s+(?P<rlid>\d+)\s+(?P<width>\d+x)(?P<speed>\S+)')
_COMMENT_CA = re.compile(
    r'^lid\s+(?P<lid>\d+)\s+lmc\s+\d+\s+"(?P<rdesc>[^"]*)"\s+lid\s+(?P<rlid>\d+)\s+(?P<width>\d+x)(?P<speed>\S+)'
)
_LID = re.compile(r"\blid\s+(\d+)")
_KV = re.compile(r"^(?P<k>vendid|devid|sysimgguid|switchguid|caguid|routerguid)=(?P<v>\S+)")
_P_LINE = re.compile(
    r"^(?P<type>SW|CA|RT)\s+(?P<lid>\d+)\s+(?P<port>\d+)\s+(?P<guid>0x[0-9a-fA-F]+)\s+(?P<width>\d+x|\?+)\s+"
    r"(?P<speed>\S+)\s*(?:-\s+(?P<rtype>SW|CA|RT)\s+(?P<rlid>\d+)\s+(?P<rport>\d+)\s+(?P<rguid>0x[0-9a-fA-F]+)\s*)?"
    r"(?:\(\s*'(?P<ldesc>[^']*)'\s*-\s*'(?P<rdesc>[^']*)'\s*\)|'(?P<desc>[^']*)')?\s*$"
)
_TYPES = {"Switch": "switch", "Ca": "ca", "Rt": "router", "SW": "switch", "CA": "ca", "RT": "router",
          "S": "switch", "H": "ca", "R": "router"}


@dataclass
class IbLink:
    port: int
    remote_guid: str
    remote_type: str
    remote_port: int
    remote_desc: str | None = None
    remote_lid: int | None = None
    width: str | None = None
    speed: str | None = None
    port_guid: str | None = None
    remote_port_guid: str | None = None

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


@dataclass
class IbNode:
    type: str
    guid: str
    nports: int | None
    desc: str
    lid: int | None = None
    attrs: dict[str, str] = field(default_factory=dict)
    links: list[IbLink] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"type": self.type, "guid": self.guid, "nports": self.nports, "desc": self.desc,
                "lid": self.lid, "attrs": self.attrs, "links": [lk.to_json() for lk in self.links]}


def parse(text: str) -> list[IbNode]:
    """Nodes with their connected ports, from either format."""
    nodes: list[IbNode] = []
    by_guid: dict[str, IbNode] = {}
    attrs: dict[str, str] = {}
    cur: IbNode | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _KV.match(line)
        if m:
            if m.group("k") in ("vendid",):
                attrs = {}
                cur = None
            attrs[m.group("k")] = m.group("v")
            continue
        m = _NODE.match(line)
        if m:
            rest = m.group("rest") or ""
            lid = _LID.search(rest)
            cur = IbNode(type=_TYPES[m.group("type")], guid=norm_guid(m.group("id")),
                         nports=int(m.group("nports")), desc=m.group("desc") or "",
                         lid=int(lid.group(1)) if lid else None, attrs=attrs)
            attrs = {}
            nodes.append(cur)
            by_guid[cur.guid] = cur
            continue
        m = _SW_PORT.match(line)
        if m and cur is not None:
            comment = (m.group("comment") or "").strip()
            link = IbLink(port=int(m.group("port")), remote_guid=norm_guid(m.group("rid")),
                          remote_type=_TYPES[m.group("rid")[0]], remote_port=int(m.group("rport")),
                          port_guid=norm_guid(m.group("pguid")) if m.group("pguid") else None,
                          remote_port_guid=norm_guid(m.group("rpguid")) if m.group("rpguid") else None)
            cm = _COMMENT_SW.match(comment) or _COMMENT_CA.match(comment)
            if cm:
                link.remote_desc = cm.group("rdesc")
                link.remote_lid = int(cm.group("rlid"))
                link.width, link.speed = cm.group("width"), cm.group("speed")
                if "lid" in cm.groupdict() and cm.groupdict().get("lid") and cur.lid is None:
                    cur.lid = int(cm.group("lid"))
            cur.links.append(link)
            continue
        m = _P_LINE.match(line)
        if m:
            guid = norm_guid(m.group("guid"))
            node = by_guid.get(guid)
            ldesc = m.group("ldesc") if m.group("ldesc") is not None else (m.group("desc") or "")
            if node is None:
                node = IbNode(type=_TYPES[m.group("type")], guid=guid, nports=None, desc=ldesc,
                              lid=int(m.group("lid")))
                nodes.append(node)
                by_guid[guid] = node
            if m.group("rguid"):
                width = m.group("width")
                node.links.append(IbLink(
                    port=int(m.group("port")), remote_guid=norm_guid(m.group("rguid")),
                    remote_type=_TYPES[m.group("rtype")], remote_port=int(m.group("rport")),
                    remote_desc=m.group("rdesc"), remote_lid=int(m.group("rlid")),
                    width=None if width.startswith("?") else width,
                    speed=None if m.group("speed").startswith("?") else m.group("speed"),
                ))
    return nodes


def samples(device: str, text: str, ctx: IbContext | None = None) -> list[Sample]:
    """``ib_node`` and ``ib_link`` info samples, attributed to the fabric node they describe (resolved
    to inventory names through ``ctx``); ``device`` (the host that ran the tool) is the ``source`` label.

    ``ib_link``: device/port = the local end (inventory names); labels ``local_guid local_desc
    local_port`` (IB port number) ``remote_guid remote_desc remote_port remote_type remote_device
    remote_port_name width speed source``; value ``"remote_device:remote_port_name"``."""
    ctx = ctx or IbContext()
    nodes = parse(text)
    desc_of = {n.guid: n.desc for n in nodes}
    out: list[Sample] = []
    for n in nodes:
        name = ctx.device(n.guid, n.desc or None)
        out.append(Sample(name, None, "ib_node",
                          labels(guid=n.guid, type=n.type, ports=n.nports or "",
                                 lid=n.lid if n.lid is not None else "", source=device),
                          n.desc, "info"))
        for lk in n.links:
            rdesc = lk.remote_desc if lk.remote_desc is not None else desc_of.get(lk.remote_guid, "")
            ldev, lport = ctx.endpoint(n.guid, n.desc or None, lk.port, lk.port_guid)
            rdev, rport = ctx.endpoint(lk.remote_guid, rdesc or None, lk.remote_port, lk.remote_port_guid)
            out.append(Sample(
                ldev, lport, "ib_link",
                labels(local_guid=n.guid, local_desc=n.desc, local_port=lk.port, remote_guid=lk.remote_guid,
                       remote_desc=rdesc, remote_port=lk.remote_port, remote_type=lk.remote_type,
                       remote_device=rdev, remote_port_name=rport,
                       width=lk.width or "", speed=lk.speed or "", source=device),
                f"{rdev}:{rport}", "info"))
    return out
