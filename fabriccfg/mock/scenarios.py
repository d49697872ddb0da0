"""Mock-fabric scenarios: ``NAME[:ARGS]`` specs parsed into :class:`Scenario` values.

A scenario changes what the traffic model (:mod:`fabriccfg.mock.traffic`) reports, so each check of
``fabriccfg verify`` has something to find. Specs (``fabriccfg mock up --scenario SPEC``):

==================================  ============================================================
``healthy``                         background traffic only (the default; adds nothing)
``congestion:HOST``                 incast to HOST: ECN marks on the leaf ports facing it, CNPs
                                    from its NICs (handled by the other hosts), some PFC, no storm
                                    (IB fabric: PortXmitWait on the leaf ports facing HOST)
``pause-storm:HOST[:NIC]``          HOST's NIC (default: its first) sends continuous PFC pause on
                                    the lossless priority; the leaf port stalls; pause spreads hop
                                    by hop (leaf uplinks -> spines -> other leaves), onset +1.5 s
                                    per hop; the PFC watchdog fires on the first-hop port
``lossless-drop:DEVICE:PORT``       drops on the lossless traffic class at DEVICE:PORT (egress;
                                    IB: PortXmitDiscards)
``link-flap:DEVICE:PORT``           the link goes down 2 s of every 10 s (both ends); LinkDowned,
                                    LinkErrorRecovery, symbol and receive errors grow per flap
``ib-congestion:DEVICE:PORT``       PortXmitWait grows fast (about 30 % stall) on DEVICE:PORT
``ib-symbol-errors:DEVICE:PORT``    SymbolErrorCounter grows (20/s) on DEVICE:PORT (receive side)
``counter-wrap``                    every growing counter starts a few seconds before it wraps
                                    (64-bit ones below 2**64, so their low 32 bits wrap too)
``reboot:DEVICE``                   DEVICE restarts 10 s after the scenario starts: sysUpTime and
                                    all its counters start again from 0
``ecn-misconfig:SWITCH``            SWITCH's ECN thresholds on the lossless queue are set above its
                                    buffer (never marks): queues run to Xoff; only ``fabriccfg probe``
                                    sees it as a tail; ``verify`` as ``ecn-threshold`` (its lossless
                                    queues peak above the intended Kmax while it marks nothing)
``microburst:SWITCH:PORT[:N]``      incast of N senders (default 8) into SWITCH:PORT's lossless egress
                                    queue: every read period a burst of (N-1) x 128 KiB peaks the
                                    queue towards ECN Kmax (capped at 95 %), the ingress PGs of N
                                    feeding ports share it; per-second rates barely move (a few ECN
                                    marks); ``probe`` tails widen on paths through that port
``cabling-swap:A,B``                the cables in endpoints A and B (``device:port`` each) are swapped:
                                    LLDP and ibnetdiscover report each other's neighbour
``link-down:DEVICE:PORT``           ibsim backend only: the link at DEVICE:PORT goes down (``Unlink``)
``ib-rcv-errors:DEVICE:PORT``       ibsim backend only: packets into DEVICE:PORT are dropped and
                                    counted (``Error`` rate 100 while diagnostics cross it), so
                                    PortRcvErrors rises
``sm-death:HOST``                   ibsim backend only: the OpenSM on HOST is killed (SIGKILL); the
                                    standby takes over after its polling timeout
==================================  ============================================================

Every spec may end with ``@SECONDS``: the onset, in seconds after the model's ``t0`` (or after the
injection time for a scenario injected at runtime). Example: ``pause-storm:gpu03@5``.

Faults (``--fault DEVICE:KIND``) are not scenarios; the only one the SNMP agent honours is
``snmp-timeout`` (see :mod:`fabriccfg.mock.snmp`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric

NAMES: tuple[str, ...] = (
    "healthy",
    "congestion",
    "pause-storm",
    "lossless-drop",
    "link-flap",
    "ib-congestion",
    "ib-symbol-errors",
    "counter-wrap",
    "reboot",
    "cabling-swap",
    "ecn-misconfig",
    "microburst",
    "link-down",
    "ib-rcv-errors",
    "sm-death",
)
MICROBURST_SENDERS = 8
"""Senders of a ``microburst`` incast when the spec does not say (one per GPU of an 8-GPU server)."""
MICROBURST_MAX_SENDERS = 1024
IBSIM_ONLY = frozenset({"link-down", "ib-rcv-errors", "sm-death"})
"""Scenarios the simulator performs (the modelled traffic model has no equivalent)."""

USAGE: dict[str, str] = {
    "healthy": "healthy",
    "congestion": "congestion:HOST",
    "pause-storm": "pause-storm:HOST[:NIC]",
    "lossless-drop": "lossless-drop:DEVICE:PORT",
    "link-flap": "link-flap:DEVICE:PORT",
    "ib-congestion": "ib-congestion:DEVICE:PORT",
    "ib-symbol-errors": "ib-symbol-errors:DEVICE:PORT",
    "counter-wrap": "counter-wrap",
    "reboot": "reboot:DEVICE",
    "cabling-swap": "cabling-swap:DEVICE:PORT,DEVICE:PORT",
    "ecn-misconfig": "ecn-misconfig:SWITCH",
    "microburst": "microburst:SWITCH:PORT[:SENDERS]",
    "link-down": "link-down:DEVICE:PORT",
    "ib-rcv-errors": "ib-rcv-errors:DEVICE:PORT",
    "sm-death": "sm-death:HOST",
}


class ScenarioError(ValueError):
    """A scenario spec that does not parse or does not fit the inventory (one-line message)."""


@dataclass(frozen=True)
class Scenario:
    """One parsed scenario.

    ``device``/``port``: the target (host for congestion/pause-storm, ``port`` = NIC name there);
    ``other``: the second endpoint of ``cabling-swap`` (``device``/``port`` is the first);
    ``onset``: seconds after the model's ``t0`` (or after injection) when it starts;
    ``count``: the number of senders of ``microburst`` (None: :data:`MICROBURST_SENDERS`).
    """

    name: str
    device: str | None = None
    port: str | None = None
    other: tuple[str, str] | None = None
    onset: float = 0.0
    spec: str = ""
    count: int | None = None

    def __str__(self) -> str:
        return self.spec or self.name


def _endpoint(text: str, spec: str) -> tuple[str, str]:
    device, sep, port = text.partition(":")
    if not sep or not device or not port:
        raise ScenarioError(f"scenario {spec!r}: {text!r} is not an endpoint; write DEVICE:PORT")
    return device, port


def parse(spec: str, fabric: Fabric | None = None) -> Scenario:
    """Parse ``NAME[:ARGS][@ONSET]``; with ``fabric``, check that devices, hosts and ports exist.

    Raises :class:`ScenarioError` with a one-line message naming the expected form.
    """
    text = spec.strip()
    if not text:
        raise ScenarioError("empty scenario; expected one of: " + ", ".join(USAGE.values()))
    onset = 0.0
    if "@" in text:
        text, _, when = text.rpartition("@")
        try:
            onset = float(when)
        except ValueError:
            raise ScenarioError(f"scenario {spec!r}: onset {when!r} is not a number of seconds") from None
        if onset < 0:
            raise ScenarioError(f"scenario {spec!r}: onset must be >= 0 seconds")
    name, _, rest = text.partition(":")
    name = name.strip().lower()
    if name not in USAGE:
        raise ScenarioError(f"unknown scenario {name!r}; expected one of: " + ", ".join(USAGE.values()))
    usage = USAGE[name]
    sc: Scenario
    if name in ("healthy", "counter-wrap"):
        if rest:
            raise ScenarioError(f"scenario {spec!r} takes no arguments; write {usage}")
        sc = Scenario(name, onset=onset, spec=spec.strip())
    elif name in ("congestion", "reboot", "ecn-misconfig", "sm-death"):
        if not rest or ":" in rest:
            raise ScenarioError(f"scenario {spec!r}: write {usage}")
        sc = Scenario(name, device=rest, onset=onset, spec=spec.strip())
    elif name == "pause-storm":
        host, _, nic = rest.partition(":")
        if not host:
            raise ScenarioError(f"scenario {spec!r}: write {usage}")
        sc = Scenario(name, device=host, port=nic or None, onset=onset, spec=spec.strip())
    elif name == "cabling-swap":
        a, sep, b = rest.partition(",")
        if not sep:
            raise ScenarioError(f"scenario {spec!r}: write {usage}")
        da, pa = _endpoint(a.strip(), spec)
        db, pb = _endpoint(b.strip(), spec)
        if (da, pa) == (db, pb):
            raise ScenarioError(f"scenario {spec!r}: the two endpoints are the same")
        sc = Scenario(name, device=da, port=pa, other=(db, pb), onset=onset, spec=spec.strip())
    elif name == "microburst":
        head, sep, tail = rest.rpartition(":")
        count: int | None = None
        if sep and head.count(":") >= 1 and tail.isdigit():
            rest, count = head, int(tail)
            if not 2 <= count <= MICROBURST_MAX_SENDERS:
                raise ScenarioError(f"scenario {spec!r}: SENDERS must be 2-{MICROBURST_MAX_SENDERS}")
        if not rest:
            raise ScenarioError(f"scenario {spec!r}: write {usage}")
        dev, port = _endpoint(rest, spec)
        sc = Scenario(name, device=dev, port=port, onset=onset, spec=spec.strip(), count=count)
    else:
        if not rest:
            raise ScenarioError(f"scenario {spec!r}: write {usage}")
        dev, port = _endpoint(rest, spec)
        sc = Scenario(name, device=dev, port=port, onset=onset, spec=spec.strip())
    if fabric is not None:
        check(sc, fabric)
    return sc


def parse_all(specs: list[str], fabric: Fabric | None = None) -> list[Scenario]:
    """Parse several specs (``healthy`` entries are dropped: they add nothing)."""
    out = [parse(s, fabric) for s in specs]
    return [s for s in out if s.name != "healthy"]


def _roce_switch(sc: Scenario, devices: Mapping[str, Device], fabric: Fabric, what: str) -> None:
    """``sc`` names a switch of a RoCE fabric (``what`` is the RoCE feature the scenario acts on)."""
    dev = devices.get(sc.device or "")
    if dev is None or dev.kind != "switch":
        raise ScenarioError(f"scenario {sc}: {sc.device!r} is not a switch of the inventory")
    if fabric.fabric.technology != "roce":
        raise ScenarioError(f"scenario {sc}: {what} need a RoCE fabric")


def check(sc: Scenario, fabric: Fabric) -> None:
    """Raise :class:`ScenarioError` when ``sc`` names something the inventory does not have."""
    devices = fabric.devices
    hosts = {h.name: h for h in fabric.hosts}
    if sc.name in ("congestion", "pause-storm"):
        if sc.device not in hosts:
            known = ", ".join(sorted(hosts)) or "none"
            raise ScenarioError(
                f"scenario {sc}: {sc.device!r} is not a GPU host of the inventory (hosts: {known})"
            )
        host = hosts[sc.device]
        if sc.port is not None and sc.port not in {n.name for n in host.nics}:
            nics = ", ".join(n.name for n in host.nics)
            raise ScenarioError(f"scenario {sc}: host {sc.device} has no NIC {sc.port!r} (NICs: {nics})")
        if not any((sc.device, n.name) in fabric.neighbours for n in host.nics):
            raise ScenarioError(f"scenario {sc}: host {sc.device} has no cabled NIC")
        if sc.name == "pause-storm" and fabric.fabric.technology != "roce":
            raise ScenarioError(f"scenario {sc}: PFC pause storms need a RoCE fabric")
    elif sc.name == "ecn-misconfig":
        _roce_switch(sc, devices, fabric, "ECN thresholds")
    elif sc.name == "microburst":
        _roce_switch(sc, devices, fabric, "buffer watermarks")
        if (sc.device, sc.port) not in fabric.neighbours:
            raise ScenarioError(f"scenario {sc}: {sc.device}:{sc.port} is not a cabled port of the inventory")
    elif sc.name == "reboot":
        if sc.device not in devices:
            raise ScenarioError(f"scenario {sc}: unknown device {sc.device!r}")
    elif sc.name == "sm-death":
        sms = [sm.device for sm in fabric.ib.subnet_managers] if fabric.ib is not None else []
        if sc.device not in sms:
            raise ScenarioError(f"scenario {sc}: {sc.device!r} runs no subnet manager "
                                f"(ib.subnet_managers: {', '.join(sms) or 'none'})")
    elif sc.name == "cabling-swap":
        assert sc.device is not None and sc.port is not None and sc.other is not None
        for end in ((sc.device, sc.port), sc.other):
            if end not in fabric.neighbours:
                raise ScenarioError(
                    f"scenario {sc}: {end[0]}:{end[1]} is not a cabled endpoint of the inventory"
                )
    elif sc.device is not None and sc.port is not None:
        if sc.device not in devices:
            raise ScenarioError(f"scenario {sc}: unknown device {sc.device!r}")
        if (sc.device, sc.port) not in fabric.neighbours:
            raise ScenarioError(f"scenario {sc}: {sc.device}:{sc.port} is not a cabled port of the inventory")
        if sc.name.startswith("ib-") and fabric.fabric.technology != "infiniband":
            raise ScenarioError(f"scenario {sc}: needs an InfiniBand fabric")
