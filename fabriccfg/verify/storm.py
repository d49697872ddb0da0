"""PFC pause-storm origin tracing over the intended topology.

A NIC that keeps sending pause frames stalls the leaf port facing it; the leaf's buffers for that
priority fill, so the leaf pauses its uplinks, the spines pause the other leaves, and so on. The port
that alarms first (or loudest) is rarely the culprit. Tracing walks the pause graph backwards: a port
that *receives* pause was paused by its cabled peer; if that peer is a switch, the switch only pauses
because one of its own ports is paused, so follow the paused port with the earliest onset on that
switch; the walk ends at a host NIC (the storm source) or at a switch port that pauses without being
paused itself (a congested or misbehaving switch). The inventory gives the cabling
(``fabric.neighbours``), the telemetry gives who is paused and since which sample point.

Paused = the share of time the port spent paused by received PFC on the lossless priority:
``pfc_rx_pause_duration`` (us/s) where the platform has it, else the frame rate times the time one
maximal pause frame stops a link (65535 quanta x 512 bit times) over the link speed.

Across ``watch --shard`` borders: a shard traces within the devices it polls and stops where the walk
reaches a switch another shard polls (it has no data for it). A storm from a host NIC is found by the
shard polling the switch the NIC pauses (the NIC's kind comes from the inventory, no data needed), so
the shards together report the same origins as one unsharded round. An origin that is a switch port
on a device in another shard (a congested switch, a pause loop) needs every shard's data:
:mod:`fabriccfg.verify.storm_prom` traces from what Prometheus scraped from all shards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fabriccfg.verify.model import Check, Context, Finding, analyzer, metric_index

PAUSE_BITS_PER_FRAME = 65535 * 512
"""Bit times one PFC frame with the maximal pause quanta stops the link for."""
SAME_FRACTION = 0.1
"""Paused shares closer than this (share of time) count as equal when choosing the next hop: polling
jitter moves them by a few percent from round to round, and the path must not follow that noise."""
_DIGITS = re.compile(r"(\d+)")


@dataclass
class PausedPort:
    device: str
    port: str
    priority: int
    fraction: float
    onset: int
    """Index of the first sample point of the trailing run of paused points (lower = earlier)."""
    tx_pause_per_s: float | None = None


def _natural(port: str) -> tuple[tuple[int, str], ...]:
    """'swp9' before 'swp10', 'Ethernet1/2' before 'Ethernet1/10'."""
    return tuple((int(p), "") if p.isdigit() else (-1, p) for p in _DIGITS.split(port) if p)


def next_hop(candidates: list[PausedPort]) -> PausedPort:
    """The paused port a switch's pause comes from: earliest onset, then the most paused, where shares
    within :data:`SAME_FRACTION` of the most paused tie and the lowest port name wins (deterministic,
    so a steady storm gives the same path every round)."""
    onset = min(p.onset for p in candidates)
    early = [p for p in candidates if p.onset == onset]
    top = max(p.fraction for p in early)
    return min((p for p in early if p.fraction >= top - SAME_FRACTION), key=lambda p: _natural(p.port))


@dataclass
class Storm:
    origin_device: str
    origin_port: str | None
    origin_kind: str
    path: list[str]
    """Port ends from the origin outwards: origin NIC, the leaf port it pauses, that leaf's paused
    uplink, the spine port facing it ..."""
    affected: list[str] = field(default_factory=list)
    onset: int = 0
    origin_tx_pause_per_s: float | None = None

    @property
    def origin(self) -> str:
        return f"{self.origin_device}:{self.origin_port}" if self.origin_port else self.origin_device

    def hops(self) -> list[str]:
        """Device-level path, e.g. ['gpu03', 'leaf-r0', 'spine1', 'leaf-r1', 'gpu01']."""
        out: list[str] = []
        for end in self.path:
            dev = end.split(":", 1)[0]
            if not out or out[-1] != dev:
                out.append(dev)
        return out


def _prio_ok(label: str | None, priority: int) -> bool:
    """The priority's own counter, or a port total (no ``prio`` label: EOS counts PFC frames per port
    only): as in the check engine, an unlabelled sample stands for the scoped (lossless) priority."""
    return label is None or label == str(priority)


def paused_fraction(ctx: Context, point: int, device: str, port: str, priority: int) -> float | None:
    pt = ctx.points[point]
    rows = pt.by_port.get((device, port, "pfc_rx_pause_duration"), [])
    for s in rows:
        if _prio_ok(s.label("prio"), priority):
            r = pt.rates.get(s.key)
            if r is not None and r.value_per_s is not None:
                return min(1.0, r.value_per_s / 1e6)
    rows = pt.by_port.get((device, port, "pfc_rx_pause"), [])
    for s in rows:
        if _prio_ok(s.label("prio"), priority):
            r = pt.rates.get(s.key)
            if r is None or r.value_per_s is None:
                return None
            speed = ctx.intended_speed_gbps(device, port)
            if not speed:
                return None
            return min(1.0, r.value_per_s * PAUSE_BITS_PER_FRAME / (speed * 1e9))
    return None


def _tx_pause(ctx: Context, device: str, port: str, priority: int) -> float | None:
    pt = ctx.points[-1]
    for s in pt.by_port.get((device, port, "pfc_tx_pause"), []):
        if _prio_ok(s.label("prio"), priority):
            r = pt.rates.get(s.key)
            return r.value_per_s if r is not None else None
    return None


def paused_ports(ctx: Context, threshold: float = 0.2) -> dict[tuple[str, str], PausedPort]:
    """Ports paused (share of time >= threshold) at the latest point, with their onset."""
    out: dict[tuple[str, str], PausedPort] = {}
    if not ctx.points:
        return out
    by_metric = metric_index(ctx.points[-1])  # not a walk over every sample of the round
    ports = {(d, p) for m in ("pfc_rx_pause", "pfc_rx_pause_duration") for d, p in by_metric.get(m, ())
             if p is not None}
    for device, port in sorted(ports, key=lambda k: (k[0], k[1] or "")):
        assert port is not None
        prio = ctx.lossless_priority(device)
        if prio is None:
            continue
        latest = paused_fraction(ctx, -1, device, port, prio)
        if latest is None or latest < threshold:
            continue
        onset = len(ctx.points) - 1
        for i in range(len(ctx.points) - 2, -1, -1):
            f = paused_fraction(ctx, i, device, port, prio)
            if f is None or f < threshold:
                break
            onset = i
        tx = _tx_pause(ctx, device, port, prio)
        out[(device, port)] = PausedPort(device, port, prio, latest, onset, tx)
    return out


def trace(ctx: Context, paused: dict[tuple[str, str], PausedPort]) -> list[Storm]:
    """Group paused ports by the origin their pause comes from; one :class:`Storm` per origin."""
    by_device: dict[str, list[PausedPort]] = {}
    for pp in paused.values():
        by_device.setdefault(pp.device, []).append(pp)
    storms: dict[str, Storm] = {}
    for start in sorted(paused.values(), key=lambda p: (p.onset, p.device, p.port)):
        chain: list[str] = []
        members: list[str] = []
        visited: set[tuple[str, str]] = set()
        cur: PausedPort | None = start
        origin: tuple[str, str | None, str] | None = None
        while cur is not None:
            visited.add((cur.device, cur.port))
            chain.append(f"{cur.device}:{cur.port}")
            peer = ctx.fabric.neighbours.get((cur.device, cur.port))
            if peer is None:  # not cabled in the intent: the pause comes from somewhere we cannot see
                origin = (cur.device, cur.port, "uncabled")
                break
            pdev, pport = peer
            chain.append(f"{pdev}:{pport}")
            kind = ctx.kind(pdev) or "unknown"
            if kind != "switch":
                origin = (pdev, pport, kind)
                break
            if not ctx.polls(pdev):
                break  # a shard border: the switch's own shard traces on from its paused ports
            nxt = [p for p in by_device.get(pdev, [])
                   if p.port != pport and (p.device, p.port) not in visited]
            if not nxt:
                if any(p.port != pport for p in by_device.get(pdev, [])):
                    # the pause goes round (a cyclic buffer dependency): name the loop by its members
                    first = next(i for i, end in enumerate(chain) if end.split(":", 1)[0] == pdev)
                    members = sorted({end.split(":", 1)[0] for end in chain[first:]})
                    origin = (members[0], None, "loop")
                else:
                    origin = (pdev, pport, "switch")
                break
            cur = next_hop(nxt)
        if origin is None:
            continue
        path = list(reversed(chain))
        key = "loop:" + ",".join(members) if origin[2] == "loop" else f"{origin[0]}:{origin[1]}"
        storm = storms.get(key)
        if storm is None:
            tx = _tx_pause(ctx, origin[0], origin[1], start.priority) if origin[1] else None
            storm = Storm(origin[0], origin[1], origin[2], path, onset=start.onset, origin_tx_pause_per_s=tx)
            storms[key] = storm
        elif len(path) > len(storm.path):
            storm.path = path
        for end in chain[::2]:
            if end not in storm.affected:
                storm.affected.append(end)
        storm.onset = min(storm.onset, start.onset)
    for s in storms.values():
        s.affected.sort()
    return sorted(storms.values(), key=lambda s: (s.onset, -len(s.affected), s.origin))


def describe(storm: Storm) -> str:
    if storm.origin_kind == "loop":
        devs = ", ".join(sorted(set(storm.hops())))
        return (f"PFC pause loop (a cyclic buffer dependency, no single origin) through {devs}: "
                f"{len(storm.affected)} port(s) paused; path " + " -> ".join(storm.path))
    what = {"gpu-host": "host NIC", "sm-host": "host NIC", "switch": "switch port",
            "uncabled": "uncabled port"}.get(storm.origin_kind, storm.origin_kind)
    return (f"PFC pause storm from {what} {storm.origin}: {len(storm.affected)} port(s) paused; path "
            + " -> ".join(storm.path))


@analyzer("pfc_storm_origin", needs_rates=True)
def pfc_storm_origin(check: Check, ctx: Context) -> list[Finding]:
    """One finding per storm origin, naming the origin and the hop-by-hop path."""
    threshold = float(check.params.get("paused_fraction", 0.05))
    storm_level = float(check.params.get("storm_fraction", 0.5))
    min_ports = int(check.params.get("min_paused_ports", 1))
    paused = paused_ports(ctx, threshold)
    out: list[Finding] = []
    for storm in trace(ctx, paused):
        worst_port = max((paused[(d, p)].fraction for d, _, p in (a.partition(":") for a in storm.affected)
                          if (d, p) in paused), default=0.0)
        if len(storm.affected) < min_ports or worst_port < storm_level:
            continue
        first = None
        if len(storm.path) > 1:
            fdev, _, fport = storm.path[1].partition(":")
            first = paused.get((fdev, fport))
        prio = first.priority if first else ctx.lossless_priority(storm.origin_device)
        out.append(Finding(
            check.id, check.severity, storm.origin_device, storm.origin_port, prio,
            value=round(first.fraction, 4) if first else None, threshold=f">= {storm_level} paused",
            hint=check.hint, message=describe(storm), origin=storm.origin, path=storm.path,
            details={"hops": storm.hops(), "affected": storm.affected, "origin_kind": storm.origin_kind,
                     "origin_tx_pause_per_s": storm.origin_tx_pause_per_s},
        ))
    return out
