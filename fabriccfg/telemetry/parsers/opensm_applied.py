"""What the running OpenSM applied: routing lines of its log, and P_Key tables read with ``smpquery``.

Log lines (OpenSM 3.3 ``osm_ucast_mgr.c``, ``osm_ucast_ftree.c``, ``osm_state_mgr.c``; seen in the real
OpenSM 3.3.23 log on ibsim, fixture ``tests/telemetry/fixtures/opensm_applied.txt``)::

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


def samples(device: str, text: str, ctx: IbContext | None = None) -> list[Sample]:
    """``sm_routing_engine`` / ``sm_root_switches`` / ``sm_routing_fallback`` / ``sm_log_state`` of
    ``device`` (from its log), and ``ib_pkeys`` per probed port (value: the non-zero P_Keys)."""
    ctx = ctx or IbContext()
    out: list[Sample] = []
    engine: str | None = None
    roots: int | None = None
    fallback: str | None = None
    pending: str | None = None
    state: str | None = None
    cur: tuple[str, str, str] | None = None
    keys: list[str] = []

    def flush() -> None:
        if cur is not None:
            dev, port = ctx.endpoint(cur[1], cur[2] or None, 1)
            out.append(Sample(dev, port, "ib_pkeys", labels(lid=cur[0], source=device),
                              " ".join(keys), "info"))

    for raw in text.splitlines():
        line = raw.rstrip()
        m = _MARK.match(line.strip())
        if m:
            flush()
            cur, keys = (m.group("lid"), m.group("guid"), m.group("desc").strip()), []
            continue
        m = _PKEY_ROW.match(line)
        if m and cur is not None:
            keys += [k for k in m.group(1).split() if int(k, 16) & 0x7FFF]
            continue
        if (m := _ENGINE.search(line)) is not None:  # a fallback line before it belongs to this sweep
            engine, fallback, pending = m.group(1), pending, None
        if (m := _ROOTS.search(line)) is not None:
            roots = int(m.group(1) or m.group(2))
        if _FAIL.search(line) is not None:
            pending = line.split("->", 1)[-1].strip()
        if (m := _STATE.search(line)) is not None:
            state = m.group(1).lower()
    flush()
    if engine is not None:
        out.append(Sample(device, None, "sm_routing_engine", (), engine, "info"))
    if roots is not None:
        out.append(Sample(device, None, "sm_root_switches", (), roots, "gauge"))
    if fallback is not None:
        out.append(Sample(device, None, "sm_routing_fallback", (), fallback, "info"))
    if state is not None:
        out.append(Sample(device, None, "sm_log_state", (), state, "state"))
    return out
