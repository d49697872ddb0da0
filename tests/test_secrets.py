"""Redaction of resolved secrets: long ones everywhere, too-short ones never (with one warning)."""

from __future__ import annotations

import logging

import pytest

from fabriccfg import secrets


@pytest.fixture(autouse=True)
def fresh_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_resolved", set())
    monkeypatch.setattr(secrets, "_warned_short", False)


def test_long_secret_is_redacted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FABRIC_SNMP_AUTH", "hunter2")
    assert secrets.resolve("env:FABRIC_SNMP_AUTH") == "hunter2"
    assert secrets.redact("auth hunter2 ok") == "auth ******** ok"


def test_four_characters_is_long_enough() -> None:
    secrets.remember("abcd")
    assert secrets.redact("xabcdx") == "x********x"


def test_short_secret_is_kept_not_redacted_and_warned_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("FABRIC_SNMP_AUTH", "y")
    monkeypatch.setenv("FABRIC_SSH_PASSWORD", "xyz")
    with caplog.at_level(logging.WARNING, logger="fabriccfg.secrets"):
        assert secrets.resolve("env:FABRIC_SNMP_AUTH") == "y"  # usable: refusing a password is wrong
        assert secrets.resolve("env:FABRIC_SSH_PASSWORD") == "xyz"
        secrets.remember("yy")
    text = "every yes, yay and xyzzy stays as it is"
    assert secrets.redact(text) == text
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    message = warnings[0].getMessage()
    assert "env:FABRIC_SNMP_AUTH" in message and "shorter than 4" in message
    assert "'y'" not in message and "xyz" not in message  # names the reference, never the value


def test_short_and_long_secrets_together() -> None:
    secrets.remember("ab")
    secrets.remember("s3cret-pass")
    assert secrets.redact("ab s3cret-pass ab") == "ab ******** ab"
