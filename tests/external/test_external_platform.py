"""A platform added from outside fabriccfg (issue 13): a throwaway distribution, installed by pip, used
end to end with zero edits to ``fabriccfg/``. It follows docs/architecture.md, "How to add a platform".

The distribution (``fc-dell-sonic``, platform ``dell-sonic``) is Dell Enterprise SONiC as far as this
test needs: SONiC's CONFIG_DB templates, transaction, telemetry and mock reused, with its own port
naming (``Eth1/<n>``, the standard interface-naming mode) and its own hardware. It is written to a
temporary folder with its own pyproject.toml and entry point, and installed the way an editable install
lays it out: its folder on the path and a ``.dist-info`` (METADATA + entry_points.txt, written from its
pyproject.toml) beside it, which is all ``importlib.metadata`` reads to find the entry point. (The test
venv has no ``wheel``, so pip cannot build it offline.) It stays out of the shared venv, so no other test
sees a fifth SONiC: a child interpreter, whose ``PYTHONPATH`` holds that folder, drives it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

import fabriccfg

pytestmark = pytest.mark.timeout(240)

INVENTORY = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"

FILES = {
    "pyproject.toml": """
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "fc-dell-sonic"
        version = "0.0.1"
        dependencies = ["fabriccfg"]

        [project.entry-points."fabriccfg.platforms"]
        dell-sonic = "fc_dell_sonic"

        [tool.setuptools]
        packages = ["fc_dell_sonic"]
    """,
    "fc_dell_sonic/__init__.py": '''
        """Dell Enterprise SONiC: CONFIG_DB JSON over bash, standard interface naming (Eth1/<n>)."""
        from fabriccfg.catalog import PlatformInfo

        PLATFORM = PlatformInfo(
            name="dell-sonic",
            kind="switch",
            technologies=frozenset({"roce"}),
            device_type="linux",
            config_style="json",
            port_name=lambda n: f"Eth1/{n}",
            subport_name=lambda n, lane, lanes: f"Eth1/{n}/{lane + 1}",
            allowed_breakouts=frozenset({"2x200G", "4x100G"}),
        )
    ''',
    "fc_dell_sonic/render.py": '''
        """SONiC's CONFIG_DB templates and context; the port names come from PLATFORM."""
        import dataclasses

        from fabriccfg.platforms.sonic.render import RENDER as SONIC_RENDER

        RENDER = dataclasses.replace(SONIC_RENDER, templates=None)  # sonic/ templates, shipped by sonic
    ''',
    "fc_dell_sonic/transaction.py": '''
        """SONiC's checkpoint / apply-patch / rollback, as Dell Enterprise SONiC keeps them."""
        from fabriccfg.platforms.sonic.transaction import SonicTransaction


        class DellSonicTransaction(SonicTransaction):
            kind = "dell-sonic config checkpoint + apply-patch"


        TRANSACTION = DellSonicTransaction
    ''',
    "fc_dell_sonic/telemetry.py": '''
        from fabriccfg.platforms.sonic.telemetry import TELEMETRY as TELEMETRY
    ''',
    "fc_dell_sonic/mock.py": '''
        """The mock: SONiC's shell, show commands and SNMP agent."""
        from fabriccfg.platforms.sonic.mock import PROFILE as PROFILE
        from fabriccfg.platforms.sonic.mock import SHOW_COMMANDS as SHOW_COMMANDS
        from fabriccfg.platforms.sonic.mock import SNMP_AGENT as SNMP_AGENT
    ''',
}

DRIVER = '''
import json, sys
from pathlib import Path

from fabriccfg import catalog, registry
from fabriccfg.inventory.load import load
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.push import api
from fabriccfg.push.runner import RunnerOptions
from fabriccfg.render.engine import render_device
from fabriccfg.targets import load_endpoints
from fabriccfg.verify import runner
from fabriccfg.verify.engine import load_checks

inventory, work = sys.argv[1], Path(sys.argv[2])
out = {"platforms": catalog.names(), "package": catalog.packages()["dell-sonic"],
       "transaction": registry.transaction("dell-sonic").__name__}
result = load(inventory)
out["findings"] = [f.format() for f in result.findings if f.severity == "error"]
fabric = result.fabric
out["files"] = render_device(fabric, "leaf-r1").files


def push(**kw):
    jobs = api.plan_jobs(fabric, mock.endpoints, ["leaf-r1"])
    rep = api.push(fabric, jobs, run_base=work / "runs", runner=RunnerOptions(workers=1, timeout=30.0),
                   confirm_timeout=60.0, **kw)
    d = rep.devices[0]
    return {"state": d.state, "reason": d.reason, "rollback_verified": d.rollback_verified}


with MockFabric(fabric, workdir=work / "mock") as mock:
    out["vetoed"] = push(post_push_checks=[lambda ctx: ["dell-sonic test veto"]])
    out["applied"] = push()
    out["again"] = push()
    checks = [c for c in load_checks() if c.id in ("link-state-speed", "eth-cabling", "pfc-pause-storm")]
    report = runner.verify(fabric, load_endpoints(mock.endpoints_file), checks, runner.default_collector(),
                           samples=2, interval=1.0)
    ran = sorted(r.check for r in report.results if r.state == "ok")
    out["verify"] = {"status": report.status, "ran": ran,
                     "findings": [f.to_dict() for f in report.findings]}
print(json.dumps(out, default=str))
'''


def _dell_inventory() -> str:
    """roce-lab with leaf-r1 a Dell Z9432F-ON on dell-sonic: SONiC's ``Ethernet<8(n-1)>`` -> ``Eth1/<n>``."""
    text = INVENTORY.read_text(encoding="utf-8")
    text = text.replace(
        "{name: leaf-r1, profile: leaf, platform: sonic, model: SN5600, asic: spectrum-4,",
        "{name: leaf-r1, profile: leaf, platform: dell-sonic, model: Z9432F-ON, asic: tomahawk-4,")
    assert "platform: dell-sonic" in text
    return re.sub(r"leaf-r1:Ethernet(\d+)", lambda m: f"leaf-r1:Eth1/{int(m.group(1)) // 8 + 1}", text)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    src = tmp_path_factory.mktemp("fc-dell-sonic")
    for rel, body in FILES.items():
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        (src / rel).write_text(textwrap.dedent(body).lstrip(), encoding="utf-8")
    project = tomllib.loads((src / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    info = src / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\n"
                                   f"Version: {project['version']}\n", encoding="utf-8")
    groups = project["entry-points"]
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) for group, eps in groups.items()),
        encoding="utf-8")
    return src


def test_a_platform_from_outside_renders_mocks_pushes_rolls_back_and_verifies(site: Path,
                                                                               tmp_path: Path) -> None:
    inventory = tmp_path / "dell-lab.yaml"
    inventory.write_text(_dell_inventory(), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(inventory), str(tmp_path / "work")],
                          capture_output=True, text=True, timeout=200, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])

    # registered through the entry point, found by the catalogue and the registry
    assert "dell-sonic" in out["platforms"] and out["package"] == "fc_dell_sonic"
    assert out["transaction"] == "DellSonicTransaction"
    assert out["findings"] == []
    # rendered with SONiC's template and the distribution's own port names
    db = json.loads(out["files"]["config_db.json"])
    assert {"Eth1/1", "Eth1/8", "Eth1/29", "Eth1/30"} <= set(db["PORT"]), sorted(db["PORT"])
    assert "Eth1/1|3" in db["BUFFER_PG"]
    assert "Ethernet" not in json.dumps(db)
    # pushed to its mock: a vetoed change rolls back (rollback checked), then applies, then is unchanged
    assert out["vetoed"]["state"] == "rolled-back", out["vetoed"]
    assert "dell-sonic test veto" in out["vetoed"]["reason"]
    assert out["vetoed"]["rollback_verified"] is True
    assert out["applied"]["state"] == "applied", out["applied"]
    assert out["again"]["state"] == "unchanged", out["again"]
    # verified over the mock's SSH and SNMP
    assert out["verify"]["findings"] == [], out["verify"]
    assert {"link-state-speed", "eth-cabling"} <= set(out["verify"]["ran"]), out["verify"]
