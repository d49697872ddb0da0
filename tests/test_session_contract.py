"""The netmiko adapter behind :class:`fabriccfg.session.Session` against the netmiko this project pins.

``fabriccfg/connect.py`` overrides a few netmiko internals to read without fixed sleeps. A netmiko release
that renamed one would silently bring the sleeps (or a 10 s MLNX-OS stall) back, so this test fails
first: the installed netmiko is inside the pinned range, every method the protocol promises exists on
netmiko's ``BaseConnection`` with the parameters we pass, and every internal the adapter overrides still
exists, with the parameters the override accepts, and is still called where the adapter expects.
"""

from __future__ import annotations

import inspect
import random
import re
import tomllib
from pathlib import Path

import netmiko
from netmiko.base_connection import BaseConnection
from packaging.specifiers import SpecifierSet
from packaging.version import Version

import fabriccfg.connect as adapter
from fabriccfg.session import SESSION_METHODS, Session

ROOT = Path(__file__).resolve().parents[1]
OVERRIDDEN = ("_try_session_preparation", "clear_buffer", "read_until_pattern", "_open", "read_channel",
              "session_preparation", "check_config_mode", "normalize_linefeeds", "strip_ansi_escape_codes")
"""netmiko methods the adapter's classes override (``Guarded`` and the prompt-prepared subclass)."""
CALLED = ("_test_channel_read", "set_base_prompt", "disable_paging", "write_channel",
          "strip_ansi_escape_codes")
"""netmiko internals the overrides call."""


def _pinned() -> SpecifierSet:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    spec = next(d for d in deps if re.match(r"netmiko\b", d))
    return SpecifierSet(spec[len("netmiko"):])


def test_installed_netmiko_is_in_the_pinned_range() -> None:
    assert Version(netmiko.__version__) in _pinned(), (netmiko.__version__, str(_pinned()))


def test_every_session_method_exists_on_netmiko_with_our_parameters() -> None:
    assert "send_command" in SESSION_METHODS and len(SESSION_METHODS) >= 10
    for name in SESSION_METHODS:
        ours = inspect.signature(getattr(Session, name))
        if name in ("fc_command", "fc_lines"):  # the adapter's own fast paths
            fast = {"fc_command": adapter.fast_command, "fc_lines": adapter.fast_lines}[name]
            theirs = inspect.signature(fast)
            want = [p for p in ours.parameters if p != "self"]
            assert [p for p in theirs.parameters if p != "conn"] == want, (name, theirs)
            continue
        theirs = inspect.signature(getattr(BaseConnection, name))
        missing = [p for p in ours.parameters if p not in theirs.parameters]
        assert missing == [], f"netmiko {netmiko.__version__} BaseConnection.{name}{theirs} lacks {missing}"


def test_the_internals_the_adapter_overrides_still_exist_and_fit() -> None:
    cls = adapter._fast_class("linux", r"[>#]")
    for name in OVERRIDDEN:
        theirs = getattr(BaseConnection, name, None)
        assert theirs is not None, f"netmiko {netmiko.__version__} has no BaseConnection.{name}"
        ours = getattr(cls, name)
        assert ours is not theirs, f"the adapter no longer overrides {name}"
        assert list(inspect.signature(ours).parameters) == list(inspect.signature(theirs).parameters), name
    for name in CALLED:
        assert callable(getattr(BaseConnection, name, None)), f"netmiko has no BaseConnection.{name}"


def test_netmiko_still_prepares_the_session_where_the_adapter_hooks_in() -> None:
    """The speed-up lives in ``_try_session_preparation`` and ``clear_buffer``: netmiko must still call
    them while it opens a connection, or the overrides are dead code and the sleeps are back."""
    assert "self._try_session_preparation(" in inspect.getsource(BaseConnection._open)
    assert "self._open()" in inspect.getsource(BaseConnection.__init__)
    assert "self.clear_buffer()" in inspect.getsource(BaseConnection)


def test_the_chunk_clean_up_gives_what_netmiko_gives() -> None:
    """``read_channel`` normalises line feeds and strips ANSI codes on every chunk; the adapter skips the
    regex passes when a chunk cannot match them. Judged by netmiko's own implementations (base and NX-OS)
    on random chunks of the characters that matter."""
    rng = random.Random(11)
    pieces = ["show", " ", "\r", "\n", "\r\n", "\n\r", "\r\r\n", "\x1b[K", "\x1b[0m", "\x1bE", "\x1b[2L", "#"]
    for device_type in ("linux", "cisco_nxos", "arista_eos"):
        ours = adapter._fast_class(device_type).__new__(adapter._fast_class(device_type))
        ours.RESPONSE_RETURN = ours.RETURN = "\n"
        base = next(c for c in type(ours).__mro__ if c.__module__.startswith("netmiko."))
        assert base.__name__ == {"linux": "LinuxSSH", "cisco_nxos": "CiscoNxosSSH",
                                 "arista_eos": "AristaSSH"}[device_type]
        for _ in range(5000):
            chunk = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
            assert ours.normalize_linefeeds(chunk) == base.normalize_linefeeds(ours, chunk), repr(chunk)
            stripped = base.strip_ansi_escape_codes(ours, chunk)
            assert ours.strip_ansi_escape_codes(chunk) == stripped, repr(chunk)


def test_the_prompt_test_on_the_last_line_agrees_with_the_prompt_regex() -> None:
    """``fast_command`` decides a reply is complete by looking at its last line only; the prompt regex it
    replaced (still used to cut the prompt off) searched every line. Both on random texts of the characters
    that matter, with whitespace beyond ASCII (NEL, LINE SEPARATOR) among them."""
    rng = random.Random(12)
    pieces = ["leaf1", "leaf", "1", "@", "cumulus@leaf1:mgmt:~", " ", "\n", "\r", "\t", "\x0b", "\x85",
              "\u2028", "#", ">", "$", "x", "-"]
    for base in ("cumulus@leaf1", "leaf1", ""):
        conn = type("Conn", (), {"base_prompt": f" {base} "})()
        rx = adapter._prompt_rx(conn)
        for _ in range(20000):
            text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
            assert adapter.ends_at_prompt(text, base) == bool(rx.search(text)), (base, text)
