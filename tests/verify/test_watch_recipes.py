"""docs/watch.md's recipes, run as written: the cron script against the mock fabric, the systemd units
through systemd-analyze, the env file as systemd reads it. Blocks are found by their
``<!-- recipe: NAME -->`` marker, so editing the doc edits what is tested."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fabriccfg.mock.fabric import MockFabric

from .conftest import ROOT

DOC = ROOT / "docs" / "watch.md"
VENV_BIN = Path(sys.executable).parent
OPT_TOOL = "/opt/fabriccfg/.venv/bin/fabriccfg"
_RECIPE = re.compile(r"<!-- recipe: (\S+) -->\n```(\w+)\n(.*?)\n```", re.S)
promtool = shutil.which("promtool")
systemd_analyze = shutil.which("systemd-analyze")

pytestmark = pytest.mark.timeout(180)


def recipes() -> dict[str, tuple[str, str]]:
    return {name: (lang, body + "\n") for name, lang, body in _RECIPE.findall(DOC.read_text())}


def test_recipes_are_marked():
    assert {"secrets.env", "fabriccfg-watch.service", "fabriccfg-verify.service", "fabriccfg-verify.timer",
            "fabriccfg-verify-textfile", "cron.d"} <= set(recipes())


def _env_file_lines(text: str) -> dict[str, str]:
    """A systemd EnvironmentFile as systemd reads it: NAME=value, whole-line comments only."""
    out = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, sep, value = line.partition("=")
        assert sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name), f"secrets.env:{n}: {line!r}"
        assert not name.startswith("export"), f"secrets.env:{n}: systemd has no 'export'"
        out[name] = value
    return out


def test_env_file_is_systemd_syntax():
    env = _env_file_lines(recipes()["secrets.env"][1])
    assert {"FABRIC_SSH_PASSWORD", "FABRIC_SNMP_AUTH", "FABRIC_SNMP_PRIV"} <= set(env)


def _unit_lines(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of a unit file; continuation lines joined as systemd joins them."""
    out: list[tuple[str, str, str]] = []
    section = ""
    for line in text.replace("\\\n", " ").splitlines():
        if not line.strip() or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, sep, value = line.partition("=")
        assert sep, f"not Key=value: {line!r}"
        out.append((section, key.strip(), value.strip()))
    return out


@pytest.mark.parametrize("unit", ["fabriccfg-watch.service", "fabriccfg-verify.service",
                                  "fabriccfg-verify.timer"])
def test_systemd_units_parse_without_trailing_comments(unit):
    lines = _unit_lines(recipes()[unit][1])
    for section, key, value in lines:
        # systemd has no trailing comments: '#' after a value becomes part of it (a path that does not exist)
        assert " #" not in value and "\t#" not in value, f"{unit} [{section}] {key}= has a trailing comment"
        if key == "EnvironmentFile":
            assert Path(value.lstrip("-")).is_absolute() and " " not in value, value
    keys = {(s, k) for s, k, _ in lines}
    if unit.endswith(".service"):
        exec_start = next(v for s, k, v in lines if k == "ExecStart")
        assert exec_start.startswith(OPT_TOOL + " watch ")
        assert ("Service", "EnvironmentFile") in keys
    else:
        assert ("Timer", "OnCalendar") in keys


@pytest.mark.skipif(systemd_analyze is None,
                    reason="systemd-analyze not installed (Debian package 'systemd')")
def test_systemd_analyze_verify(tmp_path):
    rec = recipes()
    for unit in ("fabriccfg-watch.service", "fabriccfg-verify.service", "fabriccfg-verify.timer"):
        # the venv's fabriccfg stands in for /opt/fabriccfg/.venv/bin/fabriccfg (verify checks it exists)
        (tmp_path / unit).write_text(rec[unit][1].replace(OPT_TOOL, str(VENV_BIN / "fabriccfg")))
    units = [str(tmp_path / u) for u in ("fabriccfg-watch.service", "fabriccfg-verify.service",
                                         "fabriccfg-verify.timer")]
    r = subprocess.run([systemd_analyze, "verify", "--man=no", *units], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and not r.stderr.strip(), r.stdout + r.stderr
    r = subprocess.run([systemd_analyze, "calendar", "*:*:00"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def _cron_path(crontab: str) -> str:
    lines = [ln for ln in crontab.splitlines() if ln.strip() and not ln.startswith("#")]
    env = dict(ln.split("=", 1) for ln in lines if re.match(r"^[A-Z_]+=", ln))
    jobs = [ln.split(None, 6) for ln in lines if not re.match(r"^[A-Z_]+=", ln)]
    assert len(jobs) == 1 and len(jobs[0]) == 7, jobs  # /etc/cron.d: 5 time fields, user, command
    assert jobs[0][5] == "fabriccfg" and jobs[0][6] == "/usr/local/bin/fabriccfg-verify-textfile", jobs
    return env["PATH"]


def _status(prom: Path) -> int:
    m = re.search(r"^fabriccfg_verify_status (\d)$", prom.read_text(), re.M)
    assert m, prom.read_text()[:500]
    return int(m.group(1))


def test_cron_script_as_written_publishes_every_status(roce, tmp_path):
    """The issue's case: with `cmd && mv` a CRITICAL (or UNKNOWN) round left the old textfile."""
    rec = recipes()
    script = rec["fabriccfg-verify-textfile"][1]
    assert "set -a" in script  # else the env file's FABRICCFG_ENDPOINTS would not reach the tool
    etc, state, textdir = tmp_path / "etc", tmp_path / "state", tmp_path / "textfile"
    for d in (etc, state, textdir):
        d.mkdir()
    shutil.copy(ROOT / "inventories" / "roce-lab.yaml", etc / "fabric.yaml")
    (tmp_path / "fabriccfg-verify-textfile").write_text(script)
    prom = textdir / "fabriccfg.prom"
    cron_path = _cron_path(rec["cron.d"][1]).replace("/opt/fabriccfg/.venv/bin", str(VENV_BIN))
    env = {"PATH": cron_path, "HOME": str(tmp_path), "LANG": "C.UTF-8", "FABRICCFG_ETC": str(etc),
           "FABRICCFG_STATE": str(state), "FABRICCFG_TEXTFILE": str(prom)}
    if "SYSTEMROOT" in os.environ:  # pragma: no cover (not on Linux)
        env["SYSTEMROOT"] = os.environ["SYSTEMROOT"]
    sh = shutil.which("sh") or "/bin/sh"
    run_script = [sh, str(tmp_path / "fabriccfg-verify-textfile")]
    with MockFabric(roce, scenarios=["lossless-drop:leaf-r2:Ethernet3/1"], workdir=tmp_path / "mock") as mock:
        redirect = f"FABRICCFG_ENDPOINTS={mock.endpoints_file}\n"  # reach the mock, not 192.0.2.x
        (etc / "secrets.env").write_text(rec["secrets.env"][1] + redirect)
        prom.write_text("fabriccfg_verify_status 0\n")  # a stale OK from an earlier run
        old = prom.stat().st_mtime_ns
        first = subprocess.run(run_script, env=env, capture_output=True, text=True, timeout=120)
        assert first.returncode == 3, first.stderr  # empty store: no baseline yet
        assert prom.stat().st_mtime_ns > old and _status(prom) == 3
        mid = prom.stat().st_mtime_ns
        second = subprocess.run(run_script, env=env, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2, second.stderr  # CRITICAL: lossless drops on leaf-r2
    assert prom.stat().st_mtime_ns > mid and _status(prom) == 2
    text = prom.read_text()
    assert 'check="lossless-queue-drops"' in text and 'device="leaf-r2"' in text
    assert sorted(p.name for p in textdir.iterdir()) == ["fabriccfg.prom"]  # no temporary file left
    if promtool is None:
        pytest.skip("promtool not installed (Debian package 'prometheus'): textfile not linted")
    r = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
