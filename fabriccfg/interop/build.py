"""Turn NetBox devices, interfaces and cables (plain JSON dicts) into an inventory document.

Every problem is collected, not raised one by one: an import that cannot be complete reports all
unmapped platforms and roles, missing fields and unusable cables at once, and writes nothing.

What comes from where (NetBox 4 field names):
- device: ``name``; ``role.slug`` and ``platform.slug`` through the mapping; ``primary_ip4`` (else
  ``primary_ip6``) ``.address`` without its prefix length as ``mgmt``; ``device_type.model`` as
  ``model``; ``serial``, ``asset_tag`` and ``description`` into ``description``; custom fields
  ``rail``, ``ib_guid`` (switch node GUID, SM port GUID) and ``asic`` (names set in the mapping);
- interface: ``name`` (switch port; a host NIC's netdev), ``label`` (a host NIC's RDMA device,
  e.g. ``mlx5_0``; the name when empty), ``speed`` (kb/s), custom fields ``rail`` and ``ib_guid``;
- cable: ``a_terminations``/``b_terminations`` (one ``dcim.interface`` each), ``length`` and
  ``length_unit`` as ``length_m``. Cables to devices outside the import are left out (counted).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import yaml

from fabriccfg import catalog
from fabriccfg.catalog import parse_breakout
from fabriccfg.interop.mapping import ROLE_KIND, SWITCH_ROLES, Mapping
from fabriccfg.interop.netbox import NetboxData

_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
_TO_METRES = {"km": 1000.0, "m": 1.0, "cm": 0.01, "mi": 1609.344, "ft": 0.3048, "in": 0.0254}
"""NetBox CableLengthUnitChoices values -> metres."""
_TYPE_SPEED = re.compile(r"^(\d+)gbase", re.IGNORECASE)
_IB_TYPES = {"infiniband-hdr": 200, "infiniband-ndr": 400, "infiniband-edr": 100, "infiniband-hdr100": 100}
"""NetBox InterfaceTypeChoices for InfiniBand -> lane speed in Gb/s."""
_SKIPPED_CABLE_STATUS = {"decommissioning"}
MAX_PORTS = 256
"""The inventory's limit on front-panel ports (``Switch.ports``)."""


class ImportProblems(Exception):
    """The NetBox data cannot become a complete inventory; ``problems`` says why (one line each)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(f"{len(problems)} problem(s)")
        self.problems = problems


@dataclass
class ImportSummary:
    switches: int = 0
    hosts: int = 0
    management_hosts: int = 0
    links: int = 0
    skipped_devices: int = 0
    cables_outside: int = 0
    notes: list[str] = field(default_factory=list)


def _slug(obj: Any) -> str | None:
    return str(obj["slug"]) if isinstance(obj, dict) and obj.get("slug") else None


def _choice(obj: Any) -> str | None:
    """A NetBox ChoiceField is ``{"value": ..., "label": ...}``; accept a bare value too."""
    if isinstance(obj, dict):
        value = obj.get("value")
        return None if value is None else str(value)
    return None if obj is None else str(obj)


def _clean(text: Any) -> str:
    return _CONTROL.sub(" ", str(text)).strip()


def _cf(obj: dict[str, Any], name: str) -> Any:
    fields = obj.get("custom_fields") or {}
    value = fields.get(name) if isinstance(fields, dict) else None
    return None if value in ("", None) else value


def _address(device: dict[str, Any]) -> str | None:
    for key in ("primary_ip4", "primary_ip6", "primary_ip"):
        ip = device.get(key)
        if isinstance(ip, dict) and ip.get("address"):
            return str(ip["address"]).split("/")[0]
    return None


def _speed_gbps(iface: dict[str, Any]) -> int | None:
    """Interface speed: ``speed`` in kb/s, else the type slug (``400gbase-x-osfp``, ``infiniband-hdr``)."""
    speed = iface.get("speed")
    if isinstance(speed, int) and speed >= 1_000_000 and speed % 1_000_000 == 0:
        return speed // 1_000_000
    kind = _choice(iface.get("type")) or ""
    if kind in _IB_TYPES:
        return _IB_TYPES[kind]
    m = _TYPE_SPEED.match(kind)
    return int(m.group(1)) if m else None


def _length_m(cable: dict[str, Any]) -> tuple[float | None, str | None]:
    length = cable.get("length")
    if length in (None, ""):
        return None, None
    unit = _choice(cable.get("length_unit"))
    if unit not in _TO_METRES:
        return None, f"cable #{cable.get('id')}: length {length} has no usable unit ({unit!r})"
    try:
        metres = float(length) * _TO_METRES[unit]
    except (TypeError, ValueError):
        return None, f"cable #{cable.get('id')}: length {length!r} is not a number"
    return round(metres, 2), None


def _description(device: dict[str, Any]) -> str:
    parts = [f"NetBox device {device.get('id')}"]
    if device.get("serial"):
        parts.append(f"serial {_clean(device['serial'])}")
    if device.get("asset_tag"):
        parts.append(f"asset tag {_clean(device['asset_tag'])}")
    if device.get("description"):
        parts.append(_clean(device["description"]))
    return "; ".join(parts)


@dataclass
class _Dev:
    raw: dict[str, Any]
    name: str
    role: str
    platform: str
    kind: str
    ifaces: list[dict[str, Any]] = field(default_factory=list)
    cabled: set[int] = field(default_factory=set)


def _classify(data: NetboxData, mapping: Mapping, problems: list[str], summary: ImportSummary) -> list[_Dev]:
    known = set(catalog.names())
    kinds = Counter(catalog.info(n).kind for n in known)
    host_only: dict[str, str] = {catalog.info(n).kind: n for n in known
                 if catalog.info(n).kind != "switch" and kinds[catalog.info(n).kind] == 1}
    unmapped_platforms: Counter[str] = Counter()
    unmapped_roles: Counter[str] = Counter()
    devs: list[_Dev] = []
    for d in sorted(data.devices, key=lambda d: str(d.get("name") or "")):
        name = d.get("name")
        role_slug = _slug(d.get("role")) or _slug(d.get("device_role"))
        role = mapping.role(role_slug) if role_slug else None
        if role == "skip":
            summary.skipped_devices += 1
            continue
        if not name:
            problems.append(f"device #{d.get('id')} has no name")
            continue
        plat_slug = _slug(d.get("platform"))
        plat = mapping.platform(plat_slug, known) if plat_slug else None
        if plat is None and role is not None and ROLE_KIND[role] in host_only:
            plat = host_only[ROLE_KIND[role]]  # the one platform of that kind: determined, not guessed
        if role is None:
            unmapped_roles[role_slug or "(no role)"] += 1
        if plat is None:
            unmapped_platforms[plat_slug or "(no platform)"] += 1
        if role is None or plat is None:
            continue
        if plat not in known:
            problems.append(
                f"mapping: NetBox platform {plat_slug!r} maps to {plat!r}, which is not a fabriccfg "
                f"platform (known: {', '.join(sorted(known))})"
            )
            continue
        kind = catalog.info(plat).kind
        if ROLE_KIND[role] != kind:
            problems.append(
                f"{name}: role {role!r} needs a {ROLE_KIND[role]} platform, but {plat!r} is a {kind}"
            )
            continue
        devs.append(_Dev(d, str(name), role, plat, kind))
    for slug, n in sorted(unmapped_platforms.items()):
        problems.append(
            f"unmapped NetBox platform {slug!r} ({n} device(s)): add --platform-map {slug}=PLATFORM "
            f"(one of {', '.join(sorted(known))})"
        )
    for slug, n in sorted(unmapped_roles.items()):
        problems.append(
            f"unmapped NetBox role {slug!r} ({n} device(s)): add --role-map {slug}=ROLE "
            "(leaf, spine, core, gpu, sm or skip)"
        )
    return devs


def _endpoint_iface(term: dict[str, Any]) -> int | None:
    if term.get("object_type") != "dcim.interface":
        return None
    obj = term.get("object")
    ident = obj.get("id") if isinstance(obj, dict) else term.get("object_id")
    return int(ident) if isinstance(ident, int) else None


@cache
def _port_names(platform: str) -> tuple[dict[str, int], dict[str, list[tuple[int, str]]]]:
    """Plain port name -> number, and breakout sub-port name -> [(port number, mode)], per platform."""
    info = catalog.info(platform)
    if info.port_name is None:
        return {}, {}
    plain = {info.port_name(n): n for n in range(1, MAX_PORTS + 1)}
    sub: dict[str, list[tuple[int, str]]] = {}
    for mode in sorted(info.allowed_breakouts):
        lanes_speed = parse_breakout(mode)
        if lanes_speed is None or info.subport_name is None:
            continue
        lanes = lanes_speed[0]
        for n in range(1, MAX_PORTS + 1):
            for lane in range(lanes):
                sub.setdefault(info.subport_name(n, lane, lanes), []).append((n, mode))
    return plain, sub


def _switch_ports(dev: _Dev, cabled_names: set[str], problems: list[str]) -> tuple[int, dict[str, str]]:
    """Front-panel port count and breakouts, read back through the platform's own port naming."""
    info = catalog.info(dev.platform)
    if info.port_name is None:
        return max(1, len(dev.ifaces)), {}
    plain, sub = _port_names(dev.platform)
    numbers = [plain[i["name"]] for i in dev.ifaces if i.get("name") in plain]
    speeds = {i["name"]: _speed_gbps(i) for i in dev.ifaces}
    by_port: dict[int, list[str]] = {}
    for name in sorted(cabled_names - set(plain)):
        if name not in sub:
            problems.append(
                f"{dev.name}: interface {name!r} is not a {dev.platform} port name (e.g. {info.port_name(1)})"
            )
            continue
        by_port.setdefault(sub[name][0][0], []).append(name)
    breakouts: dict[str, str] = {}
    for n, names in sorted(by_port.items()):
        parent = info.port_name(n)
        if parent in cabled_names:
            names.append(parent)
        modes = set.intersection(*({mode for port, mode in sub.get(x, []) if port == n} for x in names))
        lane_speeds = {speeds.get(x) for x in names} - {None}
        if lane_speeds:
            modes = {m for m in modes if (parse_breakout(m) or (0, 0))[1] in lane_speeds}
        if len(modes) != 1:
            problems.append(
                f"{dev.name}: cannot tell the breakout mode of {parent} from {sorted(names)} "
                f"(candidates: {', '.join(sorted(modes)) or 'none'}); set the interface speed in NetBox"
            )
            continue
        breakouts[parent] = modes.pop()
        numbers.append(n)
    return max(numbers, default=1), breakouts


def build_inventory(
    data: NetboxData,
    mapping: Mapping,
    *,
    fabric_name: str | None = None,
    technology: str | None = None,
    link_speed: str | None = None,
) -> tuple[dict[str, Any], ImportSummary]:
    """The inventory document for ``data``; raises :class:`ImportProblems` listing everything missing."""
    problems: list[str] = []
    summary = ImportSummary()
    devs = _classify(data, mapping, problems, summary)
    by_id = {int(d.raw["id"]): d for d in devs}
    names = Counter(d.name for d in devs)
    problems.extend(f"device name {n!r} is used by {c} NetBox devices" for n, c in names.items() if c > 1)
    iface_owner: dict[int, _Dev] = {}
    iface_by_id: dict[int, dict[str, Any]] = {}
    for iface in data.interfaces:
        dev_ref = iface.get("device")
        dev = by_id.get(int(dev_ref["id"])) if isinstance(dev_ref, dict) and "id" in dev_ref else None
        if dev is not None:
            dev.ifaces.append(iface)
            iface_owner[int(iface["id"])] = dev
            iface_by_id[int(iface["id"])] = iface

    cf = mapping.custom_fields
    links: list[tuple[int, int, float | None]] = []
    for cable in data.cables:
        if _choice(cable.get("status")) in _SKIPPED_CABLE_STATUS:
            continue
        ends = [cable.get("a_terminations") or [], cable.get("b_terminations") or []]
        if any(len(e) != 1 for e in ends):
            owners = [iface_owner.get(_endpoint_iface(t) or -1) for e in ends for t in e]
            if any(owners):
                problems.append(
                    f"cable #{cable.get('id')}: {len(ends[0])}:{len(ends[1])} terminations; "
                    "a fabric link joins exactly one interface at each end"
                )
            continue
        a, b = (_endpoint_iface(ends[0][0]), _endpoint_iface(ends[1][0]))
        if a is None or b is None or a not in iface_owner or b not in iface_owner:
            summary.cables_outside += 1
            continue
        metres, problem = _length_m(cable)
        if problem:
            problems.append(problem)
        links.append((a, b, metres))
        iface_owner[a].cabled.add(a)
        iface_owner[b].cabled.add(b)

    switches: list[dict[str, Any]] = []
    hosts: list[dict[str, Any]] = []
    sm_hosts: list[dict[str, Any]] = []
    port_of: dict[int, str] = {}
    speeds: Counter[int] = Counter()
    for dev in devs:
        raw = dev.raw
        mgmt = _address(raw)
        if mgmt is None and catalog.info(dev.platform).needs_mgmt:
            problems.append(f"{dev.name}: no primary IP in NetBox (the management address)")
        for i in dev.ifaces:
            if int(i["id"]) in dev.cabled and (s := _speed_gbps(i)):
                speeds[s] += 1
        if dev.kind == "switch":
            cabled = {str(i["name"]) for i in dev.ifaces if int(i["id"]) in dev.cabled}
            ports, breakouts = _switch_ports(dev, cabled, problems)
            entry: dict[str, Any] = {"name": dev.name, "platform": dev.platform, "role": dev.role}
            model = (raw.get("device_type") or {}).get("model")
            if model:
                entry["model"] = _clean(model)
            if mgmt:
                entry["mgmt"] = mgmt
            entry["ports"] = ports
            if breakouts:
                entry["breakouts"] = breakouts
            for key, name in (("asic", cf.asic), ("guid", cf.guid), ("rail", cf.rail)):
                if (value := _cf(raw, name)) is not None:
                    entry[key] = _clean(value) if key != "rail" else value
            entry["description"] = _description(raw)
            switches.append(entry)
            for i in dev.ifaces:
                port_of[int(i["id"])] = str(i["name"])
            summary.switches += 1
            continue
        nics = [i for i in sorted(dev.ifaces, key=lambda i: str(i["name"])) if int(i["id"]) in dev.cabled]
        for i in nics:
            port_of[int(i["id"])] = _clean(i.get("label") or i["name"])
        if dev.kind == "sm-host":
            guid = next((g for i in nics if (g := _cf(i, cf.guid)) is not None), None) or _cf(raw, cf.guid)
            if guid is None:
                problems.append(
                    f"{dev.name}: no port GUID (custom field {cf.guid!r} on the device or its "
                    "cabled interface)"
                )
            entry = {"name": dev.name, "platform": dev.platform}
            if mgmt:
                entry["mgmt"] = mgmt
            if nics:
                entry["hca"] = port_of[int(nics[0]["id"])]
            entry["port_guid"] = _clean(guid or "")
            entry["description"] = _description(raw)
            sm_hosts.append(entry)
            summary.management_hosts += 1
            continue
        if not nics:
            problems.append(
                f"{dev.name}: no interface cabled into the fabric (a GPU host needs at least one NIC)"
            )
        nic_entries = []
        for i in nics:
            nic: dict[str, Any] = {"name": port_of[int(i["id"])]}
            if i.get("label"):
                nic["netdev"] = _clean(i["name"])
            rail = _cf(i, cf.rail)
            if rail is None:
                problems.append(
                    f"{dev.name}: interface {i['name']!r} has no {cf.rail!r} custom field (its NIC rail)"
                )
            else:
                nic["rail"] = rail
            if (s := _speed_gbps(i)) is not None:
                nic["speed"] = s
            if (g := _cf(i, cf.guid)) is not None:
                nic["guid"] = _clean(g)
            nic_entries.append(nic)
        entry = {"name": dev.name, "platform": dev.platform}
        if mgmt:
            entry["mgmt"] = mgmt
        entry["nics"] = nic_entries
        entry["description"] = _description(raw)
        hosts.append(entry)
        summary.hosts += 1

    link_entries = []
    for a, b, metres in links:
        link: dict[str, Any] = {
            "a": f"{iface_owner[a].name}:{port_of[a]}",
            "b": f"{iface_owner[b].name}:{port_of[b]}",
        }
        if metres is not None:
            link["length_m"] = int(metres) if float(metres).is_integer() else metres
        link_entries.append(link)
    summary.links = len(link_entries)

    tech = technology or mapping.fabric.technology
    if tech is None:
        techs = [catalog.info(d.platform).technologies for d in devs if d.role in SWITCH_ROLES]
        common = frozenset.intersection(*techs) if techs else frozenset()
        if len(common) == 1:
            tech = next(iter(common))
        else:
            problems.append("cannot tell the fabric technology from the switch platforms; give --technology")
    speed = link_speed or mapping.fabric.link_speed
    if speed is None:
        if speeds:
            top = speeds.most_common(1)[0][0]
            speed = f"{top}G"
            summary.notes.append(f"link_speed {speed}: the most common speed of the cabled interfaces")
        else:
            problems.append(
                "no interface speed in NetBox to take the fabric link speed from; give --link-speed"
            )
    if not devs:
        problems.append("NetBox returned no device to import (check --site/--tag)")
    if problems:
        raise ImportProblems(problems)
    doc: dict[str, Any] = {
        "fabric": {
            "name": fabric_name or mapping.fabric.name or "netbox",
            "technology": tech,
            "link_speed": speed,
        },
    }
    for section in ("credentials", "roce", "ib"):
        if (value := getattr(mapping, section)) is not None:
            doc[section] = value
    doc["switches"] = switches
    if hosts:
        doc["hosts"] = hosts
    if sm_hosts:
        doc["management_hosts"] = sm_hosts
    doc["links"] = link_entries
    return doc, summary


def dump_inventory(doc: dict[str, Any], source: str) -> str:
    """Inventory YAML in the shipped style: block sections, one flow-style line per device and link."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    parts = [
        f"# Imported from NetBox by `fabriccfg import netbox` ({_clean(source)}).\n"
        "# Re-import rather than edit by hand, or keep NetBox and this file in step.\n"
    ]
    for key, value in doc.items():
        flow = None if key in ("switches", "hosts", "management_hosts", "links") else False
        parts.append(
            yaml.dump({key: value}, Dumper=dumper, default_flow_style=flow, sort_keys=False, width=240)
        )
    return "\n".join(parts)
