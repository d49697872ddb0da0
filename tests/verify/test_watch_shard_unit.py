"""docs/watch.md's shard template unit (issue 16 §2): one unprivileged, distinct port per shard, no
trailing comments, and systemd-analyze accepts an instance of it."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from .conftest import ROOT
from .test_watch_recipes import OPT_TOOL, VENV_BIN, _unit_lines, recipes

UNIT = "fabriccfg-watch@.service"


def test_shard_template_ports_are_unprivileged_and_distinct():
    text = recipes()[UNIT][1]
    lines = _unit_lines(text)
    exec_start = next(v for _s, k, v in lines if k == "ExecStart")
    assert "--shard %i/4" in exec_start
    ports = []
    for i in range(4):
        m = re.search(r"--serve 127\.0\.0\.1:(\S+)", exec_start.replace("%i", str(i)))
        assert m, exec_start
        ports.append(int(m.group(1)))
    assert len(set(ports)) == 4 and min(ports) >= 1024, ports
    for _section, _key, value in lines:
        assert " #" not in value, value


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze not installed (Debian package 'systemd')")
def test_shard_instance_passes_systemd_analyze(tmp_path):
    unit = tmp_path / "fabriccfg-watch@2.service"
    unit.write_text(recipes()[UNIT][1].replace(OPT_TOOL, str(VENV_BIN / "fabriccfg")))
    r = subprocess.run([shutil.which("systemd-analyze") or "", "verify", "--man=no", str(unit)],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0 and not r.stderr.strip(), r.stdout + r.stderr
