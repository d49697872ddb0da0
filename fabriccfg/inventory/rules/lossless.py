"""Lossless-class rules for RoCE: one DSCP/priority mapping end to end, CNPs apart, ECN on, MTUs that fit.

A single NIC or switch port that maps DSCP 26 elsewhere, or does not pause priority 3, turns the
lossless class lossy on every path through it; nothing fails loudly, NCCL just slows down.
Each check compares a device's *effective* settings (``derive.effective_*``) with the fabric intent,
so only devices with overrides can deviate.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabriccfg.inventory.derive import (
    ETH_OVERHEAD_BYTES,
    ROCE_PATH_MTU_HOST_MIN,
    effective_nic_qos,
    effective_switch_qos,
)
from fabriccfg.inventory.rules import Issue, rule

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric, RoceQos


def _roce(fabric: Fabric) -> RoceQos | None:
    """The RoCE intent of a RoCE fabric, else None (the rules here do not apply)."""
    return fabric.roce if fabric.fabric.technology == "roce" else None


@rule(
    "lossless-mismatch",
    "error",
    "Every switch and host NIC maps the RoCE DSCP to the same priority and pauses it (PFC)",
)
def lossless_mismatch(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is None:
        return
    lossless = roce.mode == "lossless"
    for i, sw in enumerate(fabric.switches):
        if sw.qos is None:
            continue
        v = effective_switch_qos(fabric, sw)
        base = ("switches", i, "qos")
        if v.roce_dscp != roce.roce_dscp:
            yield Issue(
                f"{sw.name} classifies RoCE as DSCP {v.roce_dscp} but the fabric uses DSCP {roce.roce_dscp}",
                (*base, "roce_dscp"),
            )
        if v.roce_priority != roce.roce_priority:
            yield Issue(
                f"{sw.name} puts RoCE on priority {v.roce_priority} but the fabric's lossless priority is "
                f"{roce.roce_priority}",
                (*base, "roce_priority"),
            )
        if lossless and not v.pfc_enabled:
            yield Issue(
                f"{sw.name} has PFC off: the lossless RoCE class drops on every path through it",
                (*base, "pfc_enabled"),
            )
    for i, host in enumerate(fabric.hosts):
        for j, nic in enumerate(host.nics):
            if nic.qos is None:
                continue
            n = effective_nic_qos(fabric, nic)
            nbase = ("hosts", i, "nics", j, "qos")
            who = f"{host.name}:{nic.name}"
            if n.trust != "dscp":
                yield Issue(
                    f"{who} trusts {n.trust} but the switches classify RoCE by DSCP; set trust: dscp",
                    (*nbase, "trust"),
                )
            if n.roce_dscp != roce.roce_dscp:
                yield Issue(
                    f"{who} marks RoCE with DSCP {n.roce_dscp} but the fabric uses DSCP {roce.roce_dscp}",
                    (*nbase, "roce_dscp"),
                )
            if lossless and roce.roce_priority not in n.pfc_priorities:
                got = ",".join(map(str, n.pfc_priorities)) or "none"
                yield Issue(
                    f"{who} enables PFC on priorities [{got}] but the fabric's lossless priority is "
                    f"{roce.roce_priority}",
                    (*nbase, "pfc_priorities"),
                )


@rule(
    "cnp-mismatch",
    "error",
    "CNP DSCP/priority agree between NICs and switches and differ from the RoCE class",
)
def cnp_mismatch(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is None:
        return
    if roce.cnp_priority == roce.roce_priority:
        yield Issue(
            f"CNPs share priority {roce.cnp_priority} with RoCE data: they queue behind the congestion they "
            "signal; use a strict-priority class (default 6)",
            ("roce", "cnp_priority"),
        )
    if roce.cnp_dscp == roce.roce_dscp:
        yield Issue(
            f"CNP DSCP {roce.cnp_dscp} equals the RoCE DSCP (default CNP DSCP is 48)", ("roce", "cnp_dscp")
        )
    for i, sw in enumerate(fabric.switches):
        if sw.qos is None:
            continue
        v = effective_switch_qos(fabric, sw)
        if v.cnp_dscp != roce.cnp_dscp:
            yield Issue(
                f"{sw.name} expects CNPs on DSCP {v.cnp_dscp} but NICs send DSCP {roce.cnp_dscp}",
                ("switches", i, "qos", "cnp_dscp"),
            )
        if v.cnp_priority != roce.cnp_priority:
            yield Issue(
                f"{sw.name} puts CNPs on priority {v.cnp_priority}, the fabric on {roce.cnp_priority}",
                ("switches", i, "qos", "cnp_priority"),
            )
    for i, host in enumerate(fabric.hosts):
        for j, nic in enumerate(host.nics):
            if nic.qos is None:
                continue
            n = effective_nic_qos(fabric, nic)
            base = ("hosts", i, "nics", j, "qos")
            if n.cnp_dscp != roce.cnp_dscp:
                yield Issue(
                    f"{host.name}:{nic.name} sends CNPs with DSCP {n.cnp_dscp}, the switches expect "
                    f"{roce.cnp_dscp}",
                    (*base, "cnp_dscp"),
                )
            if n.cnp_priority != roce.cnp_priority:
                yield Issue(
                    f"{host.name}:{nic.name} sends CNPs on priority {n.cnp_priority}, the switches expect "
                    f"{roce.cnp_priority}",
                    (*base, "cnp_priority"),
                )


@rule("ecn-disabled", "error", "ECN marking is on for the RoCE traffic class on every switch")
def ecn_disabled(fabric: Fabric) -> Iterator[Issue]:
    if _roce(fabric) is None:
        return
    for i, sw in enumerate(fabric.switches):
        if sw.qos is not None and sw.qos.ecn_enabled is False:
            yield Issue(
                f"{sw.name} has ECN off for the RoCE class: DCQCN gets no marks and PFC does all the work "
                "(pause storms)",
                ("switches", i, "qos", "ecn_enabled"),
            )


@rule("host-mtu", "error", f"Host MTU >= {ROCE_PATH_MTU_HOST_MIN} so RoCE can use a 4096-byte path MTU")
def host_mtu(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is None:
        return
    if roce.host_mtu < ROCE_PATH_MTU_HOST_MIN:
        yield Issue(
            f"host MTU {roce.host_mtu} limits the RoCE path MTU below 4096; use at least "
            f"{ROCE_PATH_MTU_HOST_MIN} (or 9000)",
            ("roce", "host_mtu"),
        )
    for i, host in enumerate(fabric.hosts):
        for j, nic in enumerate(host.nics):
            if nic.qos is not None and nic.qos.mtu is not None and nic.qos.mtu < ROCE_PATH_MTU_HOST_MIN:
                yield Issue(
                    f"{host.name}:{nic.name} MTU {nic.qos.mtu} limits the RoCE path MTU below 4096; use at "
                    f"least {ROCE_PATH_MTU_HOST_MIN}",
                    ("hosts", i, "nics", j, "qos", "mtu"),
                )


@rule("switch-mtu", "error", f"Switch MTU >= host MTU + {ETH_OVERHEAD_BYTES} bytes of Ethernet headers")
def switch_mtu(fabric: Fabric) -> Iterator[Issue]:
    roce = _roce(fabric)
    if roce is None:
        return
    if roce.switch_mtu < roce.host_mtu + ETH_OVERHEAD_BYTES:
        yield Issue(
            f"switch MTU {roce.switch_mtu} cannot carry host frames of MTU {roce.host_mtu} plus "
            f"{ETH_OVERHEAD_BYTES} bytes of headers; use a switch MTU of at least "
            f"{roce.host_mtu + ETH_OVERHEAD_BYTES} (9216 is usual) or a host MTU of at most "
            f"{roce.switch_mtu - ETH_OVERHEAD_BYTES}",
            ("roce", "switch_mtu"),
        )
    for i, host in enumerate(fabric.hosts):
        for j, nic in enumerate(host.nics):
            if (
                nic.qos is not None
                and nic.qos.mtu is not None
                and roce.switch_mtu < nic.qos.mtu + ETH_OVERHEAD_BYTES
            ):
                yield Issue(
                    f"{host.name}:{nic.name} MTU {nic.qos.mtu} exceeds what switch MTU {roce.switch_mtu} "
                    f"carries (host MTU + {ETH_OVERHEAD_BYTES})",
                    ("hosts", i, "nics", j, "qos", "mtu"),
                )
