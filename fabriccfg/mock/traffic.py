"""The mock fabric's traffic model: every counter as a deterministic function of (time, scenario, seed).

Why a model rather than random numbers: checks compare both ends of a link, follow pause frames
across the topology and difference counters over time, so the mock must be consistent everywhere
(A's ``if_out_octets`` == B's ``if_in_octets``, A's ``pfc_tx_pause.3`` == B's ``pfc_rx_pause.3``),
monotonic, and reproducible (same ``t``, scenarios and seed -> same numbers, in any process).

Time ``t`` is unix seconds (float); ``t0`` (default: construction time) is when the model starts.
Rates follow a slow sinusoid around a per-direction utilisation (25-60 % of line rate), integrated
in closed form, so reading a counter costs a few float operations whatever ``t`` is.

Canonical counter names (``port_counters`` keys; all ``int``):

* IF-MIB: ``if_in_octets if_out_octets if_in_ucast_pkts if_out_ucast_pkts`` (64-bit),
  ``if_in_errors if_out_errors if_in_discards if_out_discards`` (SNMP serves them as Counter32:
  value mod 2**32), ``oper_status`` (1 up / 2 down), ``speed_mbps``.
* PFC per priority p = 0..7: ``pfc_rx_pause.{p} pfc_tx_pause.{p}`` (frames) and
  ``pfc_rx_pause_duration.{p} pfc_tx_pause_duration.{p}`` (microseconds); totals
  ``pfc_requests`` (sent) / ``pfc_indications`` (received) (IEEE8021-PFC-MIB, Counter32 there);
  ``link_down_events`` (RoCE ports; mlx5 ``link_down_events_phy``). RoCE fabrics only.
* Per traffic class tc = 0..7 (egress queues): ``tc_tx_pkts.{tc} tc_tx_bytes.{tc}
  tc_wred_discard.{tc} tc_nobuffer_discard.{tc}`` (alias ``tc_no_buffer_discard.{tc}``),
  ``ecn_marked.{tc}`` (packets CE-marked by this port on egress). Priority p maps to tc p.
* PFC watchdog per priority: ``pfcwd_storm_detected.{p} pfcwd_storm_restored.{p}``
  (events) and ``pfcwd_tx_drop.{p}`` (packets dropped by the watchdog's drop action).
* Host NIC ports only (ConnectX; ethtool / RDMA hw_counters names): ``np_cnp_sent
  rp_cnp_handled rp_cnp_ignored np_ecn_marked_roce_packets``, ``rx_prio{p}_pause tx_prio{p}_pause
  rx_prio{p}_pause_duration tx_prio{p}_pause_duration`` (same values as ``pfc_*.{p}``),
  ``tx_pause_storm_warning_events tx_pause_storm_error_events``.
* InfiniBand fabrics only (perfquery names): ``PortXmitData PortRcvData`` (octets / 4),
  ``PortXmitPkts PortRcvPkts PortUnicastXmitPkts PortUnicastRcvPkts PortMulticastXmitPkts
  PortMulticastRcvPkts PortXmitWait`` (64-bit, PortCountersExtended), and the error counters
  ``SymbolErrorCounter LinkErrorRecoveryCounter LinkDownedCounter PortRcvErrors
  PortRcvRemotePhysicalErrors PortRcvSwitchRelayErrors PortXmitDiscards PortXmitConstraintErrors
  PortRcvConstraintErrors LocalLinkIntegrityErrors ExcessiveBufferOverrunErrors VL15Dropped
  QP1Dropped``, which SATURATE at their PortCounters width (:data:`IB_ERROR_BITS`, e.g. 65535
  for SymbolErrorCounter). On IB fabrics the ``if_*`` names are served too (ifHC octets = 4 x Data).

Magnitudes: 400 GbE ~ 50 GB/s per direction at 100 %, 4 KiB-ish RoCE payloads; HDR 200 Gb/s; a
continuous PFC pause from a NIC is ~20k frames/s; PortXmitWait ticks are 8 bytes (Quantum).

``device_state(device, t)``: ``sys_uptime_ticks`` (hundredths of a second, mod 2**32),
``boot_time`` (unix s), ``up`` (always True today: a reboot is instantaneous).

Runtime control (``fabriccfg mock inject``): :meth:`TrafficModel.inject` adds a scenario from ``t``
on, :meth:`TrafficModel.clear` ends them all at ``t``; neither changes a counter's past, so counters
stay monotonic. Traffic follows the inventory cabling; ``cabling-swap`` changes only what
:meth:`TrafficModel.neighbour` (LLDP, ibnetdiscover) reports. Scenario signatures:
:mod:`fabriccfg.mock.scenarios` and ``docs/mock-telemetry.md``.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from fabriccfg import catalog
from fabriccfg.inventory.models import Host, Switch
from fabriccfg.mock.scenarios import MICROBURST_SENDERS, Scenario, ScenarioError, parse
from fabriccfg.render.derive import BufferThresholds, buffer_thresholds

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric

M64 = 1 << 64
M32 = 1 << 32
INF = math.inf
PRIOS = tuple(range(8))

IB_ERROR_BITS: dict[str, int] = {
    "SymbolErrorCounter": 16,
    "LinkErrorRecoveryCounter": 8,
    "LinkDownedCounter": 8,
    "PortRcvErrors": 16,
    "PortRcvRemotePhysicalErrors": 16,
    "PortRcvSwitchRelayErrors": 16,
    "PortXmitDiscards": 16,
    "PortXmitConstraintErrors": 8,
    "PortRcvConstraintErrors": 8,
    "LocalLinkIntegrityErrors": 4,
    "ExcessiveBufferOverrunErrors": 4,
    "VL15Dropped": 16,
    "QP1Dropped": 16,
}
"""Saturating widths of the IB PortCounters error counters (libibmad fields.c)."""

IB_EXT_NAMES: tuple[str, ...] = (
    "PortXmitData",
    "PortRcvData",
    "PortXmitPkts",
    "PortRcvPkts",
    "PortUnicastXmitPkts",
    "PortUnicastRcvPkts",
    "PortMulticastXmitPkts",
    "PortMulticastRcvPkts",
)
"""The 64-bit PortCountersExtended data counters (``perfquery -x`` order)."""
IB_DATA_NAMES: tuple[str, ...] = (*IB_EXT_NAMES, "PortXmitWait")
"""64-bit PortCountersExtended names (plus PortXmitWait); never wrap in practice, never offset."""

IF_NAMES: tuple[str, ...] = (
    "if_in_octets",
    "if_out_octets",
    "if_in_ucast_pkts",
    "if_out_ucast_pkts",
    "if_in_errors",
    "if_out_errors",
    "if_in_discards",
    "if_out_discards",
)
STATE_NAMES: frozenset[str] = frozenset({"oper_status", "speed_mbps"})

ROCE_PKT_BYTES = 4166
"""Average RoCE frame on the wire: 4096 B payload + BTH/UDP/IP/Ethernet headers and FCS."""
IB_PKT_BYTES = 4126
"""Average IB packet: 4096 B payload + LRH/BTH/ICRC/VCRC."""
SINE_PERIODS = (5.0, 10.0)
"""Traffic follows the training iteration: periods divide FLAP_PERIOD so flap losses repeat exactly."""
FLAP_PERIOD = 10.0
FLAP_DOWN = 2.0
FLAP_FIRST = 1.0
HOP_DELAY = 1.5
"""Seconds between pause-storm hops (origin leaf port, then leaf uplinks, then spines ...)."""
REBOOT_AFTER = 10.0
BG_SINCE = 3 * 86400.0
"""Background counters (micro-burst pauses, ECN marks) have been counting for this long at ``t0``."""
STORM_PAUSE_RATE = 20_000.0
"""Pause frames per second of a NIC that pauses continuously (refresh at about half a quanta at 400G)."""
LOSSY_DROP_SHARE = 0.002
"""Share of a switch port's packets dropped when its RoCE class is lossy (no PFC to absorb bursts)."""
IB_TICKS_PER_S_PER_GBPS = 1e9 / 8 / 8
"""PortXmitWait ticks per second per Gb/s of link rate when fully stalled (8 bytes per tick on Quantum)."""
WM_PERIOD = 10.0
"""Watermarks are the peak of the read period: the 10 s window ``t`` falls in."""
MICROBURST_BYTES = 128 * 1024
"""What each incast sender has in flight when the burst lands (one 128 KiB collective chunk): N
senders into one port leave (N - 1) x this in its egress queue (one sender drains at line rate)."""
MICROBURST_CAP = 0.95
"""Share of ECN Kmax a micro-burst peaks at, at most: marking at Pmax and PFC stop it there."""
MICROBURST_UTIL = 0.2
"""Mean utilisation of a micro-bursting port: the bursts are short, the per-second rate stays low."""
MICROBURST_MARK_SHARE = 0.001
"""ECN-marked share of a micro-bursting port's packets (only the burst's tail crosses Kmin)."""
STALL_QUEUE = 1.2
"""A paused egress queue (pause storm) holds what arrived: it rises above Kmax (lossless: no drop)."""
STORM_HEADROOM = 0.9
"""Share of its headroom a port uses while it keeps pausing its peer (a full in-flight window each time)."""
ECN_MISSET_QUEUE = 1.5
"""``ecn-misconfig``: with thresholds above the buffer DCQCN never slows the senders; the lossless
queues run past the intended Kmax up to where PFC stops them."""
CONGESTION_QUEUE = 0.4
"""``congestion``: DCQCN holds the incast queue between Kmin and Kmax (it marks 3 % of the packets)."""


def _unit(seed: int, *key: object) -> float:
    """A stable pseudo-random number in [0, 1) for ``key`` (same in every process; not ``hash()``)."""
    text = f"{seed}|" + "|".join(map(str, key))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") / 2**64


class _Events:
    """A counter made of piecewise-constant rates and periodic one-off steps.

    One object is shared by both ends of a link when the two ends count the same frames (a pause
    frame sent by A is received by B), so both ends always agree.
    """

    __slots__ = ("offset", "periodic", "segs")

    def __init__(self) -> None:
        self.segs: list[tuple[float, float, float]] = []
        self.periodic: list[tuple[float, float, float, float]] = []  # (first event, end, period, amount)
        self.offset = 0

    def value(self, t: float) -> float:
        v = 0.0
        for s, e, r in self.segs:
            if t > s:
                v += r * ((t if t < e else e) - s)
        for first, e, period, amount in self.periodic:
            if t >= first and first < e:
                n = math.floor((t - first) / period) + 1
                if e != INF:
                    n = min(n, math.ceil((e - first) / period))
                v += n * amount
        return v

    def mean_rate(self) -> float:
        return sum(r for _, _, r in self.segs) + sum(a / p for _, _, p, a in self.periodic)


class _Load:
    """Bytes sent in one direction of a link: a sinusoid around a utilisation, with windows and flaps."""

    __slots__ = (
        "amp",
        "bps",
        "flaps",
        "init",
        "oct_off",
        "omega",
        "phase",
        "pkt",
        "pkt_off",
        "t0",
        "util",
        "windows",
    )

    def __init__(
        self,
        bps: float,
        util: float,
        amp: float,
        *,
        period: float,
        phase: float,
        t0: float,
        init_s: float,
        pkt: int,
    ) -> None:
        self.bps = bps
        self.util = util
        self.amp = amp
        self.omega = 2 * math.pi / period
        self.phase = phase
        self.t0 = t0
        self.init = bps * util * init_s
        self.pkt = pkt
        self.windows: list[tuple[float, float, float]] = []  # elementary, non-overlapping (s, e, factor)
        self.flaps: list[tuple[float, float]] = []  # (first down, end) periodic down windows
        self.oct_off = 0
        self.pkt_off = 0

    def _base(self, t: float) -> float:
        x = t - self.t0
        return self.util * (
            x + self.amp / self.omega * (math.cos(self.phase) - math.cos(self.omega * x + self.phase))
        )

    def _windowed(self, t: float) -> float:
        v = self._base(t)
        for s, e, f in self.windows:
            if t > s:
                v += (f - 1.0) * (self._base(t if t < e else e) - self._base(s))
        return v

    def octets(self, t: float) -> float:
        v = self._windowed(t)
        for first, e in self.flaps:
            v -= self._flap_loss(first, e, t)
        return self.init + self.bps * v

    def _flap_loss(self, first: float, e: float, t: float) -> float:
        if t <= first or e <= first:
            return 0.0
        fn = self._windowed if self.windows else self._base
        n_all = math.inf if e == INF else math.ceil((e - first) / FLAP_PERIOD)
        k_cur = math.floor((t - first) / FLAP_PERIOD)
        k_cur = int(min(k_cur, n_all - 1)) if n_all != math.inf else k_cur
        loss = 0.0
        if not self.windows:
            one = fn(first + FLAP_DOWN) - fn(first)  # identical for every window (period multiple)
            loss = k_cur * one
        else:
            for k in range(k_cur):
                a = first + k * FLAP_PERIOD
                loss += fn(min(a + FLAP_DOWN, e)) - fn(a)
        a = first + k_cur * FLAP_PERIOD
        end = min(a + FLAP_DOWN, e, t)
        if end > a:
            loss += fn(end) - fn(a)
        return loss

    def is_down(self, t: float) -> bool:
        return any(first <= t < e and (t - first) % FLAP_PERIOD < FLAP_DOWN for first, e in self.flaps)

    def rate_bps(self) -> float:
        return self.bps * self.util


@dataclass
class _Port:
    device: str
    name: str
    kind: str  # "switch" | "host" | "sm"
    if_index: int
    speed_gbps: int
    peer: tuple[str, str] | None
    out: _Load
    inn: _Load
    ev: dict[str, _Events] = field(default_factory=dict)
    names: tuple[str, ...] = ()


@dataclass
class _Activation:
    scenario: Scenario
    start: float
    end: float = INF


def _combine(windows: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Overlapping (start, end, factor) windows -> elementary intervals with the product factor."""
    if len(windows) <= 1:
        return list(windows)
    bounds = sorted({b for s, e, _ in windows for b in (s, e)})
    out: list[tuple[float, float, float]] = []
    for a, b in itertools.pairwise(bounds):
        f = 1.0
        for s, e, w in windows:
            if s <= a and b <= e:
                f *= w
        if f != 1.0:
            out.append((a, b, f))
    return out


class TrafficModel:
    """Counters of every cabled port of ``fabric`` under ``scenarios`` (see the module docstring)."""

    def __init__(
        self,
        fabric: Fabric,
        scenarios: Iterable[Scenario | str] = (),
        seed: int = 0,
        t0: float | None = None,
    ) -> None:
        self.fabric = fabric
        self.seed = seed
        self.t0 = time.time() if t0 is None else float(t0)
        self.technology = fabric.fabric.technology
        roce = fabric.roce
        self.lossless_prio = roce.roce_priority if roce is not None else 3
        self.cnp_prio = roce.cnp_priority if roce is not None else 6
        self._order: dict[str, list[str]] = {}
        self._index: dict[tuple[str, str], int] = {}
        self._speed: dict[tuple[str, str], int] = {}
        self._index_ports()
        self._activations: list[_Activation] = []
        self.counter_wrap = False
        for sc in scenarios:
            s = parse(sc, fabric) if isinstance(sc, str) else sc
            if s.name == "healthy":
                continue
            if s.name == "counter-wrap":
                self.counter_wrap = True
                continue
            self._activations.append(_Activation(s, self.t0 + s.onset))
        self._uptime0: dict[str, float] = {
            d: 86400.0 * (1 + 59 * _unit(seed, "uptime", d)) for d in fabric.devices
        }
        self._reboot_cache: dict[tuple[str, str], dict[str, int]] = {}
        self._lossy: dict[str, list[tuple[float, float, int]]] = {}
        """Switch -> windows (start, end, queue) in which its running config put RoCE in a lossy class."""
        self._build()

    # ------------------------------------------------------------------ topology
    def _index_ports(self) -> None:
        fab = self.fabric
        cabled: dict[str, set[str]] = {}
        for d, p in fab.neighbours:
            cabled.setdefault(d, set()).add(p)
        default = fab.fabric.link_speed
        for name, dev in fab.devices.items():
            ports = cabled.get(name, set())
            if not ports:
                self._order[name] = []
                continue
            ordered: dict[str, int] = {}
            lane_speed: dict[str, int] = {}
            if isinstance(dev, Switch):
                info = catalog.info(dev.platform)
                for i, (pname, share) in enumerate(info.port_names(dev).items(), start=1):
                    ordered[pname] = i
                    lane_speed[pname] = share
                dev_speed = dev.port_speed or default
            elif isinstance(dev, Host):
                for i, nic in enumerate(dev.nics, start=1):
                    ordered[nic.name] = i
                    lane_speed[nic.name] = nic.speed or 0
                dev_speed = default
            else:
                ordered[dev.hca] = 1
                dev_speed = default
            nxt = max(ordered.values(), default=0) + 1
            for p in sorted(ports - set(ordered)):
                ordered[p] = nxt
                nxt += 1
            mine = sorted((ordered[p], p) for p in ports)
            self._order[name] = [p for _, p in mine]
            for idx, p in mine:
                self._index[(name, p)] = idx
                link = fab.link_by_end.get((name, p))
                self._speed[(name, p)] = (
                    (link.speed if link and link.speed else None) or lane_speed.get(p) or dev_speed
                )

    def ports(self, device: str) -> list[str]:
        """Cabled ports of ``device`` in ifIndex order (switch ports, host NIC names, SM-host HCA)."""
        return list(self._order[device])

    def if_index(self, device: str, port: str) -> int:
        """ifIndex of ``port`` (switches: front-panel position; hosts: NIC position), 1-based."""
        return self._index[(device, port)]

    def speed_gbps(self, device: str, port: str) -> int:
        return self._speed[(device, port)]

    def neighbour(self, device: str, port: str, t: float | None = None) -> tuple[str, str] | None:
        """The physical peer of ``device:port`` at ``t`` (respects ``cabling-swap``)."""
        t = self._now(t)
        peer = self.fabric.neighbours.get((device, port))
        for act in self._activations:
            sc = act.scenario
            if sc.name != "cabling-swap" or not (act.start <= t < act.end):
                continue
            assert sc.device is not None and sc.port is not None and sc.other is not None
            a, b = (sc.device, sc.port), sc.other
            pa, pb = self.fabric.neighbours.get(a), self.fabric.neighbours.get(b)
            # the cable that was in A is now in B and vice versa
            if (device, port) == a:
                peer = pb
            elif (device, port) == b:
                peer = pa
            elif pa is not None and (device, port) == pa:
                peer = b
            elif pb is not None and (device, port) == pb:
                peer = a
        return peer

    def _now(self, t: float | None) -> float:
        return time.time() if t is None else t

    # ------------------------------------------------------------------ build
    def _kind(self, device: str) -> str:
        k = self.fabric.devices[device].kind
        return "sm" if k == "sm-host" else k

    def _build(self) -> None:
        fab, seed = self.fabric, self.seed
        ib = self.technology == "infiniband"
        pkt = IB_PKT_BYTES if ib else ROCE_PKT_BYTES
        loads: dict[tuple[str, str], _Load] = {}
        for dev, port in self._index:
            gbps = self._speed[(dev, port)]
            u = _unit(seed, "load", dev, port)
            loads[(dev, port)] = _Load(
                bps=gbps * 1e9 / 8,
                util=0.25 + 0.35 * u,
                amp=0.05 + 0.15 * _unit(seed, "amp", dev, port),
                period=SINE_PERIODS[int(_unit(seed, "period", dev, port) * len(SINE_PERIODS))],
                phase=2 * math.pi * _unit(seed, "phase", dev, port),
                t0=self.t0,
                init_s=3600.0 * (1 + 71 * _unit(seed, "init", dev, port)),
                pkt=pkt,
            )
        self._ports: dict[tuple[str, str], _Port] = {}
        idle = _Load(1.0, 0.0, 0.0, period=10.0, phase=0.0, t0=self.t0, init_s=0.0, pkt=pkt)
        for (dev, port), idx in self._index.items():
            peer = fab.neighbours.get((dev, port))
            inn = loads.get(peer, idle) if peer is not None else idle
            self._ports[(dev, port)] = _Port(
                dev, port, self._kind(dev), idx, self._speed[(dev, port)], peer, loads[(dev, port)], inn
            )
        for p in self._ports.values():
            p.names = self._names_for(p)
        self._wm: dict[tuple[str, str], list[tuple[float, float, str, float]]] = {}
        """port -> (start, end, metric.label, bytes): what the scenarios push its watermarks to."""
        self._background()
        raw_windows: dict[tuple[str, str], list[tuple[float, float, float]]] = {}
        for act in self._activations:
            self._apply(act, raw_windows)
        self._lossy_drops()
        for act in self._activations:
            if act.scenario.name == "ecn-misconfig" and act.start < act.end:
                self._no_marks(act.scenario.device or "", act.start, act.end)
        for key, wins in raw_windows.items():
            loads[key].windows = _combine(wins)
        if self.counter_wrap:
            self._wrap_offsets()

    def _names_for(self, p: _Port) -> tuple[str, ...]:
        names: list[str] = [*IF_NAMES]
        if self.technology == "infiniband":
            names += IB_DATA_NAMES
            names += IB_ERROR_BITS
            return tuple(names)
        names += [f"pfc_{d}_pause{s}.{q}" for d in ("rx", "tx") for s in ("", "_duration") for q in PRIOS]
        names += ["pfc_requests", "pfc_indications", "link_down_events"]
        if p.kind == "switch":
            names += [
                f"{n}.{q}"
                for n in (
                    "tc_tx_pkts",
                    "tc_tx_bytes",
                    "tc_wred_discard",
                    "tc_nobuffer_discard",
                    "tc_no_buffer_discard",
                    "ecn_marked",
                )
                for q in PRIOS
            ]
            names += [
                f"{n}.{q}"
                for n in ("pfcwd_storm_detected", "pfcwd_storm_restored", "pfcwd_tx_drop")
                for q in PRIOS
            ]
        else:
            names += [f"{d}_prio{q}_pause{s}" for d in ("rx", "tx") for s in ("", "_duration") for q in PRIOS]
            names += [
                "np_cnp_sent",
                "rp_cnp_handled",
                "rp_cnp_ignored",
                "np_ecn_marked_roce_packets",
                "tx_pause_storm_warning_events",
                "tx_pause_storm_error_events",
            ]
        return tuple(names)

    # event helpers ------------------------------------------------------
    def _ev(self, key: tuple[str, str], name: str) -> _Events:
        p = self._ports[key]
        ev = p.ev.get(name)
        if ev is None:
            ev = p.ev[name] = _Events()
        return ev

    def _shared(self, sender: tuple[str, str], tx_name: str, rx_name: str) -> _Events:
        """One event source counted as ``tx_name`` at ``sender`` and ``rx_name`` at its peer."""
        ev = self._ev(sender, tx_name)
        peer = self._ports[sender].peer
        if peer is not None and peer in self._ports:
            self._ports[peer].ev[rx_name] = ev
        return ev

    def _pause(
        self, sender: tuple[str, str], prio: int, window: tuple[float, float], rate: float, duty: float
    ) -> None:
        """``sender`` transmits PFC pause on ``prio`` during ``window`` (its peer receives it)."""
        start, end = window
        self._shared(sender, f"pfc_tx_pause.{prio}", f"pfc_rx_pause.{prio}").segs.append((start, end, rate))
        self._shared(sender, f"pfc_tx_pause_duration.{prio}", f"pfc_rx_pause_duration.{prio}").segs.append(
            (start, end, duty * 1e6)
        )

    def _pkt_rate(self, key: tuple[str, str]) -> float:
        ld = self._ports[key].out
        return ld.rate_bps() / ld.pkt

    def _background(self) -> None:
        t0, seed = self.t0, self.seed
        for key, p in self._ports.items():
            u = _unit(seed, "bg", *key)
            if self.technology == "infiniband":
                if p.kind == "switch":  # a little credit wait on switch egress (0.001-0.003 % of the time)
                    self._ev(key, "PortXmitWait").segs.append(
                        (self.t0 - BG_SINCE, INF, 2e-5 * (0.5 + u) * p.speed_gbps * IB_TICKS_PER_S_PER_GBPS)
                    )
                continue
            peer = p.peer
            if p.kind == "host" and peer is not None and peer in self._ports:
                # micro-burst pauses from the NIC, background ECN marks and CNPs
                self._pause(key, self.lossless_prio, (self.t0 - BG_SINCE, INF), 2 + 8 * u, (2 + 8 * u) * 2e-6)
                marks = 10 + 30 * u
                self._shared(
                    peer, f"ecn_marked.{self.lossless_prio}", "np_ecn_marked_roce_packets"
                ).segs.append((self.t0 - BG_SINCE, INF, marks))
                self._ev(key, "np_cnp_sent").segs.append((self.t0 - BG_SINCE, INF, marks * 0.5))
                self._ev(key, "rp_cnp_handled").segs.append(
                    (self.t0 - BG_SINCE, INF, 5 + 15 * _unit(seed, "rp", *key))
                )
        del t0

    # scenarios ------------------------------------------------------------
    def _host_ends(self, host: str, nic: str | None = None) -> list[tuple[tuple[str, str], tuple[str, str]]]:
        """(host NIC end, leaf end) pairs of ``host`` (only NIC ``nic`` when given)."""
        out = []
        for port in self._order.get(host, []):
            if nic is not None and port != nic:
                continue
            peer = self._ports[(host, port)].peer
            if peer is not None and peer in self._ports:
                out.append(((host, port), peer))
        return out

    def _apply(
        self, act: _Activation, windows: dict[tuple[str, str], list[tuple[float, float, float]]]
    ) -> None:
        sc, s, e = act.scenario, act.start, act.end
        P = self.lossless_prio
        if e <= s:
            return
        if sc.name == "congestion" and self.technology == "infiniband":
            # incast on IB: credit starvation on the leaf ports facing the host (no ECN/PFC)
            assert sc.device is not None
            for _nic_end, leaf_end in self._host_ends(sc.device):
                ld = self._ports[leaf_end].out
                windows.setdefault(leaf_end, []).append((s, e, min(0.95 / (ld.util * (1 + ld.amp)), 3.0)))
                gbps = self._ports[leaf_end].speed_gbps
                self._ev(leaf_end, "PortXmitWait").segs.append((s, e, 0.2 * gbps * IB_TICKS_PER_S_PER_GBPS))
        elif sc.name == "congestion":
            assert sc.device is not None
            for nic_end, leaf_end in self._host_ends(sc.device):
                ld = self._ports[leaf_end].out
                factor = min(0.95 / (ld.util * (1 + ld.amp)), 3.0)
                windows.setdefault(leaf_end, []).append((s, e, factor))
                pkts = 0.95 * ld.bps / ld.pkt
                marks = 0.03 * pkts
                self._shared(leaf_end, f"ecn_marked.{P}", "np_ecn_marked_roce_packets").segs.append(
                    (s, e, marks)
                )
                self._ev(nic_end, "np_cnp_sent").segs.append((s, e, 0.6 * marks))
                senders = [
                    k
                    for k in self._ports
                    if k[0] != sc.device and self._ports[k].kind == "host" and k[1] == nic_end[1]
                ]
                for snd in senders:
                    self._ev(snd, "rp_cnp_handled").segs.append((s, e, 0.6 * marks / len(senders)))
                self._pause(nic_end, P, (s, e), 300.0, 0.02)
                for up in self._uplinks(leaf_end[0]):
                    self._pause(up, P, (s, e), 80.0, 0.004)
                self._level(leaf_end, f"queue_watermark_bytes.{P}", s, e,
                            CONGESTION_QUEUE * self._kmax(leaf_end))
        elif sc.name == "pause-storm":
            assert sc.device is not None
            ends = self._host_ends(sc.device, sc.port)
            if not ends:
                return
            nic_end, leaf_end = ends[0]
            self._pause(nic_end, P, (s, e), STORM_PAUSE_RATE, 1.0)
            self._ev(nic_end, "tx_pause_storm_warning_events").periodic.append((s + 8.0, e, 8.0, 1.0))
            windows.setdefault(leaf_end, []).append((s, e, 0.002))
            self._level(leaf_end, f"queue_watermark_bytes.{P}", s, e, STALL_QUEUE * self._kmax(leaf_end))
            self._watchdog(leaf_end, s, e)
            # spread: BFS over switches, one hop every HOP_DELAY seconds
            visited = {leaf_end[0]}
            frontier = [leaf_end[0]]
            hop = 1
            rate, duty, stall = 4000.0, 0.4, 0.5
            while frontier:
                nxt: list[str] = []
                hs = s + hop * HOP_DELAY
                for sw in frontier:
                    for port in self._order.get(sw, []):
                        peer = self._ports[(sw, port)].peer
                        if peer is None or peer[0] in visited or peer not in self._ports:
                            continue
                        if self._ports[peer].kind != "switch":
                            continue
                        self._pause((sw, port), P, (hs, e), rate, duty)
                        windows.setdefault(peer, []).append((hs, e, stall))
                        # (sw, port) keeps pausing its peer: its ingress PG sits at Xoff and fills
                        # its headroom; the paused peer's egress queue holds what it cannot send
                        thr = self._thresholds((sw, port))
                        self._level((sw, port), f"pg_headroom_watermark_bytes.{P}", hs, e,
                                    STORM_HEADROOM * thr.headroom_bytes)
                        self._level((sw, port), f"pg_shared_watermark_bytes.{P}", hs, e,
                                    0.5 * self._kmax((sw, port)))
                        self._level(peer, f"queue_watermark_bytes.{P}", hs, e, STALL_QUEUE * self._kmax(peer))
                        if peer[0] not in nxt:
                            nxt.append(peer[0])
                visited.update(nxt)
                frontier = nxt
                hop += 1
                rate, duty, stall = rate * 0.4, duty * 0.4, min(1.0, stall + 0.3)
        elif sc.name == "ecn-misconfig":
            for port in self._order.get(sc.device or "", []):
                key = (sc.device or "", port)
                self._level(key, f"queue_watermark_bytes.{P}", s, e, ECN_MISSET_QUEUE * self._kmax(key))
        elif sc.name == "microburst":
            self._microburst(sc, s, e, windows)
        elif sc.name == "lossless-drop":
            key = (sc.device or "", sc.port or "")
            if key not in self._ports:
                return
            rate = 800.0
            if self.technology == "infiniband":
                self._ev(key, "PortXmitDiscards").segs.append((s, e, rate))
                self._ev(key, "if_out_discards").segs.append((s, e, rate))
            elif self._ports[key].kind == "switch":
                self._ev(key, f"tc_nobuffer_discard.{P}").segs.append((s, e, rate))
                self._ports[key].ev[f"tc_no_buffer_discard.{P}"] = self._ev(key, f"tc_nobuffer_discard.{P}")
                self._ev(key, "if_out_discards").segs.append((s, e, rate))
            else:
                self._ev(key, "if_in_discards").segs.append((s, e, rate))
        elif sc.name == "link-flap":
            key = (sc.device or "", sc.port or "")
            if key not in self._ports:
                return
            first = s + FLAP_FIRST
            flap_ends: list[tuple[str, str]] = [key]
            peer = self._ports[key].peer
            if peer is not None and peer in self._ports:
                flap_ends.append(peer)
            for end in flap_ends:
                self._ports[end].out.flaps.append((first, e))
                up_after = first + FLAP_DOWN  # errors counted when the link retrains
                if self.technology == "infiniband":
                    for name, amount in (
                        ("LinkDownedCounter", 1.0),
                        ("LinkErrorRecoveryCounter", 1.0),
                        ("SymbolErrorCounter", 37.0),
                        ("PortRcvErrors", 5.0),
                        ("if_in_errors", 5.0),
                    ):
                        self._ev(end, name).periodic.append((up_after, e + FLAP_DOWN, FLAP_PERIOD, amount))
                else:
                    self._ev(end, "link_down_events").periodic.append((first, e, FLAP_PERIOD, 1.0))
                    self._ev(end, "if_in_errors").periodic.append((up_after, e + FLAP_DOWN, FLAP_PERIOD, 5.0))
        elif sc.name == "ib-congestion":
            key = (sc.device or "", sc.port or "")
            if key not in self._ports:
                return
            gbps = self._ports[key].speed_gbps
            self._ev(key, "PortXmitWait").segs.append((s, e, 0.3 * gbps * IB_TICKS_PER_S_PER_GBPS))
            windows.setdefault(key, []).append((s, e, 0.7))
        elif sc.name == "ib-symbol-errors":
            key = (sc.device or "", sc.port or "")
            if key in self._ports:
                self._ev(key, "SymbolErrorCounter").segs.append((s, e, 20.0))

    # watermarks -------------------------------------------------------------
    def _thresholds(self, key: tuple[str, str]) -> BufferThresholds:
        """The rendered buffer levels of a switch port (the render's derivation in render/derive.py)."""
        dev = self.fabric.devices[key[0]]
        roce = self.fabric.roce
        ecn = roce.ecn if roce is not None else None
        fallback = BufferThresholds(ecn.kmin_bytes if ecn else None, ecn.kmax_bytes if ecn else None, 0)
        if not isinstance(dev, Switch):
            return fallback
        return buffer_thresholds(self.fabric, dev).get(key[1], fallback)

    def _kmax(self, key: tuple[str, str]) -> float:
        """ECN Kmax of the port; the intent's when ECN is off there (a size to scale occupancy by)."""
        kmax = self._thresholds(key).kmax_bytes
        if kmax is None:
            roce = self.fabric.roce
            kmax = roce.ecn.kmax_bytes if roce is not None else 1_500_000
        return float(kmax)

    def _level(self, key: tuple[str, str], name: str, start: float, end: float, level: float) -> None:
        """Watermark ``name`` (``metric.label``) of switch port ``key`` peaks at ``level`` B in [s, e)."""
        if key in self._ports and self._ports[key].kind == "switch" and end > start:
            self._wm.setdefault(key, []).append((start, end, name, level))

    def _microburst(self, sc: Scenario, s: float, e: float,
                    windows: dict[tuple[str, str], list[tuple[float, float, float]]]) -> None:
        """Incast of N senders into ``sc.device:sc.port``: its lossless egress queue peaks at
        (N - 1) x :data:`MICROBURST_BYTES` (at most :data:`MICROBURST_CAP` of Kmax) every read period;
        the ingress PGs of the (up to N) ports feeding it share that peak; the port's mean rate stays
        at :data:`MICROBURST_UTIL` of line rate and a few packets are ECN-marked."""
        key = (sc.device or "", sc.port or "")
        if key not in self._ports or self._ports[key].kind != "switch":
            return
        P = self.lossless_prio
        n = sc.count or MICROBURST_SENDERS
        kmax = self._kmax(key)
        peak = min((n - 1) * MICROBURST_BYTES, MICROBURST_CAP * kmax)
        self._level(key, f"queue_watermark_bytes.{P}", s, e, peak)
        ld = self._ports[key].out
        windows.setdefault(key, []).append((s, e, MICROBURST_UTIL / (ld.util * (1 + ld.amp))))
        self._ev(key, f"ecn_marked.{P}").segs.append((s, e, MICROBURST_MARK_SHARE * self._pkt_rate(key)))
        others = [p for p in self._order.get(key[0], []) if p != key[1]]
        feeders = sorted(others, key=lambda p: _unit(self.seed, "feed", key[0], p))[: min(n, len(others))]
        for port in feeders:
            fkey = (key[0], port)
            self._level(fkey, f"pg_shared_watermark_bytes.{P}", s, e, peak / len(feeders))
            if peak >= 0.9 * kmax:  # the burst reached Xoff: a brief pause, a little headroom used
                self._level(fkey, f"pg_headroom_watermark_bytes.{P}", s, e,
                            0.2 * self._thresholds(fkey).headroom_bytes)

    def _no_marks(self, switch: str, s: float, e: float) -> None:
        """``ecn-misconfig``: ``switch`` marks nothing in [s, e) (each marking rate cancelled there; the
        NIC that counts the marks it receives shares the counter, so it sees none either)."""
        for port in self._order.get(switch, []):
            p = self._ports[(switch, port)]
            for name, ev in list(p.ev.items()):
                if not name.startswith("ecn_marked."):
                    continue
                for a, b, r in list(ev.segs):
                    lo, hi = max(a, s), min(b, e)
                    if hi > lo and r:
                        ev.segs.append((lo, hi, -r))

    def _lossy_drops(self) -> None:
        """RoCE in a lossy class: nothing pauses the senders, so micro-bursts that PFC absorbed before
        overflow the queue: drops at :data:`LOSSY_DROP_SHARE` of the port's packets, on that queue."""
        for device, windows in self._lossy.items():
            for port in self._order.get(device, []):
                key = (device, port)
                rate = LOSSY_DROP_SHARE * self._pkt_rate(key)
                for s, e, q in windows:
                    self._ev(key, f"tc_nobuffer_discard.{q}").segs.append((s, e, rate))
                    self._ev(key, "if_out_discards").segs.append((s, e, rate))

    def set_roce_class(self, device: str, priority: int | None, pfc: bool, t: float | None = None) -> None:
        """Couple ``device``'s running config to its counters from ``t`` on: RoCE (the fabric's DSCP) on
        ``priority`` with PFC on it or not. The intended lossless priority with PFC (or ``priority`` None:
        unknown) is healthy; anything else moves the RoCE share of the switch's egress to that queue and
        drops there (:meth:`_lossy_drops`). Past counters stay as they were."""
        if self.technology != "roce" or self._kind(device) != "switch":
            return
        now = self._now(t)
        windows = self._lossy.setdefault(device, [])
        open_q = windows[-1][2] if windows and windows[-1][1] == INF else None
        broken = priority is not None and not (priority == self.lossless_prio and pfc)
        want = priority if broken else None
        if want == open_q:
            return
        if open_q is not None:
            s, _, q = windows[-1]
            windows[-1] = (s, now, q)
        if want is not None:
            windows.append((now, INF, want))
        self._rebuild()

    def _moved_octets(self, p: _Port, t: float) -> tuple[int, float]:
        """(queue, octets of the RoCE share sent on another queue by ``t``) for a switch port."""
        q, moved = self.lossless_prio, 0.0
        for s, e, wq in self._lossy.get(p.device, ()):
            if t > s and wq != self.lossless_prio:
                q = wq
                moved += 0.9 * (p.out.octets(min(t, e)) - p.out.octets(s))
        return q, moved

    def _uplinks(self, switch: str) -> list[tuple[str, str]]:
        out = []
        for port in self._order.get(switch, []):
            peer = self._ports[(switch, port)].peer
            if peer is not None and peer in self._ports and self._ports[peer].kind == "switch":
                out.append((switch, port))
        return out

    def _watchdog(self, key: tuple[str, str], s: float, e: float) -> None:
        """PFC watchdog on ``key`` (the port receiving the storm): detect, drop, restore, detect again."""
        wd = self.fabric.roce.pfc_watchdog if self.fabric.roce is not None else None
        if wd is not None and not wd.enabled:
            return
        det = (wd.detection_ms if wd else 200) / 1000.0
        rest = (wd.restoration_ms if wd else 400) / 1000.0
        cycle = det + rest
        P = self.lossless_prio
        self._ev(key, f"pfcwd_storm_detected.{P}").periodic.append((s + det, e, cycle, 1.0))
        self._ev(key, f"pfcwd_storm_restored.{P}").periodic.append((s + det + rest, e + rest, cycle, 1.0))
        drop = self._pkt_rate(key) * rest / cycle
        self._ev(key, f"pfcwd_tx_drop.{P}").segs.append((s + det, e, drop))

    def _wrap_offsets(self) -> None:
        """``counter-wrap``: start every growing counter a few seconds before 2**64 (and so 2**32)."""
        seed = self.seed
        seen: set[int] = set()
        for key, p in self._ports.items():
            ld = p.out
            if id(ld) not in seen:
                seen.add(id(ld))
                w = 2.0 + 6.0 * _unit(seed, "wrap", *key)
                rate = ld.rate_bps()
                ld.oct_off = M64 - int(ld.init) - int(rate * w)
                ld.pkt_off = M64 - int(ld.init / ld.pkt) - int(rate / ld.pkt * (w + 1.0))
            for name, ev in p.ev.items():
                if id(ev) in seen or name in IB_ERROR_BITS or name in IB_DATA_NAMES:
                    continue
                seen.add(id(ev))
                r = ev.mean_rate()
                if r > 0:
                    w = 2.0 + 6.0 * _unit(seed, "wrap", *key, name)
                    ev.offset = M64 - int(ev.value(self.t0)) - int(r * w) - 1

    # ------------------------------------------------------------------ runtime control
    def inject(self, scenario: Scenario | str, t: float | None = None) -> Scenario:
        """Start a scenario at ``t`` (default now) plus its ``@onset``; not ``counter-wrap``."""
        sc = parse(scenario, self.fabric) if isinstance(scenario, str) else scenario
        if sc.name == "counter-wrap":
            raise ScenarioError("counter-wrap can only be chosen at start (mock up --scenario counter-wrap)")
        if sc.name != "healthy":
            self._activations.append(_Activation(sc, self._now(t) + sc.onset))
            self._rebuild()
        return sc

    def clear(self, t: float | None = None) -> None:
        """End every active scenario at ``t`` (counters stay monotonic; a reboot that happened stays)."""
        now = self._now(t)
        for act in self._activations:
            if act.end > now:
                if act.scenario.name == "reboot" and act.start + REBOOT_AFTER <= now:
                    continue
                act.end = now
        self._rebuild()

    def scenarios(self) -> list[str]:
        """Specs of the scenarios added so far (active or ended)."""
        return [str(a.scenario) for a in self._activations] + (["counter-wrap"] if self.counter_wrap else [])

    def _rebuild(self) -> None:
        self._reboot_cache.clear()
        self._build()

    # ------------------------------------------------------------------ counters and state
    def reboot_time(self, device: str) -> float | None:
        """When ``device`` restarted (the latest ``reboot`` scenario), or None."""
        best: float | None = None
        for act in self._activations:
            sc = act.scenario
            if sc.name == "reboot" and sc.device == device:
                r = act.start + REBOOT_AFTER
                if r < act.end and (best is None or r > best):
                    best = r
        return best

    def device_state(self, device: str, t: float | None = None) -> dict[str, int | float | bool]:
        """``sys_uptime_ticks`` (TimeTicks, mod 2**32), ``boot_time`` (unix s), ``up``."""
        t = self._now(t)
        boot = self.t0 - self._uptime0[device]
        r = self.reboot_time(device)
        if r is not None and t >= r:
            boot = r
        return {"sys_uptime_ticks": int((t - boot) * 100) % M32, "boot_time": boot, "up": True}

    def _raw(self, p: _Port, t: float) -> dict[str, int]:
        out = dict.fromkeys(p.names, 0)
        o_oct, i_oct = p.out.octets(t), p.inn.octets(t)
        out["if_out_octets"] = int(o_oct)
        out["if_in_octets"] = int(i_oct)
        out["if_out_ucast_pkts"] = int(o_oct / p.out.pkt)
        out["if_in_ucast_pkts"] = int(i_oct / p.inn.pkt)
        for name, ev in p.ev.items():
            out[name] = int(ev.value(t))
        if self.technology == "infiniband":
            out["PortXmitData"] = int(o_oct / 4)
            out["PortRcvData"] = int(i_oct / 4)
            out["PortXmitPkts"] = xp = out["if_out_ucast_pkts"]
            out["PortRcvPkts"] = rp = out["if_in_ucast_pkts"]
            out["PortMulticastXmitPkts"] = xm = xp // 5000
            out["PortMulticastRcvPkts"] = rm = rp // 5000
            out["PortUnicastXmitPkts"] = xp - xm
            out["PortUnicastRcvPkts"] = rp - rm
        else:
            if p.kind == "switch":
                P = self.lossless_prio
                q, moved = self._moved_octets(p, t) if p.device in self._lossy else (P, 0.0)
                out[f"tc_tx_bytes.{P}"] = int(o_oct * 0.9 - moved)
                out["tc_tx_bytes.0"] = int(o_oct * 0.1)
                out[f"tc_tx_pkts.{P}"] = int((o_oct * 0.9 - moved) / p.out.pkt)
                out["tc_tx_pkts.0"] = int(o_oct * 0.1 / p.out.pkt)
                if moved:
                    out[f"tc_tx_bytes.{q}"] += int(moved)
                    out[f"tc_tx_pkts.{q}"] += int(moved / p.out.pkt)
            self._derived(p, out)
        return out

    def port_counters(self, device: str, port: str, t: float | None = None) -> dict[str, int]:
        """All counters of ``device:port`` at ``t`` (default: now), canonical names (module docstring)."""
        t = self._now(t)
        p = self._ports[(device, port)]
        out = self._raw(p, t)
        r = self.reboot_time(device)
        if r is not None and t >= r:
            base = self._reboot_cache.get((device, port))
            if base is None:
                base = self._reboot_cache[(device, port)] = self._raw(p, r)
            for k, v in base.items():
                out[k] -= v
        elif self.counter_wrap:
            out["if_out_octets"] = (out["if_out_octets"] + p.out.oct_off) % M64
            out["if_in_octets"] = (out["if_in_octets"] + p.inn.oct_off) % M64
            out["if_out_ucast_pkts"] = (out["if_out_ucast_pkts"] + p.out.pkt_off) % M64
            out["if_in_ucast_pkts"] = (out["if_in_ucast_pkts"] + p.inn.pkt_off) % M64
            for name, ev in p.ev.items():
                if ev.offset:
                    out[name] = (out[name] + ev.offset) % M64
            self._derived(p, out)
        if self.technology == "infiniband":
            for name, bits in IB_ERROR_BITS.items():
                cap = (1 << bits) - 1
                out[name] = min(out[name], cap)
        out["oper_status"] = 2 if p.out.is_down(t) else 1
        out["speed_mbps"] = p.speed_gbps * 1000
        return out

    def watermarks(self, device: str, port: str, t: float | None = None) -> dict[str, int]:
        """Peak buffer occupancy of ``device:port`` in the read period ending at ``t`` (bytes, gauges):
        ``queue_watermark_bytes.{tc}`` (egress queue), ``pg_shared_watermark_bytes.{p}`` and
        ``pg_headroom_watermark_bytes.{p}`` (ingress priority group). Switch ports of RoCE fabrics only.

        The contract every platform's mock show renderer and parser meets (metric names in
        :data:`fabriccfg.telemetry.model.METRICS`); scenarios that build queues (``microburst``,
        ``pause-storm``) raise them, a healthy fabric keeps them a few packets deep.
        """
        t = self._now(t)
        p = self._ports[(device, port)]
        out: dict[str, int] = {}
        if self.technology == "infiniband" or p.kind != "switch":
            return out
        period = int(t // WM_PERIOD)
        for q in PRIOS:
            base = 2 + int(6 * _unit(self.seed, "wm", device, port, q, period))
            busy = q in (self.lossless_prio, 0)
            out[f"queue_watermark_bytes.{q}"] = base * ROCE_PKT_BYTES if busy else 0
            out[f"pg_shared_watermark_bytes.{q}"] = (base // 2) * ROCE_PKT_BYTES if busy else 0
            out[f"pg_headroom_watermark_bytes.{q}"] = 0
        since = period * WM_PERIOD
        for start, end, name, level in self._wm.get((device, port), ()):
            if start <= t and end > since:  # the episode falls in this read period
                peak = int(level * (0.92 + 0.08 * _unit(self.seed, "wmb", device, port, name, period)))
                out[name] = max(out[name], peak)
        return out

    def thresholds(self, device: str, port: str) -> BufferThresholds:
        """ECN Kmin/Kmax and PFC headroom of a switch port as rendered (what renderers print as config)."""
        return self._thresholds((device, port))

    def _derived(self, p: _Port, out: dict[str, int]) -> None:
        """The Ethernet counters that are sums or platform aliases of others (again after offsets)."""
        if self.technology == "infiniband":
            return
        out["pfc_requests"] = sum(out[f"pfc_tx_pause.{q}"] for q in PRIOS) % M64
        out["pfc_indications"] = sum(out[f"pfc_rx_pause.{q}"] for q in PRIOS) % M64
        if p.kind == "switch":
            for q in PRIOS:
                out[f"tc_no_buffer_discard.{q}"] = out[f"tc_nobuffer_discard.{q}"]
        else:
            for q in PRIOS:
                out[f"rx_prio{q}_pause"] = out[f"pfc_rx_pause.{q}"]
                out[f"tx_prio{q}_pause"] = out[f"pfc_tx_pause.{q}"]
                out[f"rx_prio{q}_pause_duration"] = out[f"pfc_rx_pause_duration.{q}"]
                out[f"tx_prio{q}_pause_duration"] = out[f"pfc_tx_pause_duration.{q}"]
