"""Read devices, interfaces and cables from NetBox's REST API through pynetbox.

Only reads (GET). Records are turned into plain dicts at once (``dict(record)``), so the inventory
builder (``interop.build``) works on the JSON shapes NetBox documents and is tested on them.
The token is sent in the Authorization header by pynetbox and never appears in a message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pynetbox
import requests

MIN_VERSION = (4, 0)
"""Cable terminations as ``a_terminations``/``b_terminations`` lists carrying the nested ``object``
(GenericObjectSerializer) are NetBox 4 shapes; older servers are refused rather than misread."""

CHUNK = 100
"""Device ids per interface/cable query: keeps each URL short on fabrics with thousands of devices."""


class NetboxError(Exception):
    """NetBox could not be read (one line, never contains the token)."""


@dataclass
class NetboxData:
    version: str
    devices: list[dict[str, Any]] = field(default_factory=list)
    interfaces: list[dict[str, Any]] = field(default_factory=list)
    cables: list[dict[str, Any]] = field(default_factory=list)


def _version_tuple(text: str) -> tuple[int, ...]:
    parts = []
    for piece in text.split("-", maxsplit=1)[0].split(".")[:2]:
        if not piece.isdigit():
            break
        parts.append(int(piece))
    return tuple(parts)


def _chunks(ids: list[int]) -> Iterator[list[int]]:
    for i in range(0, len(ids), CHUNK):
        yield ids[i : i + CHUNK]


def _plain(records: Iterable[Any]) -> list[dict[str, Any]]:
    return [dict(r) for r in records]


def fetch(url: str, token: str, *, site: str | None = None, tag: str | None = None) -> NetboxData:
    """Devices of ``site``/``tag`` with their interfaces and cables (all pages)."""
    api = pynetbox.api(url, token=token)
    try:
        status = api.status()
        version = str(status.get("netbox-version", "")) if isinstance(status, dict) else ""
        if _version_tuple(version) < MIN_VERSION:
            raise NetboxError(
                f"{url} runs NetBox {version or '(unknown version)'}; fabriccfg reads NetBox 4.0 or later"
            )
        filters: dict[str, str] = {}
        if site:
            filters["site"] = site
        if tag:
            filters["tag"] = tag
        devices = _plain(api.dcim.devices.filter(**filters))
        ids = sorted(int(d["id"]) for d in devices)
        interfaces: list[dict[str, Any]] = []
        cables: dict[int, dict[str, Any]] = {}
        for chunk in _chunks(ids):
            interfaces.extend(_plain(api.dcim.interfaces.filter(device_id=chunk)))
            for cable in _plain(api.dcim.cables.filter(device_id=chunk)):
                cables.setdefault(int(cable["id"]), cable)
    except pynetbox.RequestError as exc:
        code = exc.req.status_code
        hint = " (check the token)" if code in (401, 403) else ""
        raise NetboxError(f"NetBox answered HTTP {code} for {exc.req.url.split('?')[0]}{hint}") from None
    except pynetbox.ContentError as exc:
        raise NetboxError(
            f"{exc.req.url.split('?')[0]} did not answer with JSON: is {url} a NetBox?"
        ) from None
    except requests.RequestException as exc:
        raise NetboxError(f"cannot reach NetBox at {url}: {type(exc).__name__}") from None
    return NetboxData(version, devices, interfaces, [cables[k] for k in sorted(cables)])
