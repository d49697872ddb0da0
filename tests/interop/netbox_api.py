"""A loopback HTTP server that answers like NetBox 4's REST API, and the lab it serves.

SOURCE of every shape (netbox-community/netbox, read through the project's look-up tools):
- pagination ``{count, next, previous, results}`` with ``limit``/``offset``, default page
  PAGINATE_COUNT, capped at MAX_PAGE_SIZE: docs/integrations/rest-api.md, "Pagination";
- nested (brief) objects: ``brief_fields`` of DeviceSerializer ``(id, url, display, name,
  description)``, DeviceRoleSerializer and PlatformSerializer ``(id, url, display, name, slug,
  description, device_count, virtualmachine_count, _depth)``, InterfaceSerializer ``(id, url,
  display, device, name, description, cable, _occupied)``: netbox/dcim/api/serializers_/devices.py,
  roles.py, platforms.py, device_components.py; IP brief ``(id, url, display, family, address,
  description)`` plus ``dns_name``, ``nat_inside``, ``nat_outside`` on ``primary_ip4``: devices.py;
- full device fields (``role``, ``platform``, ``serial``, ``asset_tag``, ``primary_ip4``,
  ``custom_fields``...): DeviceSerializer.Meta.fields; full interface fields (``label``, ``type`` as
  a ChoiceField ``{value, label}``, ``speed`` in kb/s, ``link_peers``...): InterfaceSerializer;
- cables: CableSerializer.Meta.fields with ``a_terminations``/``b_terminations`` rendered by
  GenericObjectSerializer as ``{id, object_type, object_id, object}`` where ``object`` is the
  nested (brief) interface: netbox/dcim/api/serializers_/cables.py and
  netbox/netbox/api/serializers/generic.py; ``length_unit`` ChoiceField values (m, cm, ft...):
  dcim/choices.py CableLengthUnitChoices;
- ``/api/status/`` keys (``django-version``, ``installed_apps``, ``netbox-version``,
  ``netbox-full-version``, ``plugins``, ``python-version``, ``rq-workers-running``):
  netbox/netbox/api/views.py StatusView; ``API-Version`` response header on ``/api/``, which
  pynetbox's ``Api.version`` reads;
- v1 tokens go in ``Authorization: Token <key>``, v2 tokens (``nbt_<id>.<secret>``, NetBox 4.5+) in
  ``Authorization: Bearer <token>``: docs/integrations/rest-api.md "Authentication" (4.5+) and
  netbox/netbox/api/authentication.py;
- an invalid token is answered with HTTP 403 ``{"detail": "Invalid token"}`` (DRF
  ``AuthenticationFailed`` as NetBox raises it in netbox/api/authentication.py).
Values (names, serials, addresses) are invented for this lab.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

NETBOX_VERSION = "4.2.3"
PAGINATE_COUNT = 2
MAX_PAGE_SIZE = 3
"""Tiny pages so that every list the importer reads spans several pages."""


@dataclass
class Lab:
    base: str = "http://127.0.0.1"
    devices: list[dict[str, Any]] = field(default_factory=list)
    interfaces: list[dict[str, Any]] = field(default_factory=list)
    cables: list[dict[str, Any]] = field(default_factory=list)
    sites: dict[int, str] = field(default_factory=dict)
    tags: dict[int, list[str]] = field(default_factory=dict)

    # ----- nested (brief) representations
    def _nested_named(self, kind: str, ident: int, name: str, slug: str) -> dict[str, Any]:
        return {
            "id": ident,
            "url": f"{self.base}/api/dcim/{kind}/{ident}/",
            "display": name,
            "name": name,
            "slug": slug,
            "description": "",
            "device_count": 0,
            "virtualmachine_count": 0,
            "_depth": 0,
        }

    def nested_device(self, dev: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": dev["id"],
            "url": dev["url"],
            "display": dev["name"],
            "name": dev["name"],
            "description": dev["description"],
        }

    def nested_interface(self, iface: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": iface["id"],
            "url": iface["url"],
            "display": iface["name"],
            "device": iface["device"],
            "name": iface["name"],
            "description": "",
            "cable": iface["cable"],
            "_occupied": iface["_occupied"],
        }

    # ----- full objects
    def device(
        self,
        ident: int,
        name: str,
        *,
        role: str,
        platform: str | None,
        site: str = "dc1",
        address: str | None = None,
        serial: str = "",
        asset_tag: str | None = None,
        model: str = "",
        custom_fields: dict[str, Any] | None = None,
        tags: tuple[str, ...] = (),
    ) -> dict[str, Any]:
        site_id = 1 if site == "dc1" else 2
        ip = None
        if address:
            ip = {
                "id": 1000 + ident,
                "url": f"{self.base}/api/ipam/ip-addresses/{1000 + ident}/",
                "display": address,
                "family": {"value": 4, "label": "IPv4"},
                "address": address,
                "description": "",
                "dns_name": "",
                "nat_inside": None,
                "nat_outside": None,
            }
        dev = {
            "id": ident,
            "url": f"{self.base}/api/dcim/devices/{ident}/",
            "display_url": "",
            "display": name,
            "name": name,
            "device_type": {
                "id": 50 + ident,
                "url": f"{self.base}/api/dcim/device-types/{50 + ident}/",
                "display": model,
                "manufacturer": None,
                "model": model,
                "slug": model.lower() or "generic",
                "description": "",
            },
            "role": self._nested_named("device-roles", 10 + len(role), role.title(), role),
            "tenant": None,
            "platform": self._nested_named("platforms", 20 + len(platform), platform, platform)
            if platform
            else None,
            "serial": serial,
            "asset_tag": asset_tag,
            "site": {
                "id": site_id,
                "url": f"{self.base}/api/dcim/sites/{site_id}/",
                "display": site,
                "name": site,
                "slug": site,
                "description": "",
            },
            "location": None,
            "rack": None,
            "position": None,
            "face": None,
            "latitude": None,
            "longitude": None,
            "parent_device": None,
            "status": {"value": "active", "label": "Active"},
            "airflow": None,
            "primary_ip": ip,
            "primary_ip4": ip,
            "primary_ip6": None,
            "oob_ip": None,
            "cluster": None,
            "virtual_chassis": None,
            "vc_position": None,
            "vc_priority": None,
            "description": "",
            "comments": "",
            "config_template": None,
            "config_context": {},
            "local_context_data": None,
            "tags": [
                {
                    "id": 70,
                    "url": f"{self.base}/api/extras/tags/70/",
                    "display": t,
                    "name": t,
                    "slug": t,
                    "color": "9e9e9e",
                }
                for t in tags
            ],
            "custom_fields": dict(custom_fields or {}),
            "created": "2026-01-05T10:00:00Z",
            "last_updated": "2026-01-05T10:00:00Z",
            "interface_count": 0,
        }
        self.devices.append(dev)
        self.sites[ident] = site
        self.tags[ident] = list(tags)
        return dev

    def interface(
        self,
        dev: dict[str, Any],
        name: str,
        *,
        kind: str = "400gbase-x-osfp",
        speed: int | None = None,
        label: str = "",
        custom_fields: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        ident = 500 + len(self.interfaces)
        iface = {
            "id": ident,
            "url": f"{self.base}/api/dcim/interfaces/{ident}/",
            "display_url": "",
            "display": name,
            "device": self.nested_device(dev),
            "vdcs": [],
            "module": None,
            "name": name,
            "label": label,
            "type": {"value": kind, "label": kind},
            "enabled": True,
            "parent": None,
            "bridge": None,
            "lag": None,
            "mtu": None,
            "mac_address": None,
            "speed": speed,
            "duplex": None,
            "wwn": None,
            "mgmt_only": False,
            "description": "",
            "mode": None,
            "rf_role": None,
            "rf_channel": None,
            "poe_mode": None,
            "poe_type": None,
            "rf_channel_frequency": None,
            "rf_channel_width": None,
            "tx_power": None,
            "untagged_vlan": None,
            "tagged_vlans": [],
            "qinq_svlan": None,
            "vlan_translation_policy": None,
            "mark_connected": False,
            "cable": None,
            "cable_end": "",
            "wireless_link": None,
            "link_peers": [],
            "link_peers_type": None,
            "wireless_lans": [],
            "vrf": None,
            "l2vpn_termination": None,
            "connected_endpoints": None,
            "connected_endpoints_type": None,
            "connected_endpoints_reachable": None,
            "tags": [],
            "custom_fields": dict(custom_fields or {}),
            "created": "2026-01-05T10:00:00Z",
            "last_updated": "2026-01-05T10:00:00Z",
            "count_ipaddresses": 0,
            "count_fhrp_groups": 0,
            "_occupied": False,
            "mac_addresses": [],
        }
        self.interfaces.append(iface)
        dev["interface_count"] += 1
        return iface

    def cable(
        self,
        a: dict[str, Any],
        b: dict[str, Any],
        *,
        length: float | None = None,
        unit: str | None = "m",
        status: str = "connected",
    ) -> dict[str, Any]:
        ident = 900 + len(self.cables)
        brief = {
            "id": ident,
            "url": f"{self.base}/api/dcim/cables/{ident}/",
            "display": f"#{ident}",
            "label": "",
            "description": "",
        }
        for end, this, peer in (("A", a, b), ("B", b, a)):
            this["cable"], this["cable_end"], this["_occupied"] = brief, end, True
            this["link_peers"], this["link_peers_type"] = [self.nested_interface(peer)], "dcim.interface"
        units = {"m": "Meters", "cm": "Centimeters", "ft": "Feet", "in": "Inches", "km": "Kilometers"}
        cable = {
            "id": ident,
            "url": brief["url"],
            "display_url": "",
            "display": f"#{ident}",
            "type": "mmf-om4",
            "a_terminations": [
                {
                    "id": a["id"],
                    "object_type": "dcim.interface",
                    "object_id": a["id"],
                    "object": self.nested_interface(a),
                }
            ],
            "b_terminations": [
                {
                    "id": b["id"],
                    "object_type": "dcim.interface",
                    "object_id": b["id"],
                    "object": self.nested_interface(b),
                }
            ],
            "status": {"value": status, "label": status.title()},
            "profile": None,
            "tenant": None,
            "label": "",
            "color": "",
            "length": length,
            "length_unit": {"value": unit, "label": units[unit]} if unit and length is not None else None,
            "description": "",
            "comments": "",
            "tags": [],
            "custom_fields": {},
            "created": "2026-01-05T10:00:00Z",
            "last_updated": "2026-01-05T10:00:00Z",
        }
        self.cables.append(cable)
        return cable


@dataclass
class Server:
    url: str
    token: str
    requests: list[str]
    lab: Lab


def _page(items: list[dict[str, Any]], path: str, query: dict[str, list[str]], base: str) -> dict[str, Any]:
    limit = int(query.get("limit", [PAGINATE_COUNT])[0]) or MAX_PAGE_SIZE
    limit = min(limit, MAX_PAGE_SIZE)
    offset = int(query.get("offset", ["0"])[0])
    rest = "&".join(f"{k}={v}" for k, vs in sorted(query.items()) if k not in ("limit", "offset") for v in vs)
    rest = f"&{rest}" if rest else ""
    nxt = f"{base}{path}?limit={limit}&offset={offset + limit}{rest}" if offset + limit < len(items) else None
    prev = f"{base}{path}?limit={limit}&offset={max(0, offset - limit)}{rest}" if offset else None
    return {"count": len(items), "next": nxt, "previous": prev, "results": items[offset : offset + limit]}


@contextmanager
def serve(lab: Lab, token: str) -> Iterator[Server]:
    """Serve ``lab`` on 127.0.0.1 (ephemeral port) until the block ends."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            seen.append(self.path)
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            auth = self.headers.get("Authorization", "")
            scheme = "Bearer" if token.startswith("nbt_") else "Token"  # v2 tokens (NetBox 4.5+): Bearer
            if auth != f"{scheme} {token}":
                self._send(403, {"detail": "Invalid token"})
                return
            path = parts.path
            if path == "/api/":
                self._send(200, {"dcim": f"{lab.base}/api/dcim/"}, {"API-Version": NETBOX_VERSION[:3]})
            elif path == "/api/status/":
                self._send(
                    200,
                    {
                        "django-version": "5.1.5",
                        "hostname": "netbox-lab",
                        "installed_apps": {},
                        "netbox-version": NETBOX_VERSION,
                        "netbox-full-version": NETBOX_VERSION,
                        "plugins": {},
                        "python-version": "3.12.3",
                        "rq-workers-running": 1,
                    },
                )
            elif path == "/api/dcim/devices/":
                items = [
                    d
                    for d in lab.devices
                    if all(lab.sites[d["id"]] == s for s in query.get("site", []))
                    and all(t in lab.tags[d["id"]] for t in query.get("tag", []))
                ]
                self._send(200, _page(items, path, query, lab.base))
            elif path == "/api/dcim/interfaces/":
                ids = {int(x) for x in query.get("device_id", [])}
                items = [i for i in lab.interfaces if not ids or i["device"]["id"] in ids]
                self._send(200, _page(items, path, query, lab.base))
            elif path == "/api/dcim/cables/":
                ids = {int(x) for x in query.get("device_id", [])}
                items = [
                    c
                    for c in lab.cables
                    if not ids
                    or any(
                        t["object"]["device"]["id"] in ids for t in c["a_terminations"] + c["b_terminations"]
                    )
                ]
                self._send(200, _page(items, path, query, lab.base))
            else:
                self._send(404, {"detail": "Not found."})

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    lab.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield Server(lab.base, token, seen, lab)
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
