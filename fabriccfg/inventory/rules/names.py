"""Identity rules: names, management addresses and GUIDs are unique across the fabric.

Duplicates break every later step: the render output folder, push targets, the node-name map
and the SM's view of the subnet all key on them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from fabriccfg.inventory.rules import Issue, rule
from fabriccfg.inventory.rules._util import PathT, iter_devices

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Fabric


def _where(path: PathT) -> str:
    return ".".join(str(p) for p in path)


@rule(
    "unique-names",
    "error",
    "Device names are unique; NIC names are unique per host; partition names are unique",
)
def unique_names(fabric: Fabric) -> Iterator[Issue]:
    seen: dict[str, PathT] = {}
    for path, dev in iter_devices(fabric):
        first = seen.setdefault(dev.name, path)
        if first != path:
            yield Issue(f"device name {dev.name!r} is already used by {_where(first)}", (*path, "name"))
    for i, host in enumerate(fabric.hosts):
        nic_seen: set[str] = set()
        for j, nic in enumerate(host.nics):
            if nic.name in nic_seen:
                yield Issue(
                    f"host {host.name!r} has two NICs named {nic.name!r}", ("hosts", i, "nics", j, "name")
                )
            nic_seen.add(nic.name)
    if fabric.ib is not None:
        part_seen: set[str] = set()
        for k, part in enumerate(fabric.ib.partitions):
            if part.name in part_seen:
                yield Issue(f"partition name {part.name!r} is used twice", ("ib", "partitions", k, "name"))
            part_seen.add(part.name)


@rule("unique-address", "error", "Management addresses are unique")
def unique_address(fabric: Fabric) -> Iterator[Issue]:
    seen: dict[object, str] = {}
    for path, dev in iter_devices(fabric):
        if dev.mgmt is None:
            continue
        other = seen.setdefault(dev.mgmt, dev.name)
        if other != dev.name:
            yield Issue(
                f"management address {dev.mgmt} of {dev.name!r} is already used by {other!r}", (*path, "mgmt")
            )


@rule("unique-guid", "error", "Switch GUIDs, NIC port GUIDs and SM port GUIDs are unique")
def unique_guid(fabric: Fabric) -> Iterator[Issue]:
    seen: dict[str, str] = {}

    def check(guid: str | None, owner: str, path: PathT) -> Iterator[Issue]:
        if guid is None:
            return
        other = seen.setdefault(guid, owner)
        if other != owner:
            yield Issue(f"GUID {guid} of {owner} is already used by {other}", path)

    for i, sw in enumerate(fabric.switches):
        yield from check(sw.guid, f"switch {sw.name!r}", ("switches", i, "guid"))
    for i, host in enumerate(fabric.hosts):
        for j, nic in enumerate(host.nics):
            yield from check(nic.guid, f"{host.name}:{nic.name}", ("hosts", i, "nics", j, "guid"))
    for i, mh in enumerate(fabric.management_hosts):
        yield from check(mh.port_guid, f"management host {mh.name!r}", ("management_hosts", i, "port_guid"))
