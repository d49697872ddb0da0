"""The commands' rich Console: no hard wraps in logs and pipes; COLUMNS and NO_COLOR respected."""

from __future__ import annotations

import io
import sys

import pytest

from fabriccfg.commands._console import LOG_WIDTH, console


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("COLUMNS", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(var, raising=False)


def test_not_a_terminal_never_wraps_a_line(monkeypatch: pytest.MonkeyPatch) -> None:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    con = console()
    assert con.width == LOG_WIDTH and con.soft_wrap
    path = "/tmp/" + "x" * 300 + "/report.json"
    con.print(f"2 applied in 0.3s; report: {path}", highlight=False)
    assert out.getvalue() == f"2 applied in 0.3s; report: {path}\n"


def test_columns_sets_the_width_and_stderr_is_supported(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setenv("COLUMNS", "100")
    con = console(stderr=True)
    assert con.width == 100 and con.soft_wrap
    con.print("x" * 250)
    assert err.getvalue() == "x" * 250 + "\n"
    assert console(stderr=True, min_width=120).width == 120


def test_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", Tty())
    assert not console().no_color
    monkeypatch.setenv("NO_COLOR", "1")
    assert console().no_color


def test_a_terminal_keeps_rich_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setenv("COLUMNS", "90")
    con = console()
    assert con.width == 90 and not con.soft_wrap
    assert console(min_width=120).width == 120
