"""Every rendered upstream-flavour opensm.conf is parsed by the real OpenSM without 'Unrecognized token'.

Needs Debian's ``opensm`` (``scripts/setup.sh --with-peers`` installs it in CI).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from render_helpers import fabric_from

from fabriccfg.render.engine import render_fabric

OPENSM = shutil.which("opensm") or shutil.which("opensm", path="/usr/sbin:/sbin")
pytestmark = pytest.mark.skipif(OPENSM is None, reason="opensm is not installed (Debian package 'opensm')")

UPSTREAM_VARIANTS = {
    "8790-upstream": fabric_from("ib-lab-mqm8790", ("opensm_flavour: mlnx", "opensm_flavour: upstream"),
                                 ("sharp: {enabled: true, am_host: sm1}", "sharp: {enabled: false}")),
    "8790-upstream-updn-qos": fabric_from(
        "ib-lab-mqm8790", ("opensm_flavour: mlnx", "opensm_flavour: upstream"),
        ("sharp: {enabled: true, am_host: sm1}", "sharp: {enabled: false}\n  qos: true"),
        ("routing_engines: [ftree]", "routing_engines: [updn, minhop]"),
        ("node_name_map: true", "node_name_map: false")),
}


def _confs() -> list[tuple[str, str]]:
    out = []
    for variant, fabric in UPSTREAM_VARIANTS.items():
        for dev in render_fabric(fabric):
            if "opensm.conf" in dev.files:
                out.append((f"{variant}/{dev.name}", dev.files["opensm.conf"]))
    return out


@pytest.mark.parametrize(("name", "text"), _confs(), ids=lambda v: v if "/" in str(v) else "")
def test_opensm_parses_rendered_conf(name: str, text: str, tmp_path: Path) -> None:
    assert OPENSM is not None
    conf = tmp_path / "opensm.conf"
    conf.write_text(text, encoding="utf-8")
    dump = tmp_path / "dump.conf"
    proc = subprocess.run([OPENSM, "-F", str(conf), "-c", str(dump)], capture_output=True, text=True,
                          timeout=60, check=False)
    output = proc.stdout + proc.stderr
    assert "Unrecognized token" not in output, output
    assert dump.exists(), output
    parsed = dict(line.split(" ", 1) for line in dump.read_text().splitlines()
                  if line and not line.startswith("#"))
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.split(" ", 1)
            got = parsed.get(key)
            assert got == value, f"{name}: OpenSM read {key} as {got!r}, not {value!r}"


def test_there_are_upstream_confs() -> None:
    assert len(_confs()) >= 4
