"""The shipped Prometheus alert rules: valid (promtool check rules), unit-tested (promtool test rules),
and one alert for every shipped check."""

from __future__ import annotations

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
    rules = yaml.safe_load((PROM / "fabriccfg-alerts.yml").read_text())["groups"][0]["rules"]
    alerted = {r["labels"]["fabriccfg_check"] for r in rules}
    assert {c.id for c in load_checks()} <= alerted
    for r in rules:
        assert r["annotations"]["summary"] and r["annotations"]["runbook"]


@needs_promtool
def test_promtool_check_rules():
    r = subprocess.run(
        [promtool, "check", "rules", "fabriccfg-alerts.yml"],
        cwd=PROM,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@needs_promtool
def test_promtool_test_rules():
    r = subprocess.run(
        [promtool, "test", "rules", "fabriccfg-alerts.test.yml"],
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
