"""How NetBox names map onto fabriccfg names: platform and role slugs, custom-field names.

NetBox slugs are site conventions (``arista-eos``, ``leaf-switch``), so the operator states the
mapping; a slug equal to a fabriccfg name maps to itself, nothing else is inferred. A role may map
to ``skip`` to leave a kind of device out on purpose (PDUs, console servers, the OOB switch).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

FabricRole = Literal["leaf", "spine", "core", "gpu", "sm", "skip"]
SWITCH_ROLES: frozenset[str] = frozenset({"leaf", "spine", "core"})
ROLE_KIND: dict[str, str] = {
    "leaf": "switch",
    "spine": "switch",
    "core": "switch",
    "gpu": "gpu-host",
    "sm": "sm-host",
}
"""fabriccfg role -> the platform kind a device with that role must have."""


class MappingError(Exception):
    """A mapping file or option is unusable (message is one line, safe to print)."""


class CustomFields(BaseModel):
    """Names of the NetBox custom fields that carry what NetBox has no native field for."""

    model_config = ConfigDict(extra="forbid")
    rail: str = Field(
        "rail", description="Integer custom field on devices (leaf rail) and interfaces (NIC rail)"
    )
    guid: str = Field(
        "ib_guid", description="Text custom field: switch node GUID (device), port GUID (interface)"
    )
    asic: str = Field("asic", description="Text custom field on switches: ASIC generation")


class FabricDefaults(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    technology: Literal["infiniband", "roce"] | None = None
    link_speed: str | int | None = None


class Mapping(BaseModel):
    """The mapping file: ``platforms``, ``roles``, ``custom_fields``, ``fabric``, and the sections NetBox
    has no place for (``credentials``, ``roce``, ``ib``), copied into the inventory for validate to check."""

    model_config = ConfigDict(extra="forbid")
    platforms: dict[str, str] = Field(
        default_factory=dict, description="NetBox platform slug -> fabriccfg platform"
    )
    roles: dict[str, FabricRole] = Field(
        default_factory=dict, description="NetBox role slug -> fabriccfg role"
    )
    custom_fields: CustomFields = CustomFields()
    fabric: FabricDefaults = FabricDefaults()
    credentials: dict[str, object] | None = Field(
        None, description="Copied into the inventory as is (secret references only; validate checks it)"
    )
    roce: dict[str, object] | None = Field(None, description="RoCE intent, copied into the inventory as is")
    ib: dict[str, object] | None = Field(
        None, description="InfiniBand intent (subnet managers, SHARP, partitions), copied as is"
    )

    def platform(self, slug: str, known: set[str]) -> str | None:
        if slug in self.platforms:
            return self.platforms[slug]
        return slug if slug in known else None

    def role(self, slug: str) -> str | None:
        if slug in self.roles:
            return self.roles[slug]
        return slug if slug in ROLE_KIND else None


def _pairs(items: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        left, sep, right = item.partition("=")
        if not sep or not left.strip() or not right.strip():
            raise MappingError(f"--{what}-map {item!r}: write NETBOX_SLUG=FABRICCFG_NAME")
        out[left.strip()] = right.strip()
    return out


def load_mapping(path: Path | None, platform_map: list[str], role_map: list[str]) -> Mapping:
    """The mapping file (if any) with ``--platform-map``/``--role-map`` pairs on top."""
    data: dict[str, object] = {}
    if path is not None:
        try:
            loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise MappingError(f"cannot read mapping {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
            raise MappingError(f"{where}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise MappingError(f"{path}: the mapping must be a YAML mapping (platforms:, roles:, ...)")
        data = loaded or {}
    try:
        mapping = Mapping.model_validate(data)
        extra_roles = Mapping.model_validate({"roles": _pairs(role_map, "role")}).roles
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise MappingError(f"{path or 'mapping'}: {loc}: {err['msg']}") from None
    mapping.platforms.update(_pairs(platform_map, "platform"))
    mapping.roles.update(extra_roles)
    return mapping
