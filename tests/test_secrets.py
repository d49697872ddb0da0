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


def test_redaction_with_thousands_of_secrets_matches_replacing_each(monkeypatch) -> None:
    """A fabric with per-device passwords: the automaton scan gives what replacing every secret in turn
    (longest first) gives (its cost per text no longer grows with the number of secrets: a benchmark
    matter, measured in the issue-14 report)."""
    import random

    rng = random.Random(7)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEF0123456789-_"
    monkeypatch.setattr(secrets, "_resolved", set())
    values = ["".join(rng.choice(alphabet) for _ in range(rng.choice((4, 12, 16, 20)))) for _ in range(2000)]
    for v in values:
        secrets.remember(v)
    chosen = rng.sample(values, 40)
    for trial in range(30):
        parts = []
        for _ in range(60):
            parts.append("".join(rng.choice(alphabet + " \n#") for _ in range(rng.randrange(0, 30))))
            if rng.random() < 0.5:
                parts.append(rng.choice(chosen))
        text = "".join(parts)
        want = text
        for v in sorted(set(values), key=len, reverse=True):
            want = want.replace(v, "********")
        assert secrets.redact(text) == want, trial


def test_secrets_learnt_after_the_automaton_was_built_are_redacted_too() -> None:
    """A push learns one password per device as it connects: a secret added after the automaton was
    built is redacted at once (searched on its own), and still after the automaton is rebuilt."""
    first = [f"device-password-{i:04d}" for i in range(300)]
    for v in first:
        secrets.remember(v)
    assert secrets.redact(f"a {first[7]} b") == "a ******** b"  # builds the automaton
    later = [f"later-secret-{i:04d}" for i in range(200)]
    for i, v in enumerate(later):
        secrets.remember(v)
        text = f"x {v} y {first[i]} z {later[i // 2]}"
        assert secrets.redact(text) == "x ******** y ******** z ********", i
    assert secrets.redact("no secret here") == "no secret here"


@pytest.mark.parametrize("count", [3, 300], ids=["one-by-one", "automaton"])
def test_redact_tree_redacts_every_string_and_leaves_clean_trees_alone(count: int) -> None:
    values = [f"tree-secret-{i:04d}" for i in range(count)]
    for v in values:
        secrets.remember(v)
    secrets.remember("ab\ncd-joined")  # only the join of two strings would show it: never redacted
    commands = [f"nv set interface swp{i} description port-{i}" for i in range(2000)]
    clean = {"device": "leaf-r0", "result": {"commands": commands, "notes": [("a", "b")], "n": 3}}
    assert secrets.redact_tree(clean) == clean
    dirty = {"result": {"commands": [*commands[:5], f"nv set system password {values[-1]}"],
                        "pair": ["xx ab", "cd-joined yy"], "n": 3}}
    assert secrets.redact_tree(dirty) == {"result": {
        "commands": [*commands[:5], "nv set system password ********"], "pair": ["xx ab", "cd-joined yy"],
        "n": 3}}
