"""Synthetic telemetry for engine tests: snapshots built with the telemetry model, no network.

Every cabled port gets background counters (30 % utilisation, no errors); a scenario adds per-port
rates or states from a given time on. Counters are ``base + rate * t`` so any two snapshots give exact
rates; ``wrap`` starts every counter just below its wrap point, ``reboot`` restarts a device.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Host, ManagementHost, Switch
from fabriccfg.telemetry.model import Sample, Snapshot, labels

Key = tuple[str, str, str, tuple[tuple[str, str], ...]]


@dataclass
class Synth:
    fabric: Fabric
    rates: dict[Key, list[tuple[float, float]]] = field(default_factory=dict)
    """key -> [(from_t, extra rate per second)]"""
    states: dict[tuple[str, str, str], list[tuple[float, str | int]]] = field(default_factory=dict)
    wrap: bool = False
    reboots: dict[str, float] = field(default_factory=dict)
    swapped: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    unreachable: set[str] = field(default_factory=set)
    epoch: float = 1_000_000.0

    # ----- scenario helpers
    def add_rate(
        self, dev: str, port: str, metric: str, rate: float, since: float = 0.0, **lbl: object
    ) -> None:
        self.rates.setdefault((dev, port, metric, labels(**lbl)), []).append((since, rate))

    def set_state(self, dev: str, port: str, metric: str, value: str | int, since: float = 0.0) -> None:
        self.states.setdefault((dev, port, metric), []).append((since, value))

    def kind(self, dev: str) -> str:
        return catalog.info(self.fabric.devices[dev].platform).kind

    def speed_gbps(self, dev: str, port: str) -> int:
        return self.fabric.fabric.link_speed

    def pause_storm(
        self, host: str, nic: str = "mlx5_0", since: float = 0.0, hop_s: float = 1.5, prio: int = 3
    ) -> list[list[tuple[str, str]]]:
        """Continuous pause from ``host:nic``, spreading away from it hop by hop (onset + hop_s per hop).

        Returns the paused (receiving) ports per hop.
        """
        nb = self.fabric.neighbours
        first = nb[(host, nic)]
        hops: list[list[tuple[str, str]]] = []
        seen_dev = {host}
        frontier: deque[tuple[tuple[str, str], int]] = deque([(first, 0)])
        # the NIC sends pause: the leaf port receives it, its egress stalls
        while frontier:
            (dev, port), h = frontier.popleft()
            while len(hops) <= h:
                hops.append([])
            hops[h].append((dev, port))
            t = since + h * hop_s
            self.add_rate(dev, port, "pfc_rx_pause", 20000, t, prio=prio)
            self.add_rate(dev, port, "pfc_rx_pause_duration", 1_000_000, t, prio=prio)
            peer = nb[(dev, port)]
            self.add_rate(peer[0], peer[1], "pfc_tx_pause", 20000, t, prio=prio)
            self.add_rate(peer[0], peer[1], "pfc_tx_pause_duration", 1_000_000, t, prio=prio)
            if h == 0:
                self.add_rate(dev, port, "if_out_octets", -self._base_rate(dev, port), t)
            if dev in seen_dev or self.kind(dev) != "switch":
                continue
            seen_dev.add(dev)
            # the paused switch pauses every other port that feeds it
            for link in self.fabric.device_links(dev):
                for end in link.ends:
                    if end[0] == dev and end != (dev, port):
                        other = nb[end]
                        if other[0] in seen_dev:
                            continue
                        frontier.append((other, h + 1))
        return hops

    # ----- snapshot
    def _base_rate(self, dev: str, port: str) -> float:
        return self.speed_gbps(dev, port) * 1e9 / 8 * 0.3

    def _value(self, key: Key, base_rate: float, t: float, bits: int = 64, kind: str = "counter64") -> int:
        boot = self.reboots.get(key[0])
        t_eff = t - boot if boot is not None and t >= boot else t
        total = base_rate * t_eff
        for since, rate in self.rates.get(key, []):
            start = max(since, boot) if boot is not None and t >= boot else since
            if t_eff >= 0 and t > start:
                total += rate * (t - start)
        start_v = 0
        if self.wrap and kind.startswith("counter") and (boot is None or t < boot):
            start_v = (1 << bits) - 1000  # a few increments before the wrap
        v = int(start_v + max(total, 0))
        if kind.startswith("sat"):
            return min(v, (1 << bits) - 1)
        return v % (1 << bits)

    def _state(self, dev: str, port: str, metric: str, default: str | int, t: float) -> str | int:
        out = default
        for since, v in self.states.get((dev, port, metric), []):
            if t >= since:
                out = v
        return out

    def snapshot(self, t: float) -> Snapshot:
        snap = Snapshot(ts=self.epoch + t)
        tech = self.fabric.fabric.technology
        for dev_name, dev in self.fabric.devices.items():
            if dev_name in self.unreachable:
                snap.error(dev_name, "timeout: no answer")
                continue
            snap.device_ts[dev_name] = snap.ts
            boot = self.reboots.get(dev_name)
            up_s = t - boot if boot is not None and t >= boot else t + 86400
            snap.uptime[dev_name] = int(up_s * 100) % (1 << 32)
            for link in self.fabric.device_links(dev_name):
                for end in link.ends:
                    if end[0] != dev_name:
                        continue
                    self._port(snap, dev_name, end[1], t, tech)
            if isinstance(dev, ManagementHost) and self.fabric.ib is not None:
                self._sm(snap, dev_name, t)
        if tech == "infiniband":
            self._ibnet(snap, t)
        return snap

    def _c(
        self,
        snap: Snapshot,
        dev: str,
        port: str,
        metric: str,
        base: float,
        t: float,
        kind: str = "counter64",
        **lbl: object,
    ) -> None:
        lb = labels(**lbl)
        bits = {"counter32": 32, "counter64": 64, "sat8": 8, "sat16": 16, "sat32": 32, "sat64": 64}[kind]
        snap.add(
            Sample(dev, port, metric, lb, self._value((dev, port, metric, lb), base, t, bits, kind), kind)
        )  # type: ignore[arg-type]

    def _port(self, snap: Snapshot, dev: str, port: str, t: float, tech: str) -> None:
        rate = self._base_rate(dev, port)
        kind = self.kind(dev)
        self._c(snap, dev, port, "if_in_octets", rate, t)
        self._c(snap, dev, port, "if_out_octets", rate, t)
        self._c(snap, dev, port, "if_out_ucast_pkts", rate / 4096, t)
        self._c(snap, dev, port, "if_in_errors", 0, t, "counter32")
        self._c(snap, dev, port, "if_out_errors", 0, t, "counter32")
        snap.add(
            Sample(dev, port, "oper_status", (), self._state(dev, port, "oper_status", "up", t), "state")
        )
        snap.add(
            Sample(
                dev,
                port,
                "speed_mbps",
                (),
                self._state(dev, port, "speed_mbps", self.speed_gbps(dev, port) * 1000, t),
                "gauge",
            )
        )
        if tech == "roce":
            for p in (3,):
                self._c(snap, dev, port, "pfc_rx_pause", 0, t, prio=p)
                self._c(snap, dev, port, "pfc_tx_pause", 0, t, prio=p)
                self._c(snap, dev, port, "pfc_rx_pause_duration", 0, t, prio=p)
                self._c(snap, dev, port, "pfc_tx_pause_duration", 0, t, prio=p)
            if kind == "switch":
                self._c(snap, dev, port, "tc_tx_pkts", rate / 4096 * 0.8, t, tc=3)
                self._c(snap, dev, port, "ecn_marked", 0, t, tc=3)
                self._c(snap, dev, port, "tc_wred_discard", 0, t, tc=3)
                self._c(snap, dev, port, "tc_no_buffer_discard", 0, t, tc=3)
                self._c(snap, dev, port, "pfcwd_storm_detected", 0, t, prio=3)
                peer = self.swapped.get((dev, port), self.fabric.neighbours[(dev, port)])
                pdev = self.fabric.devices[peer[0]]
                rport = peer[1]
                if isinstance(pdev, Host):
                    rport = next((n.netdev or n.name for n in pdev.nics if n.name == peer[1]), peer[1])
                snap.add(Sample(dev, port, "lldp_neighbor", labels(remote_port=rport), peer[0], "info"))
            else:
                self._c(snap, dev, port, "np_cnp_sent", 0, t)
                self._c(snap, dev, port, "rp_cnp_handled", 0, t)
        else:
            self._c(snap, dev, port, "PortXmitData", rate / 4, t, "sat64")
            self._c(snap, dev, port, "PortXmitWait", 0, t, "sat64")
            self._c(snap, dev, port, "SymbolErrorCounter", 0, t, "sat16")
            self._c(snap, dev, port, "LinkDownedCounter", 0, t, "sat8")
            self._c(snap, dev, port, "PortXmitDiscards", 0, t, "sat16")

    def _guid(self, dev: str, port: str) -> tuple[str, str]:
        d = self.fabric.devices[dev]
        if isinstance(d, Switch):
            num = catalog.info(d.platform).fabric_port_number
            return d.guid or "", str(num(port) if num else port)
        if isinstance(d, Host):
            return next(n.guid or "" for n in d.nics if n.name == port), "1"
        assert isinstance(d, ManagementHost)
        return d.port_guid, "1"

    def _ibnet(self, snap: Snapshot, t: float) -> None:
        sm = next(iter(m.name for m in self.fabric.management_hosts), None)
        if sm is None:
            return
        for link in self.fabric.links:
            a, b = link.ends
            if a in self.swapped:
                b = self.swapped[a]
            elif b in self.swapped:
                a = self.swapped[b]
            ga, pa = self._guid(*a)
            gb, pb = self._guid(*b)
            snap.add(
                Sample(
                    sm,
                    None,
                    "ib_link",
                    labels(
                        local_guid=ga, local_port=pa, remote_guid=gb, remote_port=pb, width="4x", speed="HDR"
                    ),
                    "4x HDR",
                    "info",
                )
            )
        for i, sw in enumerate(self.fabric.switches):
            snap.add(
                Sample(
                    sm,
                    None,
                    "ib_link",
                    labels(
                        local_guid=sw.guid or "",
                        local_port="41",
                        remote_guid=f"0x00000000000a{i:04x}",
                        remote_port="1",
                        remote_desc="Mellanox Technologies Aggregation Node",
                        width="4x",
                        speed="HDR",
                    ),
                    "4x HDR",
                    "info",
                )
            )

    def _sm(self, snap: Snapshot, dev: str, t: float) -> None:
        assert self.fabric.ib is not None
        want = {s.device: s.priority for s in self.fabric.ib.subnet_managers}
        best = max(want, key=lambda d: want[d]) if want else None
        d = self.fabric.devices[dev]
        assert isinstance(d, ManagementHost)
        state = self._state(dev, "", "sm_state", "master" if dev == best else "standby", t)
        snap.add(
            Sample(dev, None, "sm_state", labels(guid=d.port_guid, priority=want.get(dev, 0)), state, "state")
        )
        for svc in ("opensmd", "sharp_am"):
            if svc == "sharp_am" and self.fabric.ib.sharp.am_host != dev:
                continue
            st = self._state(dev, svc, "service_state", "active", t)
            snap.add(Sample(dev, None, "service_state", labels(service=svc), st, "state"))
