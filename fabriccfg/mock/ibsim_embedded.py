"""An MLNX-OS switch's embedded subnet manager, as OpenSM files for the ibsim backend.

The SM inside MLNX-OS is OpenSM; its ``ib sm`` / ``ib smnode`` / ``ib partition`` configuration
(``ib.md`` §2) maps onto ``opensm.conf`` and ``partitions.conf`` keys (``ib.md`` §3). This module
translates the rendered (or running) MLNX-OS configuration so the real OpenSM can run as that switch
in the simulator (attached to the switch's port 0). Lines it does not know are ignored, as the
embedded SM's defaults then apply (upstream OpenSM's, e.g. routing engine minhop).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_MTU = {"256": 1, "512": 2, "1K": 3, "2K": 4, "4K": 5}
"""MLNX-OS MTU words -> IBTA MTU codes (partitions.conf ``mtu=``; 4 = 2048, 5 = 4096)."""


@dataclass
class _Partition:
    pkey: int | None = None
    flags: list[str] = field(default_factory=list)
    members: list[str] = field(default_factory=list)


_MEMBER = re.compile(r"^member (?P<who>\S+) type (?P<type>full|limited|both)$")


def embedded_sm_files(config: str, device: str) -> dict[str, str] | None:
    """``{/etc/opensm/opensm.conf, /etc/opensm/partitions.conf}`` for ``device``'s embedded SM, or
    None when the configuration does not enable an SM on it."""
    enabled = False
    priority: str | None = None
    engine: str | None = None
    parts: dict[str, _Partition] = {"Default": _Partition(0x7FFF)}
    for raw in config.splitlines():
        line = raw.strip().removesuffix(" force").strip()
        if line == "ib sm":
            enabled = True
        elif m := re.fullmatch(r"ib smnode (\S+) sm-priority (\d+)", line):
            if m.group(1) == device:
                priority = m.group(2)
        elif m := re.fullmatch(r"ib sm (?:priority|sm-priority) (\d+)", line):
            priority = m.group(1)
        elif m := re.fullmatch(r"ib sm routing-engines (\S+)", line):
            engine = m.group(1)
        elif m := re.fullmatch(r"ib partition (\S+) (.+)", line):
            p = parts.setdefault(m.group(1), _Partition())
            rest = m.group(2)
            if mm := re.fullmatch(r"pkey (0x[0-9a-fA-F]+|\d+)", rest):
                p.pkey = int(mm.group(1), 0)
            elif rest == "ipoib":
                p.flags.append("ipoib")
            elif mm := re.fullmatch(r"mtu (\S+)", rest):
                if mm.group(1) in _MTU:
                    p.flags.append(f"mtu={_MTU[mm.group(1)]}")
            elif mm := _MEMBER.match(rest):
                who = "ALL" if mm.group("who") == "all" else mm.group("who")
                p.members.append(f"{who}={mm.group('type')}")
    if not enabled:
        return None
    conf = [f"# embedded SM of {device}, from its MLNX-OS configuration (fabriccfg ibsim backend)"]
    if priority is not None:
        conf.append(f"sm_priority {priority}")
    if engine is not None:
        conf.append(f"routing_engine {engine}")
    conf.append("partition_config_file /etc/opensm/partitions.conf")
    lines = []
    for name, p in parts.items():
        members = p.members or (["ALL=full"] if name == "Default" else [])
        if p.pkey is None or not members:
            continue
        head = ",".join([f"{name}=0x{p.pkey:04x}", *p.flags])
        lines.append(f"{head}:{','.join(members)};")
    return {"/etc/opensm/opensm.conf": "\n".join(conf) + "\n",
            "/etc/opensm/partitions.conf": "\n".join(lines) + "\n"}
