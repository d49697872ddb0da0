"""How to reach each device: from the inventory, or from a mock fabric's endpoints file.

``fabriccfg mock up`` writes the endpoints file; ``--endpoints FILE`` on diff, push, verify and
watch makes them talk to those endpoints instead of the inventory's management addresses.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from fabriccfg import catalog, secrets
from fabriccfg.inventory.models import Fabric

DEFAULT_ENDPOINTS = Path(".fabriccfg/mock-endpoints.json")


class SnmpAccess(BaseModel):
    model_config = ConfigDict(extra="forbid")
    version: Literal["2c", "3"]
    community: str | None = Field(None, repr=False)
    user: str | None = None
    auth_protocol: str | None = None
    auth_key: str | None = Field(None, repr=False)
    priv_protocol: str | None = None
    priv_key: str | None = Field(None, repr=False)


class Endpoint(BaseModel):
    """One device's access details (the endpoints-file object; also built from the inventory)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    platform: str
    device_type: str | None
    host: str
    ssh_port: int | None = 22
    snmp_port: int | None = None
    username: str = "admin"
    password: str | None = Field(None, repr=False)
    key_file: str | None = None
    known_hosts: str | None = None
    snmp: SnmpAccess | None = Field(None, repr=False)


class EndpointsError(Exception):
    """The endpoints file is missing or malformed (message is safe to print)."""


def load_endpoints(path: str | Path = DEFAULT_ENDPOINTS) -> dict[str, Endpoint]:
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EndpointsError(
            f"{p}: no endpoints file (start a mock fabric with 'fabriccfg mock up')"
        ) from None
    except (OSError, json.JSONDecodeError) as exc:
        raise EndpointsError(f"{p}: not a readable endpoints file: {exc}") from None
    if not isinstance(raw, list):
        raise EndpointsError(f"{p}: expected a JSON list of endpoint objects")
    try:
        eps = [Endpoint.model_validate(item) for item in raw]
    except ValidationError as exc:
        raise EndpointsError(f"{p}: invalid endpoint: {exc.errors(include_url=False)[0]['msg']}") from None
    for ep in eps:
        for value in (ep.password, ep.snmp and ep.snmp.community, ep.snmp and ep.snmp.auth_key,
                      ep.snmp and ep.snmp.priv_key):
            if value:
                secrets.remember(value)
    return {ep.name: ep for ep in eps}


def write_endpoints(path: str | Path, endpoints: list[Endpoint]) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(p.suffix + ".tmp")
    tmp.unlink(missing_ok=True)  # a leftover could have wider permissions; the file holds passwords
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)  # 0600 from the start, no window
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(json.dumps([ep.model_dump() for ep in endpoints], indent=2) + "\n")
    tmp.chmod(0o600)
    tmp.replace(p)


Access = Literal["ssh", "snmp"]


def from_inventory(fabric: Fabric, inventory_dir: Path | None = None,
                   access: Collection[Access] = ("ssh", "snmp")) -> dict[str, Endpoint]:
    """Endpoints for every device with a management address, secrets resolved now.

    Only the secrets of ``access`` are resolved (``push``/``diff`` use SSH only, so an unset SNMP
    variable must not stop them); the other kind is left out of the endpoints.
    Raises :class:`fabriccfg.secrets.SecretError` when a needed secret is missing.
    """
    creds = fabric.credentials
    base = inventory_dir or Path.cwd()
    known_hosts = creds.known_hosts or default_known_hosts(base)
    use_ssh = "ssh" in access
    password = secrets.resolve(creds.ssh.password, base_dir=base) if creds.ssh.password and use_ssh else None
    key_file = creds.ssh.key_file.partition(":")[2] if creds.ssh.key_file else None
    snmp = None
    if creds.snmp is not None and "snmp" in access:
        s = creds.snmp

        def res(ref: str | None) -> str | None:
            return secrets.resolve(ref, base_dir=base) if ref else None

        snmp = SnmpAccess(version=s.version, community=res(s.community), user=s.user,
                          auth_protocol=s.auth_protocol, auth_key=res(s.auth_key),
                          priv_protocol=s.priv_protocol, priv_key=res(s.priv_key))
    out: dict[str, Endpoint] = {}
    for dev in fabric.devices.values():
        info = catalog.info(dev.platform)
        if dev.mgmt is None:
            continue
        out[dev.name] = Endpoint(
            name=dev.name, platform=dev.platform, device_type=info.device_type, host=str(dev.mgmt),
            ssh_port=22 if info.device_type else None,
            snmp_port=(creds.snmp.port if creds.snmp and info.has_snmp else None),
            username=creds.ssh.username, password=password, key_file=key_file, known_hosts=known_hosts,
            snmp=snmp if info.has_snmp else None,
        )
    return out


def default_known_hosts(inventory_dir: Path) -> str:
    """``<inventory dir>/known_hosts`` when that file exists, else ``~/.ssh/known_hosts`` (as ssh does)."""
    beside = inventory_dir / "known_hosts"
    return str(beside) if beside.is_file() else str(Path("~/.ssh/known_hosts").expanduser())


def resolve_targets(fabric: Fabric, endpoints_file: str | Path | None, inventory_dir: Path | None = None,
                    access: Collection[Access] = ("ssh", "snmp"),
                    known_hosts: str | Path | None = None) -> dict[str, Endpoint]:
    """Endpoints file when given (the mock fabric), else the inventory's management addresses
    (resolving only the secrets of ``access``); ``known_hosts`` (``--known-hosts FILE``) replaces
    every endpoint's host-key file."""
    if endpoints_file is not None:
        eps = load_endpoints(endpoints_file)
    else:
        eps = from_inventory(fabric, inventory_dir, access)
    if known_hosts is not None:
        eps = {n: e.model_copy(update={"known_hosts": str(Path(known_hosts).expanduser())})
               for n, e in eps.items()}
    return eps
