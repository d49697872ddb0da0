"""The telemetry data model: what collectors produce and what checks consume.

Contract for consumers (verify / watch / exporters):

- A :class:`Sample` is one observed value: ``Sample(device, port, metric, labels, value, kind)``.
  ``device`` is the inventory device name; ``port`` the port name as the inventory spells it (IF-MIB
  ``ifName``; IB ports as the switch numbers them, e.g. ``"1/5"`` or ``"5"``) or ``None`` for
  device-wide values. ``labels`` is a sorted tuple of ``(name, value)`` string pairs, e.g.
  ``(("prio", "3"),)`` or ``(("tc", "3"),)``; use :func:`labels` to build one. ``value`` is a
  Python ``int`` for counters and gauges (never a float: a 64-bit octet counter outgrows float64's
  exact range), ``str`` for states and info.
- ``kind`` says how to difference it:
  ``counter32`` / ``counter64`` wrap at 2**32 / 2**64; ``sat4`` .. ``sat64`` are InfiniBand
  saturating counters that stick at their maximum (2**bits - 1) and never wrap; ``gauge`` is a
  level (speed, queue depth); ``state`` an enumerated state (``oper_status`` "up"/"down",
  ``sm_state`` "master"...); ``info`` descriptive text (LLDP neighbour, ibnetdiscover link).
- A :class:`Snapshot` is one collection round: ``ts`` (unix seconds when the round started),
  ``samples`` (device -> list of samples), ``uptime`` (device -> sysUpTime in hundredths of a second,
  when the device has an agent), ``device_ts`` (device -> unix seconds when that device answered;
  rates use it), ``metric_ts`` ((device, metric) -> unix seconds when the source of that metric
  answered, where it is not the device's ``device_ts``: a CLI command read after the SNMP walk),
  ``errors`` (device -> list of one-line messages; a device with errors may still have partial samples).
- :func:`fabriccfg.telemetry.counters.compute_rates` ``(prev, cur) -> dict[SampleKey, Rate]`` gives
  a :class:`Rate` for every counter sample of ``cur``: ``value_per_s`` (float, or ``None`` when no
  rate can be given), ``status`` (see :data:`RateStatus`) and ``delta`` (exact int, or ``None``).
  Only ``status in ("ok", "wrapped")`` carries a rate. ``saturated`` means the IB counter sits at its
  maximum: report it, never compute a rate from it.

Metric names are canonical across platforms and shared with the mock's traffic model
(``fabriccfg.mock.traffic``); :data:`METRICS` lists them with their unit. Labels: ``prio`` (PFC
priority 0-7), ``tc`` (traffic class / queue 0-7). IB PMA counters keep their IBA names
(``PortXmitWait``, ``SymbolErrorCounter`` ...); note ``PortXmitData``/``PortRcvData`` are octets
divided by 4 (IBA units), and one ``PortXmitWait`` tick on Quantum is 8 bytes of lost transmission.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple

Kind = Literal["counter32", "counter64", "sat4", "sat8", "sat16", "sat32", "sat64", "gauge", "state", "info"]
COUNTER_KINDS: frozenset[str] = frozenset(
    {"counter32", "counter64", "sat4", "sat8", "sat16", "sat32", "sat64"})
SATURATING_BITS: dict[str, int] = {"sat4": 4, "sat8": 8, "sat16": 16, "sat32": 32, "sat64": 64}
WRAP_BITS: dict[str, int] = {"counter32": 32, "counter64": 64}

RateStatus = Literal["ok", "wrapped", "saturated", "reset", "first", "stale", "invalid"]
"""``ok``: a normal rate. ``wrapped``: a 32/64-bit wrap was accounted for; the rate is valid.
``saturated``: an IB counter at its maximum, no rate. ``reset``: the device rebooted (sysUpTime went
back) or the counter was cleared; no rate. ``first``: no previous sample of this key. ``stale``: no
time elapsed between the two samples. ``invalid``: a non-integer value or a kind change."""

LabelSet = tuple[tuple[str, str], ...]
SampleKey = tuple[str, str | None, str, LabelSet]
"""(device, port, metric, labels): identifies one time series."""


def labels(**kv: object) -> LabelSet:
    """``labels(prio=3)`` -> ``(("prio", "3"),)``; sorted so equal label sets compare equal.

    Equal label sets are one shared tuple (a round builds ~10^6 samples from a few hundred label sets):
    less memory, and pickling a snapshot between processes writes each label set once."""
    if len(kv) == 1:
        (k, v), = kv.items()
        key: LabelSet = ((k, v if type(v) is str else str(v)),)
    else:
        key = tuple([(k, v if type(v) is str else str(v)) for k, v in kv.items()])
    made = _LABELSETS.get(key)
    if made is None:
        made = tuple(sorted(key))
        if len(_LABELSETS) < _LABELSETS_MAX:
            _LABELSETS[key] = made
    return made


def label(name: str, value: object) -> LabelSet:
    """``labels(name=value)`` for the one-label sets parsers build per sample, without the keyword call."""
    made = _ONE_LABEL.get((name, value))
    if made is None:
        made = labels(**{name: value})
        if len(_ONE_LABEL) < _LABELSETS_MAX:
            _ONE_LABEL[(name, value)] = made
    return made


_LABELSETS: dict[LabelSet, LabelSet] = {}
_ONE_LABEL: dict[tuple[str, object], LabelSet] = {}
_LABELSETS_MAX = 100_000
"""Bound on the shared label sets (label values come from devices: a hostile one cannot grow it)."""


class Sample(NamedTuple):
    """One observed value (a NamedTuple: collectors build millions of them, dataclasses cost ~3x)."""

    device: str
    port: str | None
    metric: str
    labels: LabelSet
    value: int | str
    kind: Kind

    @property
    def key(self) -> SampleKey:
        return (self.device, self.port, self.metric, self.labels)

    def label(self, name: str, default: str | None = None) -> str | None:
        for k, v in self.labels:
            if k == name:
                return v
        return default

    def to_json(self) -> list[Any]:
        return [self.device, self.port, self.metric, [list(p) for p in self.labels], self.value, self.kind]

    @classmethod
    def from_json(cls, row: list[Any]) -> Sample:
        dev, port, metric, lbls, value, kind = row
        return cls(dev, port, metric, tuple((str(a), str(b)) for a, b in lbls), value, kind)


new_sample = functools.partial(tuple.__new__, Sample)
"""``new_sample((device, port, metric, labels, value, kind))``: a :class:`Sample` built in C (the NamedTuple's
generated ``__new__`` is a Python call; collectors build ~10^6 a round)."""


@dataclass(slots=True)
class Snapshot:
    ts: float
    samples: dict[str, list[Sample]] = field(default_factory=dict)
    uptime: dict[str, int] = field(default_factory=dict)
    errors: dict[str, list[str]] = field(default_factory=dict)
    device_ts: dict[str, float] = field(default_factory=dict)
    metric_ts: dict[tuple[str, str], float] = field(default_factory=dict)
    """When the source of a device's metric answered, where that is not ``device_ts`` (its SNMP walk):
    a rate divides by the time between two reads of the same source, not of another one."""

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickled by columns (one tuple per field per device): a collector process sends ~10^6 samples
        a round, and a NamedTuple pickles through a Python call per sample on both ends."""
        cols = {dev: tuple(zip(*rows, strict=True)) for dev, rows in self.samples.items()}
        state = (self.ts, cols, self.uptime, self.errors, self.device_ts, self.metric_ts)
        return _snapshot_from_columns, (state,)

    def add(self, sample: Sample) -> None:
        self.samples.setdefault(sample.device, []).append(sample)

    def extend(self, samples: Iterable[Sample]) -> None:
        for s in samples:
            self.add(s)

    def error(self, device: str, message: str) -> None:
        self.errors.setdefault(device, []).append(message)

    def __iter__(self) -> Iterator[Sample]:
        for rows in self.samples.values():
            yield from rows

    def index(self) -> dict[SampleKey, Sample]:
        """key -> sample (the last one wins when a key repeats)."""
        return {s[:4]: s for rows in self.samples.values() for s in rows}  # s[:4] == s.key, built in C

    def get(self, device: str, port: str | None, metric: str, lbls: LabelSet = ()) -> Sample | None:
        for s in self.samples.get(device, ()):
            if s.port == port and s.metric == metric and s.labels == lbls:
                return s
        return None

    def select(self, metric: str, device: str | None = None) -> list[Sample]:
        rows = self.samples.get(device, []) if device is not None else list(self)
        return [s for s in rows if s.metric == metric]

    def time_of(self, device: str, metric: str | None = None) -> float:
        if metric is not None and self.metric_ts:
            t = self.metric_ts.get((device, metric))
            if t is not None:
                return t
        return self.device_ts.get(device, self.ts)

    def merge(self, other: Snapshot) -> None:
        """Fold ``other`` (e.g. the CLI half of a round) into this snapshot."""
        for dev, rows in other.samples.items():
            self.samples.setdefault(dev, []).extend(rows)
        for dev, msgs in other.errors.items():
            self.errors.setdefault(dev, []).extend(msgs)
        for dev, up in other.uptime.items():
            self.uptime.setdefault(dev, up)
        for dev, t in other.device_ts.items():
            self.device_ts.setdefault(dev, t)
        for dm, t in other.metric_ts.items():
            self.metric_ts.setdefault(dm, t)

    def to_json(self) -> dict[str, Any]:
        return {
            "ts": self.ts,
            "samples": {d: [s.to_json() for s in rows] for d, rows in self.samples.items()},
            "uptime": dict(self.uptime),
            "errors": {d: list(m) for d, m in self.errors.items()},
            "device_ts": dict(self.device_ts),
            "metric_ts": [[d, m, t] for (d, m), t in self.metric_ts.items()],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Snapshot:
        return cls(
            ts=float(data["ts"]),
            samples={d: [Sample.from_json(r) for r in rows] for d, rows in data.get("samples", {}).items()},
            uptime={d: int(v) for d, v in data.get("uptime", {}).items()},
            errors={d: list(m) for d, m in data.get("errors", {}).items()},
            device_ts={d: float(v) for d, v in data.get("device_ts", {}).items()},
            metric_ts={(str(d), str(m)): float(t) for d, m, t in data.get("metric_ts", [])},
        )


class Rate(NamedTuple):
    """One counter's rate between two snapshots (a NamedTuple: one per counter per round, ~900,000 at
    2,000 devices; a frozen dataclass cost three times as much to build)."""

    value_per_s: float | None
    status: RateStatus
    delta: int | None = None
    interval_s: float | None = None

    @property
    def ok(self) -> bool:
        return self.value_per_s is not None


new_rate = functools.partial(tuple.__new__, Rate)
"""``new_rate((value_per_s, status, delta, interval_s))``: a :class:`Rate` built in C (see ``new_sample``)."""


def _snapshot_from_columns(state: tuple[Any, ...]) -> Snapshot:
    """The inverse of :meth:`Snapshot.__reduce__`."""
    ts, cols, uptime, errors, device_ts, metric_ts = state
    samples = {dev: list(map(new_sample, zip(*c, strict=True))) for dev, c in cols.items()}
    return Snapshot(ts, samples, uptime, errors, device_ts, metric_ts)


# Canonical metric catalogue: name -> (usual kind, unit, description). Collectors and the mock emit
# these names; a platform may add its own, but the checks rely on these.
METRICS: dict[str, tuple[str, str, str]] = {
    # IF-MIB (ifXTable HC counters, ifTable error counters)
    "if_in_octets": ("counter64", "bytes", "ifHCInOctets"),
    "if_out_octets": ("counter64", "bytes", "ifHCOutOctets"),
    "if_in_ucast_pkts": ("counter64", "packets", "ifHCInUcastPkts"),
    "if_out_ucast_pkts": ("counter64", "packets", "ifHCOutUcastPkts"),
    "if_in_mcast_pkts": ("counter64", "packets", "ifHCInMulticastPkts"),
    "if_out_mcast_pkts": ("counter64", "packets", "ifHCOutMulticastPkts"),
    "if_in_bcast_pkts": ("counter64", "packets", "ifHCInBroadcastPkts"),
    "if_out_bcast_pkts": ("counter64", "packets", "ifHCOutBroadcastPkts"),
    "if_in_discards": ("counter32", "packets", "ifInDiscards"),
    "if_in_errors": ("counter32", "packets", "ifInErrors"),
    "if_out_discards": ("counter32", "packets", "ifOutDiscards"),
    "if_out_errors": ("counter32", "packets", "ifOutErrors"),
    "oper_status": ("state", "", "ifOperStatus: up, down, testing, unknown, dormant, notPresent, "
                                 "lowerLayerDown"),
    "admin_status": ("state", "", "ifAdminStatus: up, down, testing"),
    "speed_mbps": ("gauge", "Mb/s", "ifHighSpeed"),
    "if_alias": ("info", "", "ifAlias (port description)"),
    # PFC (IEEE8021-PFC-MIB totals; vendor per-priority tables; CLI)
    "pfc_requests": ("counter32", "frames", "ieee8021PfcRequests: PFC frames sent (all priorities)"),
    "pfc_indications": ("counter32", "frames", "ieee8021PfcIndications: PFC frames received (all prios)"),
    "pfc_rx_pause": ("counter64", "frames", "PFC pause frames received, label prio"),
    "pfc_tx_pause": ("counter64", "frames", "PFC pause frames sent, label prio"),
    "pfc_rx_pause_duration": ("counter64", "us", "time paused by received PFC, label prio"),
    "pfc_tx_pause_duration": ("counter64", "us", "time the port paused its peer, label prio"),
    "port_tx_wait_us": ("counter64", "us", "MELLANOX-QOS-MIB port TxWaitMicroseconds"),
    # queues / traffic classes
    "tc_tx_pkts": ("counter64", "packets", "packets transmitted from the queue, label tc"),
    "tc_tx_bytes": ("counter64", "bytes", "bytes transmitted from the queue, label tc"),
    "tc_wred_discard": ("counter64", "packets", "WRED drops on the queue, label tc"),
    "tc_no_buffer_discard": ("counter64", "packets", "drops for lack of buffer on the queue, label tc"),
    "tc_tx_discard": ("counter64", "packets", "all egress drops on the queue, label tc"),
    "ecn_marked": ("counter64", "packets", "ECN CE-marked packets, label tc"),
    # buffer occupancy watermarks (peak since the last read or clear; gauges, bytes; #15 micro-bursts)
    "queue_watermark_bytes": ("gauge", "bytes", "peak egress-queue occupancy since the last read, label tc"),
    "pg_shared_watermark_bytes": ("gauge", "bytes", "peak ingress PG shared-buffer use, label prio"),
    "pg_headroom_watermark_bytes": ("gauge", "bytes", "peak ingress PG headroom use, label prio"),
    # PFC watchdog
    "pfcwd_storm_detected": ("counter64", "events", "PFC watchdog storms detected, label prio"),
    "pfcwd_storm_restored": ("counter64", "events", "PFC watchdog storms restored, label prio"),
    "pfcwd_tx_drop": ("counter64", "packets", "packets dropped by the PFC watchdog action, label prio"),
    "pfcwd_status": ("state", "", "PFC watchdog queue state (operational, stormed), label prio"),
    # host NIC (ethtool -S and RDMA hw_counters)
    "np_cnp_sent": ("counter64", "packets", "CNPs sent by the notification point (receiver)"),
    "np_ecn_marked_roce_packets": ("counter64", "packets", "ECN-marked RoCE packets received"),
    "rp_cnp_handled": ("counter64", "packets", "CNPs handled by the reaction point (sender)"),
    "rp_cnp_ignored": ("counter64", "packets", "CNPs ignored by the reaction point"),
    "tx_pause_storm_warning_events": ("counter64", "events", "NIC pause-storm warnings"),
    "tx_pause_storm_error_events": ("counter64", "events", "NIC pause-storm errors (NIC stopped pausing)"),
    # InfiniBand PMA (perfquery -x, ibqueryerrors, MELLANOX-IF-VPI-MIB); IBA names
    "PortXmitData": ("sat64", "octets/4", "data octets sent divided by 4"),
    "PortRcvData": ("sat64", "octets/4", "data octets received divided by 4"),
    "PortXmitPkts": ("sat64", "packets", ""),
    "PortRcvPkts": ("sat64", "packets", ""),
    "PortXmitWait": ("sat64", "ticks", "ticks with data to send but no credits/arbitration "
                                        "(8 B each on Quantum)"),
    "SymbolErrorCounter": ("sat16", "errors", ""),
    "LinkErrorRecoveryCounter": ("sat8", "events", ""),
    "LinkDownedCounter": ("sat8", "events", ""),
    "PortRcvErrors": ("sat16", "packets", ""),
    "PortRcvRemotePhysicalErrors": ("sat16", "packets", ""),
    "PortRcvSwitchRelayErrors": ("sat16", "packets", ""),
    "PortXmitDiscards": ("sat16", "packets", ""),
    "PortXmitConstraintErrors": ("sat8", "packets", ""),
    "PortRcvConstraintErrors": ("sat8", "packets", ""),
    "LocalLinkIntegrityErrors": ("sat4", "events", "4 bits in PortCounters"),
    "ExcessiveBufferOverrunErrors": ("sat4", "events", "4 bits in PortCounters"),
    "VL15Dropped": ("sat16", "packets", ""),
    "QP1Dropped": ("sat16", "packets", ""),
    "ib_phys_state": ("state", "", "IB port physical state (linkup, polling, disabled ...)"),
    "ib_logical_state": ("state", "", "IB port logical state (down, init, armed, active)"),
    # topology / control plane (info and state)
    "lldp_neighbor": ("info", "", "value: remote system name; labels remote_port, remote_chassis"),
    "ib_link": ("info", "", "ibnetdiscover link; labels local_guid, local_desc, local_port, remote_guid, "
                            "remote_desc, remote_port, remote_type, width, speed; value 'width speed'"),
    "ib_node": ("info", "", "ibnetdiscover node; labels guid, type (switch|ca), ports, lid; value: node "
                            "description"),
    "sm_state": ("state", "", "subnet manager state (master, standby, discovering, notactive); labels guid, "
                              "lid, priority, activity"),
    "service_state": ("state", "", "systemd unit state (active, inactive, failed); label service"),
}
