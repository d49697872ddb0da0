"""JSON Schema of the inventory file, for YAML editors (``fabriccfg schema``).

Pydantic's schema describes the validated model; the *file* accepts a little more, which the
loader turns into the model: ``profiles:`` and a device's ``profile:`` (so fields may come from a
profile and only ``name`` is required on a device), one-line links (``a <-> b 3m``), speeds such as
``HDR`` or ``400G``, GUIDs as numbers, and pkeys as hex strings.
"""

from __future__ import annotations

from typing import Any

from fabriccfg.inventory.models import Fabric

SPEED_PATTERN = (r"^\s*(?:[Hh][Dd][Rr](?:100)?|[Ee][Dd][Rr]|[Nn][Dd][Rr](?:200)?|"
                 r"\d+(?:\.\d+)?\s*[GgMmTt]?(?:[Bb](?:[Ii][Tt])?/?[Ss]|[Bb][Pp][Ss])?)\s*$")
"""What ``types.parse_speed`` accepts as a string, as far as a regex can say (it also checks that the
value is a whole number of Gb/s, which a pattern cannot)."""
SECRET_PATTERN = r"^(env:[A-Za-z_][A-Za-z0-9_]*|file:\S.*)$"  # noqa: S105 - a pattern, not a secret
"""A secret reference (``types.SecretRef``): ``env:NAME`` or ``file:PATH``, never the secret itself."""
SECRET_FIELDS = frozenset({"password", "key_file", "enable_secret", "community", "auth_key", "priv_key"})
SCHEMA_ID = "urn:fabriccfg:schema:inventory:1"
"""``$id``: the schema's stable name (bumped when the inventory format changes incompatibly)."""

_SPEED: dict[str, Any] = {
    "anyOf": [
        {"type": "integer", "exclusiveMinimum": 0, "maximum": 1600},
        {"type": "string", "pattern": SPEED_PATTERN, "examples": ["400G", "200G", "HDR", "HDR100", "NDR"]},
    ],
    "description": "Gb/s, or a string such as 400G or HDR",
}
_GUID: dict[str, Any] = {
    "anyOf": [{"type": "string", "pattern": "^(0x)?[0-9a-fA-F:]{1,23}$"}, {"type": "integer"}],
    "description": "64-bit GUID, e.g. 0x08c0eb0300f6fc26",
}
_ADDRESS = {"type": "string", "description": "IPv4 or IPv6 management address"}
_LINK_LINE = {
    "type": "string",
    "pattern": "^\\S+:\\S+\\s+<->\\s+\\S+:\\S+(\\s+\\S+)*$",
    "description": "one-line link: 'device:port <-> device:port [3m] [speed=400G]'",
}
_DEVICE_DEFS = ("Switch", "Host", "ManagementHost")


def _patch(node: Any, name: str) -> None:
    """Widen leaf types the loader accepts in more spellings than the model stores."""
    if isinstance(node, dict):
        props = node.get("properties")
        if isinstance(props, dict):
            for key, sub in list(props.items()):
                desc = sub.get("description") if isinstance(sub, dict) else None
                extra = {"description": desc} if desc else {}
                nullable = isinstance(sub, dict) and {"type": "null"} in sub.get("anyOf", [])
                null: list[dict[str, Any]] = [{"type": "null"}] if nullable else []
                if key in ("speed", "link_speed", "port_speed", "rate"):
                    props[key] = {
                        "anyOf": [*_SPEED["anyOf"], *null],
                        "description": _SPEED["description"],
                        **extra,
                        **({"default": sub["default"]} if "default" in sub else {}),
                    }
                elif key in ("guid", "port_guid"):
                    props[key] = {"anyOf": [*_GUID["anyOf"], *null], **extra}
                elif key == "mgmt":
                    props[key] = {"anyOf": [_ADDRESS, {"type": "null"}], **extra}
                elif key in SECRET_FIELDS and name in ("SshCredentials", "SnmpCredentials"):
                    props[key] = {"anyOf": [{"type": "string", "pattern": SECRET_PATTERN,
                                             "description": "env:NAME or file:PATH"}, *null], **extra}
                elif key == "pkey" and name == "Partition":
                    props[key] = {"anyOf": [sub, {"type": "string", "pattern": "^0x[0-9a-fA-F]{1,4}$"}]}
                else:
                    _patch(sub, name)
        for value in node.values():
            if isinstance(value, (dict, list)) and value is not props:
                _patch(value, name)
    elif isinstance(node, list):
        for item in node:
            _patch(item, name)


def inventory_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of an inventory file."""
    schema: dict[str, Any] = Fabric.model_json_schema(mode="validation")
    defs: dict[str, Any] = schema.get("$defs", {})
    for name, body in defs.items():
        _patch(body, name)
    _patch({"properties": schema.get("properties", {})}, "Fabric")
    for name in _DEVICE_DEFS:
        body = defs.get(name)
        if body is None:
            continue
        body.setdefault("properties", {})["profile"] = {
            "type": "string",
            "description": "Name of a profile under 'profiles:' whose settings this device inherits",
        }
        body["required"] = ["name"]
    links = schema["properties"].get("links")
    if isinstance(links, dict) and "items" in links:
        links["items"] = {"anyOf": [links["items"], _LINK_LINE]}
    schema["properties"]["profiles"] = {
        "type": "object",
        "description": "Reusable device settings; a device names one with 'profile:', a profile may "
        "'inherits:' another. Values set on the device win; nested mappings merge key by key.",
        "additionalProperties": {
            "type": "object",
            "properties": {"inherits": {"type": "string", "description": "Parent profile"}},
            "additionalProperties": True,
        },
    }
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = SCHEMA_ID
    schema["title"] = "fabriccfg inventory"
    return schema
