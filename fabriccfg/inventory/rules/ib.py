"""InfiniBand rules: SM election, SHARP prerequisites, routing engines and partitions.

Facts from ``ib.md`` §2-4: OpenSM elects the highest priority and breaks a tie by the *lower*
port GUID; SHARP needs a host SM (MLNX OpenSM, ``sharp_enabled``), an updn/ftree-family engine and
IPoIB in the Default partition; ``ar_*`` engines exist only in MLNX OpenSM; ftree ignores LMC > 0;
a partitions.conf without a full Default makes every port a limited member.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabriccfg.catalog import info as platform_info
from fabriccfg.inventory.rules import Issue, rule
from fabriccfg.inventory.rules._util import suggest

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, IbIntent, Partition

SHARP_ENGINES = ("updn", "ftree", "ar_updn", "ar_ftree")
UPSTREAM_ENGINES = (
    "none",
    "minhop",
    "updn",
    "dnup",
    "file",
    "ftree",
    "lash",
    "dor",
    "torus-2QoS",
    "nue",
    "dfsssp",
    "sssp",
    "no_fallback",
)
MLNX_ENGINES = ("ar_updn", "ar_ftree", "ar_dor", "ar_torus", "dfp", "dfp2", "pqft")
DEFAULT_PKEY = 0x7FFF
MEMBER_KEYWORDS = ("ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF")
_GUID = re.compile(r"^(0x)?[0-9a-fA-F]{1,16}$")


def _ib(fabric: Fabric) -> IbIntent | None:
    return fabric.ib if fabric.fabric.technology == "infiniband" else None


def _sharp(fabric: Fabric) -> IbIntent | None:
    """The IB intent when SHARP is on, else None (the SHARP rules do not apply)."""
    ib = _ib(fabric)
    return ib if ib is not None and ib.sharp.enabled else None


def _can_run_sm(dev: Device) -> tuple[bool, bool]:
    """(can run OpenSM, is an embedded switch SM), from the platform's facts."""
    try:
        plat = platform_info(dev.platform)
    except (KeyError, ImportError):
        return False, False
    if plat.kind == "sm-host":
        return True, False
    embedded = plat.kind == "switch" and "infiniband" in plat.technologies and plat.device_type is not None
    return embedded, embedded


def _guid(dev: Device | None) -> str | None:
    if dev is None:
        return None
    if dev.kind == "sm-host":
        return dev.port_guid  # type: ignore[union-attr]
    if dev.kind == "switch":
        return dev.guid  # type: ignore[union-attr]
    return None


@rule(
    "sm-device",
    "error",
    "Each subnet manager is an opensm-host or a managed IB switch (embedded SM), listed once",
)
def sm_device(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    seen: set[str] = set()
    for k, sm in enumerate(ib.subnet_managers):
        path = ("ib", "subnet_managers", k, "device")
        dev = fabric.devices.get(sm.device)
        if sm.device in seen:
            yield Issue(f"subnet manager {sm.device!r} is listed twice", path)
        seen.add(sm.device)
        if dev is None:
            yield Issue(
                f"subnet manager {sm.device!r} is not a device of this inventory"
                f"{suggest(sm.device, [d.name for d in fabric.management_hosts] or fabric.devices)}",
                path,
            )
        elif not _can_run_sm(dev)[0]:
            yield Issue(
                f"{sm.device!r} ({dev.platform}) cannot run a subnet manager: use a management host "
                "(opensm-host) or a managed MQM8700 switch (mlnxos-ib)",
                path,
            )


@rule(
    "sm-master",
    "error",
    "Exactly one SM has the unique highest priority (a tie is decided by the lower GUID)",
)
def sm_master(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    sms = ib.subnet_managers
    if not sms:
        yield Issue(
            "no subnet manager: an InfiniBand fabric needs one (ib.subnet_managers: a management host "
            "running OpenSM, or a managed switch's embedded SM)",
            ("ib",),
        )
        return
    top = max(sm.priority for sm in sms)
    tied = [(k, sm) for k, sm in enumerate(sms) if sm.priority == top]
    if len(tied) > 1:
        guids = [(_guid(fabric.devices.get(sm.device)), sm.device) for _, sm in tied]
        known = sorted((g, n) for g, n in guids if g is not None)
        who = ", ".join(sm.device for _, sm in tied)
        winner = f"; OpenSM elects the lower port GUID ({known[0][1]}, {known[0][0]})" if known else ""
        yield Issue(
            f"subnet managers {who} share the highest priority {top}{winner}: give the intended master a "
            "unique highest priority",
            ("ib", "subnet_managers", tied[1][0], "priority"),
        )


@rule("sm-standby", "warning", "At least one standby SM takes over when the master fails")
def sm_standby(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is not None and len({sm.device for sm in ib.subnet_managers}) == 1:
        yield Issue(
            f"only one subnet manager ({ib.subnet_managers[0].device}): no standby takes over when it fails",
            ("ib", "subnet_managers"),
        )


@rule("sharp-needs-host-sm", "error", "SHARP needs a host SM: the MLNX-OS embedded SM cannot run it")
def sharp_needs_host_sm(fabric: Fabric) -> Iterator[Issue]:
    ib = _sharp(fabric)
    if ib is None:
        return
    for k, sm in enumerate(ib.subnet_managers):
        dev = fabric.devices.get(sm.device)
        if dev is not None and _can_run_sm(dev)[1]:
            yield Issue(
                f"SHARP is on but {sm.device} runs the switch's embedded SM, which cannot enable SHARP; run "
                "OpenSM on a management host and disable the switch SM",
                ("ib", "subnet_managers", k, "device"),
            )


@rule(
    "sharp-needs-mlnx", "error", "SHARP needs the MLNX OpenSM flavour (sharp_enabled is not an upstream key)"
)
def sharp_needs_mlnx(fabric: Fabric) -> Iterator[Issue]:
    ib = _sharp(fabric)
    if ib is not None and ib.opensm_flavour != "mlnx":
        yield Issue(
            "SHARP is on but opensm_flavour is 'upstream', which ignores sharp_enabled; use 'mlnx'",
            ("ib", "opensm_flavour"),
        )


@rule("sharp-routing-engine", "error", "SHARP trees need an updn/ftree-family routing engine")
def sharp_routing_engine(fabric: Fabric) -> Iterator[Issue]:
    ib = _sharp(fabric)
    if ib is None:
        return
    for k, engine in enumerate(ib.routing_engines):
        if engine not in SHARP_ENGINES:
            yield Issue(
                f"SHARP is on but routing engine {engine!r} builds no SHARP trees; use one of "
                f"{', '.join(SHARP_ENGINES)}",
                ("ib", "routing_engines", k),
            )


def _default_partitions(ib: IbIntent) -> Iterator[tuple[int, Partition]]:
    for k, part in enumerate(ib.partitions):
        if part.name == "Default" or part.pkey == DEFAULT_PKEY:
            yield k, part


@rule(
    "sharp-ipoib", "error", "With SHARP on, the Default partition has IPoIB (results travel by UD multicast)"
)
def sharp_ipoib(fabric: Fabric) -> Iterator[Issue]:
    ib = _sharp(fabric)
    if ib is None:
        return
    for k, part in _default_partitions(ib):
        if not part.ipoib:
            yield Issue(
                "SHARP is on but the Default partition has no IPoIB; set ipoib: true",
                ("ib", "partitions", k, "ipoib"),
            )


@rule(
    "sharp-am-host",
    "error",
    "With SHARP on, the aggregation manager runs on a management host (the master SM's)",
)
def sharp_am_host(fabric: Fabric) -> Iterator[Issue]:
    ib = _sharp(fabric)
    if ib is None:
        return
    am = ib.sharp.am_host
    if am is None:
        yield Issue(
            "SHARP is on but ib.sharp.am_host names no host for the aggregation manager (sharp_am)",
            ("ib", "sharp", "enabled"),
        )
        return
    dev = fabric.devices.get(am)
    path = ("ib", "sharp", "am_host")
    if dev is None or dev.kind != "sm-host":
        yield Issue(
            f"SHARP am_host {am!r} is not a management host"
            f"{suggest(am, [m.name for m in fabric.management_hosts])}",
            path,
        )
    elif ib.subnet_managers:
        master = max(ib.subnet_managers, key=lambda sm: sm.priority)
        if am not in {sm.device for sm in ib.subnet_managers}:
            yield Issue(
                f"sharp_am on {am} runs apart from every SM; run it with the master SM ({master.device})",
                path,
                "warning",
            )


@rule("ar-needs-mlnx", "error", "Adaptive-routing engines (ar_*) need the MLNX OpenSM flavour")
def ar_needs_mlnx(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None or ib.opensm_flavour == "mlnx":
        return
    for k, engine in enumerate(ib.routing_engines):
        if engine.startswith("ar_"):
            yield Issue(
                f"routing engine {engine!r} exists only in MLNX OpenSM; upstream OpenSM falls back to "
                "minhop. Use opensm_flavour: mlnx or a non-AR engine",
                ("ib", "routing_engines", k),
            )


@rule(
    "routing-engine-unknown",
    "warning",
    "Routing engines are ones OpenSM knows (else it falls back to minhop)",
)
def routing_engine_unknown(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    known = UPSTREAM_ENGINES + (MLNX_ENGINES if ib.opensm_flavour == "mlnx" else ())
    for k, engine in enumerate(ib.routing_engines):
        if engine not in known and not (ib.opensm_flavour == "upstream" and engine.startswith("ar_")):
            yield Issue(
                f"unknown routing engine {engine!r} (OpenSM would fall back to minhop)"
                f"{suggest(engine, known)}",
                ("ib", "routing_engines", k),
            )


@rule("lmc-ftree", "error", "LMC > 0 is not supported by the ftree routing engine")
def lmc_ftree(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is not None and ib.lmc > 0 and any(e in ("ftree", "ar_ftree") for e in ib.routing_engines):
        yield Issue(
            f"lmc {ib.lmc} is not supported by ftree (OpenSM falls back to another engine); use lmc: 0 or "
            "updn",
            ("ib", "lmc"),
        )


@rule("partition-default", "error", "An explicit Default partition (pkey 0x7fff) keeps full membership")
def partition_default(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    for k, part in _default_partitions(ib):
        if part.name != "Default":
            yield Issue(
                f"pkey 0x7fff is the Default partition; name it 'Default', not {part.name!r}",
                ("ib", "partitions", k, "name"),
            )
        elif part.pkey != DEFAULT_PKEY:
            yield Issue(
                f"the Default partition must use pkey 0x7fff, not {part.pkey:#06x}",
                ("ib", "partitions", k, "pkey"),
            )
        if not any(m.device in ("ALL", "ALL_CAS") and m.membership in ("full", "both") for m in part.members):
            yield Issue(
                "the Default partition has no 'ALL=full' (or ALL_CAS=full) member: every port becomes a "
                "limited member and cannot talk to the others",
                ("ib", "partitions", k, "members"),
            )


@rule("partition-pkey-unique", "error", "Each partition has its own pkey")
def partition_pkey_unique(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    seen: dict[int, str] = {}
    for k, part in enumerate(ib.partitions):
        if part.pkey not in seen:
            seen[part.pkey] = part.name
        else:
            other = seen[part.pkey]
            yield Issue(
                f"pkey {part.pkey:#06x} of partition {part.name!r} is already used by {other!r} "
                "(OpenSM merges partitions with the same pkey)",
                ("ib", "partitions", k, "pkey"),
            )


@rule("partition-member", "error", "Partition members are keywords, port GUIDs, or devices that have GUIDs")
def partition_member(fabric: Fabric) -> Iterator[Issue]:
    ib = _ib(fabric)
    if ib is None:
        return
    for k, part in enumerate(ib.partitions):
        for m, member in enumerate(part.members):
            name = member.device
            if name in MEMBER_KEYWORDS or _GUID.match(name):
                continue
            path = ("ib", "partitions", k, "members", m, "device")
            dev = fabric.devices.get(name)
            if dev is None:
                yield Issue(
                    f"partition member {name!r} is not a keyword ({', '.join(MEMBER_KEYWORDS)}), a port GUID "
                    f"or a device{suggest(name, fabric.devices)}",
                    path,
                )
            elif dev.kind == "host" and not any(n.guid for n in dev.nics):  # type: ignore[union-attr]
                yield Issue(f"partition member {name!r} has no NIC GUIDs to put in partitions.conf", path)
            elif dev.kind == "switch" and not dev.guid:  # type: ignore[union-attr]
                yield Issue(f"partition member {name!r} has no GUID to put in partitions.conf", path)
