"""What the running OpenSM applied: routing lines of its log, and P_Key tables read with ``smpquery``.

Log lines (OpenSM 3.3 ``osm_ucast_mgr.c``, ``osm_ucast_ftree.c``, ``osm_state_mgr.c``; seen in the real
OpenSM 3.3.23 log on ibsim, fixture ``tests/telemetry/fixtures/opensm_applied/``)::

    ... 0x02 -> osm_ucast_mgr_process: ftree tables configured on all switches
    ... 0x02 -> fabric_dump_general_info:   - Fabric has 2 switches at rank 0 (roots)
    ... 0x02 -> SUBNET UP
    Falling back to default routing

``smpquery pkeys LID`` (infiniband-diags ``smpquery.c``), preceded by our marker line
``# pkeys lid LID guid GUID desc DESC``::

       0: 0xffff 0x8101 0x0000 0x0000 0x0000 0x0000 0x0000 0x0000
       ...
    64 pkeys capacity for this port

The last routing result in the log wins (the log accumulates over restarts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._common import IbContext

LOG_PATTERN = ("tables configured on all switches|switches at rank 0|valid root|Falling back|"
               "Failed to setup routing|SUBNET UP|Entering (MASTER|STANDBY) state")
"""``grep -E`` pattern selecting the lines :func:`samples` reads (no braces: it goes through str.format)."""

_ENGINE = re.compile(r"(\S+) tables configured on all switches")
_ROOTS = re.compile(r"Fabric has (\d+) switches at rank 0 \(roots\)|(\d+) valid root")
_FAIL = re.compile(r"Failed to setup routing engine '([^']*)'|Falling back to default routing")
_STATE = re.compile(r"Entering (MASTER|STANDBY) state")
_MARK = re.compile(r"^# pkeys lid (?P<lid>\d+) guid (?P<guid>0x[0-9a-fA-F]+) desc (?P<desc>.*)$")
_PKEY_ROW = re.compile(r"^\s*\d+:\s+((?:0x[0-9a-fA-F]{4}\s*)+)$")


@dataclass
class Applied:
    """The last routing result of the log, and the P_Key tables read (per marker)."""

    engine: str | None = None
    roots: int | None = None
    fallback: str | None = None
    state: str | None = None
    pkeys: list[tuple[str, str, str, list[str]]] = field(default_factory=list)
    """(lid, guid, desc, non-zero P_Keys as printed)."""

    def to_json(self) -> dict[str, object]:
        return {"engine": self.engine, "roots": self.roots, "fallback": self.fallback, "state": self.state,
                "pkeys": [{"lid": lid, "guid": g, "desc": d, "pkeys": k} for lid, g, d, k in self.pkeys]}


def parse(text: str) -> Applied:
    out = Applied()
    pending: str | None = None
    for raw in text.splitlines():
        line = raw.rstrip()
        m = _MARK.match(line.strip())
        if m:
            out.pkeys.append((m.group("lid"), m.group("guid"), m.group("desc").strip(), []))
            continue
        m = _PKEY_ROW.match(line)
        if m and out.pkeys:
            out.pkeys[-1][3].extend(k for k in m.group(1).split() if int(k, 16) & 0x7FFF)
            continue
        if (m := _ENGINE.search(line)) is not None:  # a fallback line before it belongs to this sweep
            out.engine, out.fallback, pending = m.group(1), pending, None
        if (m := _ROOTS.search(line)) is not None:
            out.roots = int(m.group(1) or m.group(2))
        if _FAIL.search(line) is not None:
            pending = line.split("->", 1)[-1].strip()
        if (m := _STATE.search(line)) is not None:
            out.state = m.group(1).lower()
    return out


def samples(device: str, text: str, ctx: IbContext | None = None) -> list[Sample]:
    """``sm_routing_engine`` / ``sm_root_switches`` / ``sm_routing_fallback`` / ``sm_log_state`` of
    ``device`` (from its log), and ``ib_pkeys`` per probed port (value: the non-zero P_Keys)."""
    ctx = ctx or IbContext()
    got = parse(text)
    out: list[Sample] = []
    for lid, guid, desc, keys in got.pkeys:
        dev, port = ctx.endpoint(guid, desc or None, 1)
        out.append(Sample(dev, port, "ib_pkeys", labels(lid=lid, source=device), " ".join(keys), "info"))
    if got.engine is not None:
        out.append(Sample(device, None, "sm_routing_engine", (), got.engine, "info"))
    if got.roots is not None:
        out.append(Sample(device, None, "sm_root_switches", (), got.roots, "gauge"))
    if got.fallback is not None:
        out.append(Sample(device, None, "sm_routing_fallback", (), got.fallback, "info"))
    if got.state is not None:
        out.append(Sample(device, None, "sm_log_state", (), got.state, "state"))
    return out
