"""``sminfo`` output (infiniband-diags sminfo.c)::

    sminfo: sm lid 1 sm guid 0x248a0703002b2a80, activity count 2541207 priority 15 state 3 SMINFO_MASTER

It describes the SM at the queried LID (by default the master the local port knows).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._common import IbContext, norm_guid

_LINE = re.compile(
    r"sminfo:\s*sm lid\s+(?P<lid>\d+)\s+sm guid\s+(?P<guid>0x[0-9a-fA-F]+),?\s+"
    r"activity count\s+(?P<act>\d+)\s+"
    r"priority\s+(?P<prio>\d+)\s+state\s+(?P<state>\d+)(?:\s+(?P<name>\S+))?"
)
STATES = {0: "notactive", 1: "discovering", 2: "standby", 3: "master"}


@dataclass
class SmInfo:
    lid: int
    guid: str
    activity: int
    priority: int
    state: str

    def to_json(self) -> dict[str, object]:
        return dict(self.__dict__)


def parse(text: str) -> list[SmInfo]:
    out = []
    for m in _LINE.finditer(text):
        code = int(m.group("state"))
        name = m.group("name") or ""
        state = STATES.get(code) or name.removeprefix("SMINFO_").lower() or str(code)
        out.append(SmInfo(int(m.group("lid")), norm_guid(m.group("guid")), int(m.group("act")),
                          int(m.group("prio")), state))
    return out


def samples(device: str, text: str, ctx: IbContext | None = None) -> list[Sample]:
    """``sm_state`` (state) and ``sm_activity`` (counter64) of the SM described, attributed to the
    inventory device owning that GUID (``source``: the host that ran ``sminfo``)."""
    ctx = ctx or IbContext()
    out: list[Sample] = []
    for sm in parse(text):
        name = ctx.device(sm.guid, None)
        lbl = labels(guid=sm.guid, lid=sm.lid, priority=sm.priority, source=device)
        out.append(Sample(name, None, "sm_state", lbl, sm.state, "state"))
        out.append(Sample(name, None, "sm_activity", labels(guid=sm.guid, source=device), sm.activity,
                          "counter32"))
    return out
