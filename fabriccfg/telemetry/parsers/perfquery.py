"""``perfquery`` / ``perfquery -x`` output (libibmad ``_mad_dump_field``: ``Name:`` dots value).

Header ``# Port extended counters: Lid 1719 port 1 (CapMask: 0x5300 CapMask2: 0x0000002)`` (``-x``)
or ``# Port counters: Lid N port P (CapMask: 0x..)``. In ``-x`` output every counter is 64-bit
(PortCountersExtended, with the error counters when CapMask2 bit 1 is set), so all are ``sat64``;
in plain output they keep their PortCounters widths (``ib.md`` §5). ``perfquery -a`` aggregates all
ports (PortSelect 255): port ``ALL``. Several blocks (``-l`` loops ports) are accepted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.telemetry.model import Sample
from fabriccfg.telemetry.parsers._common import ib_kind

_HEADER = re.compile(
    r"^#\s*Port (?P<ext>extended )?counters:\s*Lid\s+(?P<lid>\d+)\s+port\s+(?P<port>\d+|ALL)"
    r"(?:\s*\(CapMask:\s*(?P<cap>0x[0-9a-fA-F]+)(?:\s+CapMask2:\s*(?P<cap2>0x[0-9a-fA-F]+))?\))?",
    re.IGNORECASE,
)
_FIELD = re.compile(r"^(?P<name>[A-Za-z0-9_]+):\.*(?P<value>\S+)\s*$")
_NOT_COUNTERS = frozenset({"PortSelect", "CounterSelect", "CounterSelect2"})


@dataclass
class PerfBlock:
    lid: int | None
    port: str
    extended: bool
    cap_mask: int | None = None
    cap_mask2: int | None = None
    counters: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"lid": self.lid, "port": self.port, "extended": self.extended, "cap_mask": self.cap_mask,
                "cap_mask2": self.cap_mask2, "counters": self.counters}


def parse(text: str) -> list[PerfBlock]:
    blocks: list[PerfBlock] = []
    cur: PerfBlock | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        m = _HEADER.match(line)
        if m:
            port = m.group("port").upper()
            cur = PerfBlock(
                lid=int(m.group("lid")), port="ALL" if port in ("ALL", "255") else port,
                extended=bool(m.group("ext")),
                cap_mask=int(m.group("cap"), 16) if m.group("cap") else None,
                cap_mask2=int(m.group("cap2"), 16) if m.group("cap2") else None,
            )
            blocks.append(cur)
            continue
        f = _FIELD.match(line)
        if not f:
            continue
        if cur is None:  # fields without a header: one anonymous block
            cur = PerfBlock(lid=None, port="1", extended=False)
            blocks.append(cur)
        name, value = f.group("name"), f.group("value")
        if name == "PortSelect":
            if value in ("255", "0xff", "0xFF"):
                cur.port = "ALL"
            continue
        if name in _NOT_COUNTERS:
            continue
        try:
            cur.counters[name] = int(value, 0)
        except ValueError:
            continue
    return blocks


def samples(device: str, text: str, port: str | None = None) -> list[Sample]:
    """Samples for ``device`` (the host whose HCA was queried). ``port``: the inventory port name of
    the queried HCA port (default: the IB port number from the header)."""
    out: list[Sample] = []
    blocks = parse(text)
    for b in blocks:
        pname = port if port is not None and len(blocks) == 1 else b.port
        for name, value in b.counters.items():
            out.append(Sample(device, pname, name, (), value, ib_kind(name, b.extended)))
    return out
