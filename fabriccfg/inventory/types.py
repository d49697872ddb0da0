"""Constrained scalar types for the inventory.

Each type rejects bad input with a pydantic custom error whose type is a rule id, so the
loader can report ``error[unsafe-text]`` or ``error[literal-secret]`` with a position.
"""

from __future__ import annotations

import difflib
import ipaddress
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field
from pydantic_core import PydanticCustomError

from fabriccfg import catalog
from fabriccfg.text import first_unsafe

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_ABS_PATH = re.compile(r"^/[A-Za-z0-9._+@/-]{0,4095}$")
_SECRET_REF = re.compile(r"^(env:[A-Za-z_][A-Za-z0-9_]*|file:\S.*)$")
_SPEED = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([GMT]?)(?:b(?:it)?/?s|bps)?\s*$", re.IGNORECASE)
_IB_SPEEDS = {"HDR": 200, "HDR100": 100, "EDR": 100, "NDR": 400, "NDR200": 200}


def _safe_text(value: str) -> str:
    """Refuse line breaks, control and format characters (``fabriccfg.text``): rendered into a config
    line they would start a new command, or make the line read differently from what it does."""
    bad = first_unsafe(value)
    if bad is not None:
        raise PydanticCustomError(
            "unsafe-text",
            "contains {char} at character {index}; inventory text must be one line of visible characters "
            "(a line break would add a command to the device config)",
            {"char": bad.describe(), "index": bad.index + 1},
        )
    return value


def _name(value: str) -> str:
    _safe_text(value)
    if not _NAME.match(value):
        raise PydanticCustomError(
            "invalid-name",
            "'{value}' is not a valid name: use letters, digits, '.', '_' or '-' "
            "(max 63, no leading punctuation)",
            {"value": value},
        )
    return value


def _abs_path(value: str) -> str:
    """Refuse anything but a plain absolute path: a space, '#', quote or '$' would change the line's meaning
    in the file it is rendered into (opensm.conf ``log_file``) or in a shell that reads it."""
    _safe_text(value)
    if not _ABS_PATH.match(value):
        raise PydanticCustomError(
            "unsafe-path",
            "'{value}' is not a plain absolute path: use '/' followed by letters, digits, '.', '_', '+', "
            "'@', '-' or '/' (no spaces, quotes or shell characters)",
            {"value": value},
        )
    return value


def _secret_ref(value: str) -> str:
    _safe_text(value)
    if not _SECRET_REF.match(value):
        raise PydanticCustomError(
            "literal-secret",
            "secrets must not be written in the inventory; reference them as 'env:VARIABLE' "
            "or 'file:/path/to/secret' instead",
        )
    return value


def parse_speed(value: Any) -> int:
    """Accept 400, '400G', '400Gb/s', 'HDR', 'HDR100', '100M'... and return Gb/s as int."""
    if isinstance(value, bool):
        raise PydanticCustomError("wrong-type", "a speed must be a number of Gb/s or a string such as '400G'")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        key = value.strip().upper()
        if key in _IB_SPEEDS:
            return _IB_SPEEDS[key]
        m = _SPEED.match(value)
        if m:
            number, unit = float(m.group(1)), m.group(2).upper()
            gbps = number * {"": 1, "G": 1, "M": 0.001, "T": 1000}[unit]
            if gbps >= 1 and gbps.is_integer():
                return int(gbps)
    raise PydanticCustomError(
        "invalid-value", "'{value}' is not a link speed; write e.g. 400G, 200G, 100G or HDR", {"value": value}
    )


def _parse_guid(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = f"{value:#018x}"
    if not isinstance(value, str):
        raise PydanticCustomError("wrong-type", "a GUID must be a string such as '0x08c0eb0300f6fc26'")
    _safe_text(value)
    text = value.strip().lower().replace(":", "")
    if text.startswith("0x"):
        text = text[2:]
    if not re.fullmatch(r"[0-9a-f]{1,16}", text) or int(text, 16) == 0:
        raise PydanticCustomError(
            "invalid-value", "'{value}' is not a 64-bit GUID (e.g. 0x08c0eb0300f6fc26)", {"value": value}
        )
    return "0x" + text.rjust(16, "0")


SafeText = Annotated[str, AfterValidator(_safe_text)]
"""Free text that may be rendered into a device config."""

Name = Annotated[str, AfterValidator(_name)]
"""A device, partition or profile name."""

AbsPath = Annotated[str, AfterValidator(_abs_path)]
"""An absolute file path rendered into a device file (``unsafe-path`` otherwise)."""

SecretRef = Annotated[str, AfterValidator(_secret_ref)]
"""A reference to a secret: ``env:NAME`` or ``file:PATH``; never the secret itself."""

Speed = Annotated[int, BeforeValidator(parse_speed), Field(gt=0, le=1600)]
"""Link speed in Gb/s."""

Guid = Annotated[str, BeforeValidator(_parse_guid)]
"""A 64-bit InfiniBand GUID, normalised to ``0x`` + 16 lower-case hex digits."""

Percent = Annotated[int, Field(ge=1, le=100)]
Priority = Annotated[int, Field(ge=0, le=7)]
Dscp = Annotated[int, Field(ge=0, le=63)]


def _parse_address(value: Any) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    if isinstance(value, (ipaddress.IPv4Address, ipaddress.IPv6Address)):
        return value
    try:
        return ipaddress.ip_address(str(value).strip())
    except ValueError:
        raise PydanticCustomError(
            "invalid-value", "'{value}' is not an IPv4 or IPv6 address", {"value": value}
        ) from None


Address = Annotated[ipaddress.IPv4Address | ipaddress.IPv6Address, BeforeValidator(_parse_address)]
"""A management address."""


def _platform_of_kind(kind: str) -> Any:
    """A validator accepting registered platforms of one kind ("switch", "gpu-host", "sm-host").

    The list comes from the platform registry (built-ins + entry points), so adding a platform needs
    no change here.
    """

    cached: list[str] = []  # the registry is fixed once loaded; 100,000 switches need not rebuild the list

    def check(value: str) -> str:
        _safe_text(value)
        if not cached:
            cached.extend(n for n in catalog.names() if catalog.info(n).kind == kind)
        known = cached
        if value not in known:
            close = difflib.get_close_matches(value, known, n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise PydanticCustomError(
                "invalid-value", "'{value}' is not a {kind} platform (known: {known}){hint}",
                {"value": value, "kind": kind, "known": ", ".join(known), "hint": hint},
            )
        return value

    return check


def _platform_schema(kind: str) -> dict[str, Any]:
    return {"enum": [n for n in catalog.names() if catalog.info(n).kind == kind]}


SwitchPlatform = Annotated[str, AfterValidator(_platform_of_kind("switch")),
                           Field(json_schema_extra=lambda s: s.update(_platform_schema("switch")))]
GpuHostPlatform = Annotated[str, AfterValidator(_platform_of_kind("gpu-host")),
                            Field(json_schema_extra=lambda s: s.update(_platform_schema("gpu-host")))]
SmHostPlatform = Annotated[str, AfterValidator(_platform_of_kind("sm-host")),
                           Field(json_schema_extra=lambda s: s.update(_platform_schema("sm-host")))]
"""Platform names checked against the registry (one kind each)."""
