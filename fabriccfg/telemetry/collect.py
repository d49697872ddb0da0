"""One collection round over the fabric: SNMP where a device has an agent, CLI for the rest.

What each device gets comes from its platform's ``TELEMETRY`` (:class:`~fabriccfg.telemetry.spec.
TelemetrySpec`): SNMP tables polled in one multi-column GETBULK loop per device (all devices
concurrently on one engine), then CLI commands over SSH in threads.
Fabric-wide IB tools (``ibnetdiscover``, ``ibqueryerrors``) run on one SM host only.

``collect(fabric, targets)`` is the entry point; it reuses a per-thread :class:`Collector` (its event
loop and SNMP engine survive between rounds, so ``watch`` does not pay 100 ms per engine per round).
"""

from __future__ import annotations

import asyncio
import atexit
import dataclasses
import itertools
import operator
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from fabriccfg import catalog, registry
from fabriccfg.inventory.models import Fabric, Host, ManagementHost, Switch
from fabriccfg.targets import Endpoint
from fabriccfg.telemetry import batch, tables
from fabriccfg.telemetry.cli import CliJob, CliResult, Connect, Sessions, run_job
from fabriccfg.telemetry.model import METRICS, Kind, Sample, Snapshot
from fabriccfg.telemetry.oids import IF_NAME, Oid
from fabriccfg.telemetry.parsers._common import IbContext, host_of_desc, ib_kind, norm_guid
from fabriccfg.telemetry.shard import Shard, in_shard
from fabriccfg.telemetry.snmp import DEFAULT_MAX_VARBINDS, SnmpConfigError, SnmpPoller, SnmpTarget, WalkResult
from fabriccfg.telemetry.spec import CliCommand, CliContext, SnmpTable, TelemetrySpec

IB_ERROR_COUNTERS: tuple[str, ...] = (
    "SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
    "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards", "PortXmitConstraintErrors",
    "PortRcvConstraintErrors", "LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
    "PortXmitWait",
)
"""What ``ibqueryerrors`` reports (only when non-zero): zero-filled for every cabled IB port seen."""


def telemetry_spec(platform: str) -> TelemetrySpec | None:
    spec = registry.telemetry(platform)
    return spec if isinstance(spec, TelemetrySpec) else None


def ib_context(fabric: Fabric) -> IbContext:
    """Inventory names for IB GUIDs and port numbers (switch GUIDs, HCA port GUIDs, SM hosts)."""
    guids: dict[str, str] = {}
    port_guids: dict[str, tuple[str, str]] = {}
    nics: dict[str, list[str]] = {}
    port_names: dict[str, dict[int, str]] = {}
    for dev in fabric.devices.values():
        if isinstance(dev, Switch):
            if dev.guid:
                guids[_g(dev.guid)] = dev.name
            info = catalog.info(dev.platform)
            if info.fabric_port_number is not None:
                numbers: dict[int, str] = {}
                for pname in info.port_names(dev):
                    n = info.fabric_port_number(pname)
                    if n is not None:
                        numbers.setdefault(n, pname)
                port_names[dev.name] = numbers
        elif isinstance(dev, Host):
            nics[dev.name] = [n.name for n in dev.nics]
            for nic in dev.nics:
                if nic.guid:
                    port_guids[_g(nic.guid)] = (dev.name, nic.name)
        elif isinstance(dev, ManagementHost):
            port_guids[_g(dev.port_guid)] = (dev.name, dev.hca)
            nics[dev.name] = [dev.hca]
    sms = frozenset(sm.device for sm in fabric.ib.subnet_managers) if fabric.ib is not None else frozenset()
    sms |= frozenset(d.name for d in fabric.devices.values() if isinstance(d, ManagementHost))

    def port_name(device: str, number: int) -> str:
        name = port_names.get(device, {}).get(number)
        if name is not None:
            return name
        dev = fabric.devices.get(device)
        if isinstance(dev, Switch):
            info = catalog.info(dev.platform)
            if info.port_name is not None:
                return info.port_name(number)
        return str(number)

    def resolve(guid: str | None, desc: str | None) -> str | None:
        if desc:
            host = host_of_desc(desc)
            if host in fabric.devices:
                return host
        return None

    return IbContext(resolve=resolve, port_name=port_name, guids=guids, port_guids=port_guids, nics=nics,
                     sm_devices=sms)


def _g(guid: str) -> str:
    return norm_guid(str(guid))


@dataclass
class Plan:
    snmp: list[tuple[SnmpTarget, tuple[SnmpTable, ...]]] = field(default_factory=list)
    cli: list[CliJob] = field(default_factory=list)
    errors: dict[str, list[str]] = field(default_factory=dict)


def plan(fabric: Fabric, targets: dict[str, Endpoint], *, snmp_timeout: float = 1.0, retries: int = 2,
         devices: Iterable[str] | None = None, ib: IbContext | None = None,
         shard: Shard | None = None) -> Plan:
    """Which device gets which SNMP tables and CLI commands this round.

    ``shard``: plan only that shard's devices (no "no endpoint" errors for the others). A fabric-wide
    tool (``ibqueryerrors``, ``ibnetdiscover``) runs in exactly one shard: the one owning the device
    an unsharded round would run it on, decided from the inventory (the other shards' endpoints are
    not known here), so N shards together run each tool once, like one unsharded round.
    """
    out = Plan()
    wanted = set(devices) if devices is not None else None
    tech = fabric.fabric.technology
    ib = ib or ib_context(fabric)
    roce_prio = fabric.roce.roce_priority if fabric.roce is not None else 3
    cabled: dict[str, list[str]] = {}
    for dev_name, port_name in fabric.neighbours:
        cabled.setdefault(dev_name, []).append(port_name)
    fabric_cmds_done: set[str] = set()
    # SM hosts by intended priority, so fabric-wide tools run on the preferred one
    sm_prio = {sm.device: sm.priority for sm in (fabric.ib.subnet_managers if fabric.ib else [])}
    def rank(d: Any) -> tuple[bool, int, str]:
        return catalog.info(d.platform).kind != "sm-host", -sm_prio.get(d.name, -1), d.name

    order = sorted(fabric.devices.values(), key=rank)
    for dev in order:
        if wanted is not None and dev.name not in wanted:
            continue
        spec = telemetry_spec(dev.platform)
        if spec is None:
            continue
        if not in_shard(dev.name, shard):
            # another shard polls it over SSH: the fabric-wide tools it would run are that shard's
            if getattr(dev, "mgmt", None) is not None and (not spec.snmp or spec.cli_when_snmp):
                fabric_cmds_done |= {c.name for c in spec.cli if c.per not in ("port", "nic", "first-nic")
                                     and (c.technology is None or c.technology == tech)}
            continue
        ep = targets.get(dev.name)
        if ep is None:
            # no address in the inventory: not monitorable by design; an address but no endpoint: a gap
            if (spec.snmp or spec.cli) and getattr(dev, "mgmt", None) is not None:
                out.errors.setdefault(dev.name, []).append("no endpoint for this device")
            continue
        snmp_ok = False
        if spec.snmp and ep.snmp is not None and ep.snmp_port:
            try:
                target = SnmpTarget.from_endpoint(ep, timeout=snmp_timeout, retries=retries)
                out.snmp.append((target, spec.snmp))
                snmp_ok = True
            except SnmpConfigError as exc:
                out.errors.setdefault(dev.name, []).append(str(exc))
        if not spec.cli or ep.device_type is None or not ep.ssh_port or (snmp_ok and not spec.cli_when_snmp):
            continue
        commands: list[tuple[str, CliCommand, CliContext]] = []
        ports = tuple(_port_order(dev, cabled.get(dev.name, []))) if isinstance(dev, Switch) else ()
        base = CliContext(dev.name, None, ib, roce_prio, ports)
        for cmd in spec.cli:
            if cmd.technology is not None and cmd.technology != tech:
                continue
            if cmd.when is not None and not cmd.when(dev):
                continue
            if cmd.per == "fabric":
                if cmd.name in fabric_cmds_done:
                    continue
                fabric_cmds_done.add(cmd.name)
                commands.append((cmd.command, cmd, base))
            elif cmd.per == "port":
                _add_items(commands, cmd, base, [(p, cmd.command.format(port=p)) for p in ports])
            elif cmd.per in ("nic", "first-nic"):
                nics = list(dev.nics) if isinstance(dev, Host) else []
                if cmd.per == "first-nic":
                    nics = nics[:1]
                items = [(nic.name, cmd.command.format(netdev=nic.netdev or nic.name, nic=nic.name))
                         for nic in nics]
                if isinstance(dev, ManagementHost) and cmd.per == "first-nic":
                    items.append((dev.hca, cmd.command.format(netdev=dev.hca, nic=dev.hca)))
                _add_items(commands, cmd, base, items)
            else:
                fabric_cmds_done.add(cmd.name)  # an SM host's own sminfo makes a GPU host's redundant
                commands.append((cmd.command, cmd, base))
        if commands:
            out.cli.append(CliJob(ep, commands))
    return out


def _add_items(commands: list[tuple[str, CliCommand, CliContext]], cmd: CliCommand, base: CliContext,
               items: list[tuple[str, str]]) -> None:
    """One entry per port/NIC, or (``cmd.batch``, more than one item) one batched line for all of them."""
    if cmd.batch and len(items) > 1:
        commands.append((batch.batch_line(items), cmd, base))
        return
    for item, line in items:
        commands.append((line, cmd, dataclasses.replace(base, port=item)))


def _port_order(dev: object, ports: list[str]) -> list[str]:
    """Cabled ports in front-panel order (falls back to name order)."""
    if isinstance(dev, Switch):
        order = {name: i for i, name in enumerate(catalog.info(dev.platform).port_names(dev))}
        return sorted(ports, key=lambda p: (order.get(p, len(order)), p))
    return sorted(ports)


def walk_groups(tabs: tuple[SnmpTable, ...]) -> list[list[Oid]]:
    """One GETBULK loop per table (ifName rides with the first), walked concurrently per device."""
    groups: list[list[Oid]] = [[IF_NAME]]
    for i, t in enumerate(tabs):
        cols = [c.oid for c in t.columns]
        if i == 0:
            groups[0].extend(cols)
        else:
            groups.append(cols)
    return groups


def snmp_samples(device: str, result: WalkResult, tabs: tuple[SnmpTable, ...]) -> list[Sample]:
    names = tables.port_map(result.columns.get(IF_NAME, ()))
    port_of = names.get
    out: list[Sample] = []
    for t in tabs:
        out.extend(tables.to_samples(device, t, result.columns, port_of))
    return out


def zero_fill_ib(errors: list[Sample], topology: list[Sample]) -> list[Sample]:
    """Zero samples for IB error counters ``ibqueryerrors`` left out (it prints only non-zero ones)
    on every IB port ibnetdiscover saw, so a counter's first increment already has a rate.
    ``errors``: the ibqueryerrors samples; ``topology``: the ibnetdiscover samples."""
    errs = [s for s in errors if s.metric in IB_ERROR_COUNTERS]
    have = {(s.device, s.port, s.metric) for s in errs}
    # the SM host's tool reads 64-bit PortCountersExtended when any value came with a human suffix
    wide = any(s.kind == "sat64" for s in errs)
    ports = {(s.device, s.port) for s in topology if s.metric == "ib_link" and s.port is not None}
    out: list[Sample] = []
    for dev, port in sorted(ports, key=lambda p: (p[0], p[1] or "")):
        for name in IB_ERROR_COUNTERS:
            if (dev, port, name) not in have:
                kind: Kind = ib_kind(name, wide)
                out.append(Sample(dev, port, name, (), 0, kind))
    return out


class Collector:
    """Reusable collector: a private event loop with one :class:`SnmpPoller`, and a thread pool for
    CLI jobs. Not thread-safe; use one per thread (``collect()`` does)."""

    def __init__(self, *, timeout: float = 30.0, snmp_timeout: float = 1.0, retries: int = 2,
                 workers: int = 32, insecure_host_keys: bool = False,
                 max_varbinds: int = DEFAULT_MAX_VARBINDS, concurrency: int = 64,
                 connect: Connect | None = None, keep_sessions: bool = False) -> None:
        self.timeout = timeout
        self.snmp_timeout = snmp_timeout
        self.retries = retries
        self.insecure_host_keys = insecure_host_keys
        self.connect = connect
        self._loop = asyncio.new_event_loop()
        self._poller = SnmpPoller(max_varbinds=max_varbinds, concurrency=concurrency)
        self._pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="telemetry-cli")
        self._sessions = Sessions() if keep_sessions else None
        self._ib: tuple[int, IbContext] | None = None

    def close(self) -> None:
        if not self._loop.is_closed():
            async def _close() -> None:
                self._poller.close()

            self._loop.run_until_complete(_close())
            self._loop.close()
        self._pool.shutdown(wait=False, cancel_futures=True)
        if self._sessions is not None:
            self._sessions.close()

    def __enter__(self) -> Collector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _ib_context(self, fabric: Fabric) -> IbContext:
        if self._ib is None or self._ib[0] != id(fabric):
            self._ib = (id(fabric), ib_context(fabric))
        return self._ib[1]

    async def _snmp(self, jobs: list[tuple[SnmpTarget, tuple[SnmpTable, ...]]]) -> list[WalkResult]:
        self._poller.open()

        async def one(target: SnmpTarget, tabs: tuple[SnmpTable, ...]) -> WalkResult:
            try:
                walk = self._poller.walk_groups(target, walk_groups(tabs))
                return await asyncio.wait_for(walk, self.timeout)
            except TimeoutError:
                now = time.time()
                return WalkResult(target.name, {}, error=f"no complete SNMP walk within {self.timeout:g} s",
                                  started=now, finished=now)

        return list(await asyncio.gather(*(one(t, tabs) for t, tabs in jobs)))

    def collect(self, fabric: Fabric, targets: dict[str, Endpoint], *,
                devices: Iterable[str] | None = None, shard: Shard | None = None) -> Snapshot:
        ib = self._ib_context(fabric)
        p = plan(fabric, targets, snmp_timeout=self.snmp_timeout, retries=self.retries, devices=devices,
                 ib=ib, shard=shard)
        snap = Snapshot(ts=time.time())
        for dev, msgs in p.errors.items():
            for m in msgs:
                snap.error(dev, m)
        if p.snmp:
            results = self._loop.run_until_complete(self._snmp(p.snmp))
            for (target, tabs), res in zip(p.snmp, results, strict=True):
                dev = target.name
                if res.error:
                    snap.error(dev, f"snmp: {res.error}")
                snap.extend(snmp_samples(dev, res, tabs))
                snap.samples.setdefault(dev, [])
                if res.uptime is not None:
                    snap.uptime[dev] = res.uptime
                snap.device_ts[dev] = (res.started + res.finished) / 2 if res.finished else res.started
        # SSH after SNMP, not beside it: at 1,000 devices per process the CLI threads (and their sessions'
        # transport threads) starved the SNMP event loop of the interpreter lock and whole walks timed out
        futures: list[Future[CliResult]] = [
            self._pool.submit(run_job, job, timeout=self.timeout, insecure_host_keys=self.insecure_host_keys,
                              connect=self.connect, sessions=self._sessions)
            for job in p.cli
        ]
        # One sample per key. Precedence: SNMP, then what a device says about itself over SSH, then
        # fabric-wide tools run elsewhere (ibqueryerrors on the SM host), then zero-fill.
        from_snmp = set(map(_DEVICE_METRIC, snap))  # (device, metric): SNMP's timestamp is the device's
        remote: list[Sample] = []
        fill: list[Sample] = []
        for fut in futures:
            cres = fut.result()
            for m in cres.errors:
                snap.error(cres.device, m)
            dev = cres.device
            local = cres.samples
            if not set(map(_DEVICE, local)) <= {dev}:  # a tool that reports other devices (the SM host)
                local = []
                for s in cres.samples:
                    if s[0] == dev:
                        local.append(s)
                    else:
                        remote.append(s)
                        snap.device_ts.setdefault(s[0], cres.finished)
            if local:
                snap.device_ts.setdefault(dev, cres.finished)
                _merge(snap, dev, local)
            for dm, t in cres.metric_ts.items():
                if dm not in from_snmp:
                    snap.metric_ts.setdefault(dm, t)
            if {"ibqueryerrors", "ibnetdiscover"} <= cres.ok:
                fill.extend(zero_fill_ib(cres.by_command["ibqueryerrors"], cres.by_command["ibnetdiscover"]))
        seen: dict[str, set[tuple[Any, ...]]] = {}
        for s in itertools.chain(remote, fill):
            keys = seen.get(s[0])
            if keys is None:
                keys = seen[s[0]] = set(map(_KEY, snap.samples.get(s[0], ())))
            if (k := s[:4]) not in keys:
                keys.add(k)
                snap.add(s)
        return snap


_KEY = operator.itemgetter(slice(4))
"""``sample[:4]`` (``Sample.key``) built in C: the merge below touches ~10^6 samples per round."""
_DEVICE = operator.itemgetter(0)
_DEVICE_METRIC = operator.itemgetter(slice(0, 3, 2))


def _merge(snap: Snapshot, device: str, samples: list[Sample]) -> None:
    """Add one device's own samples to ``snap``, but none whose key it already has (SNMP's, or an earlier
    command's). A device's commands rarely repeat a key and most devices have no SNMP samples, so the
    usual case is one check in C and one ``extend``."""
    rows = snap.samples.setdefault(device, [])
    if not rows and len(set(map(_KEY, samples))) == len(samples):
        rows.extend(samples)
        return
    keys = set(map(_KEY, rows))
    for s in samples:
        if (k := s[:4]) not in keys:
            keys.add(k)
            rows.append(s)


_LOCAL = threading.local()


def _default_collector(**kwargs: Any) -> Collector:
    key = tuple(sorted(kwargs.items()))
    cached: tuple[tuple[Any, ...], Collector] | None = getattr(_LOCAL, "collector", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    if cached is not None:
        cached[1].close()
    col = Collector(**kwargs)
    _LOCAL.collector = (key, col)
    atexit.register(col.close)
    return col


def collect(fabric: Fabric, targets: dict[str, Endpoint], *, timeout: float = 30.0, snmp_timeout: float = 1.0,
            retries: int = 2, workers: int = 32, insecure_host_keys: bool = False,
            devices: Iterable[str] | None = None, collector: Collector | None = None,
            shard: Shard | None = None, **options: Any) -> Snapshot:
    """One round of telemetry for the devices of ``fabric`` that have an endpoint in ``targets``.

    ``timeout``: per device (whole SNMP walk, each CLI command); ``snmp_timeout``/``retries``: per SNMP
    request. Unreachable devices and failed commands are ``Snapshot.errors``, never exceptions.
    ``shard``: only that shard's devices (see :func:`plan`).
    """
    col = collector or _default_collector(timeout=timeout, snmp_timeout=snmp_timeout, retries=retries,
                                          workers=workers, insecure_host_keys=insecure_host_keys, **options)
    return col.collect(fabric, targets, devices=devices, shard=shard)


__all__ = ["METRICS", "Collector", "Plan", "collect", "ib_context", "plan", "telemetry_spec"]
