"""The shipped Prometheus alert rules: valid (promtool check rules), unit-tested (promtool test rules),
and one alert for every shipped check."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from fabriccfg.verify.engine import load_checks

from .conftest import ROOT

PROM = ROOT / "checks" / "prometheus"
promtool = shutil.which("promtool")
needs_promtool = pytest.mark.skipif(
    promtool is None, reason="promtool not installed (Debian package 'prometheus')"
)


def test_every_shipped_check_has_an_alert():
    rules = _rules()
    alerted = {r["labels"]["fabriccfg_check"] for r in rules}
    assert {c.id for c in load_checks()} <= alerted
    for r in rules:
        assert r["annotations"]["summary"] and r["annotations"]["runbook"]


@needs_promtool
def test_promtool_check_rules_by_glob():
    """What an operator types: every *.yml of the folder is a rule file (the unit tests live apart)."""
    files = sorted(str(p.relative_to(PROM)) for p in PROM.glob("*.yml"))
    assert files == ["fabriccfg-alerts.yml"]
    r = subprocess.run([promtool, "check", "rules", *files], cwd=PROM, capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def _rules():
    return yaml.safe_load((PROM / "fabriccfg-alerts.yml").read_text())["groups"][0]["rules"]


def test_alert_names_follow_one_scheme():
    for r in _rules():
        check = r["labels"]["fabriccfg_check"]
        pascal = "".join(w.capitalize() for w in check.split("-"))
        assert re.fullmatch(rf"Fabriccfg{pascal}[A-Za-z]*", r["alert"]), (r["alert"], check)
    assert len({r["alert"] for r in _rules()}) == len(_rules())


def test_every_alert_has_a_runbook_url_to_a_docs_anchor():
    page = (ROOT / "docs" / "runbooks.md").read_text()
    anchors = set(re.findall(r"^## (\S+)$", page, flags=re.M))
    for r in _rules():
        url = r["annotations"]["runbook_url"]
        base, _, anchor = url.partition("#")
        assert base == "https://fabriccfg.example/docs/runbooks.md" and anchor in anchors, url
        assert r["annotations"]["runbook"] in page  # the page says what the notification says


def test_staleness_uses_absent():
    exprs = {r["alert"]: r["expr"] for r in _rules()}
    assert exprs["FabriccfgWatchAbsent"].startswith("absent(")


@needs_promtool
def test_promtool_test_rules():
    r = subprocess.run(
        [promtool, "test", "rules", "tests/fabriccfg-alerts.promtest.yml"],
        cwd=PROM,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout + r.stderr


def test_every_shipped_check_is_documented():
    doc = (ROOT / "docs" / "verify.md").read_text()
    for c in load_checks():
        assert f"| {c.id} |" in doc, c.id
