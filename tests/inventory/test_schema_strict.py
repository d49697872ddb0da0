"""The JSON Schema says what ``validate`` says where a schema can: link speeds, secret references,
and it names itself with an ``$id`` (issue 16 §4). Judged by Python's ``re`` on the published patterns
against the loader's own verdict on the same strings (two independent spellings must agree)."""

from __future__ import annotations

import re

import pytest
from pydantic import TypeAdapter, ValidationError

from fabriccfg.inventory.schema import SECRET_PATTERN, SPEED_PATTERN, inventory_schema
from fabriccfg.inventory.types import SecretRef, parse_speed

SPEEDS = ["400G", "400g", " 200G ", "100Gb/s", "100 Gbps", "400gbit/s", "HDR", "hdr100", "NDR200", "EDR",
          "25", "400", "1T", "400X", "fast", "G400", "4 0 0G", "", "400G;", "HDR 100", "0x400"]
SECRETS = ["env:SWITCH_PASSWORD", "env:_X1", "file:/etc/fabriccfg/pw", "file:~/pw", "env:1BAD", "env:",
           "file:", "hunter2", "env:A B", "ENV:X", " env:X"]


def _validate_speed(text: str) -> bool:
    try:
        parse_speed(text)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("text", SPEEDS)
def test_speed_pattern_matches_the_loader(text: str) -> None:
    # the loader may still refuse a matching string that is not a whole number of Gb/s (e.g. 100M)
    assert (re.search(SPEED_PATTERN, text) is not None) == _validate_speed(text)


@pytest.mark.parametrize("text", SECRETS)
def test_secret_pattern_matches_the_loader(text: str) -> None:
    try:
        TypeAdapter(SecretRef).validate_python(text)
        ok = True
    except ValidationError:
        ok = False
    assert (re.search(SECRET_PATTERN, text) is not None) == ok


def test_schema_has_id_and_uses_the_patterns() -> None:
    schema = inventory_schema()
    assert schema["$id"].startswith("urn:fabriccfg:schema:inventory:")
    ssh = schema["$defs"]["SshCredentials"]["properties"]["password"]
    want = {"type": "string", "pattern": SECRET_PATTERN, "description": "env:NAME or file:PATH"}
    assert want in ssh["anyOf"]
    speed = schema["properties"]["fabric"]
    text = str(schema)
    assert text.count(SPEED_PATTERN.replace("\\", "\\\\")) >= 3 and speed
