"""mypy --strict of a user script against the installed package (issue 16 §5): every type resolves.

The script uses only the public API (docs/api.md). mypy runs from an empty folder with no MYPYPATH, so
``fabriccfg`` resolves the way a user's project sees it: through the installed (here editable, compat
mode) package and its ``py.typed``. ``--disallow-any-expr`` fails on any expression typed ``Any``, and
every ``reveal_type`` must name a concrete fabriccfg or builtin type.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

SCRIPT = '''"""A user's script: the public API only."""
from pathlib import Path

from fabriccfg import api

result = api.validate("inventories/roce-lab.yaml")
reveal_type(result)
reveal_type(result.findings)
fabric = api.load("inventories/roce-lab.yaml")
reveal_type(fabric)
rendered = api.render(fabric, roles=["leaf"])
reveal_type(rendered)
names: list[str] = [d.name for d in rendered]
files: dict[str, str] = rendered[0].files
changes = api.diff(fabric, against=Path("saved"))
reveal_type(changes)
reveal_type(changes.diffs)
code: int = changes.exit_code
with api.mock(fabric, Path("/tmp/x")) as lab:
    reveal_type(lab)
    report = api.push(fabric, endpoints=lab.endpoints, devices=["leaf-r0"])
    reveal_type(report)
    states: list[str] = [d.state for d in report.devices]
    health = api.verify(fabric, endpoints=lab.endpoints, only=["pfc-pause-storm"])
    reveal_type(health)
    status: str = health.status
    wheres: list[str] = [f.where for f in health.findings]
estimates = api.advise(api.Workload(params=70e9, tokens=1e12, gpus=1024))
reveal_type(estimates)
mfu: float = estimates[0].mfu
try:
    api.render(fabric, devices=["leafr0"])
except api.UsageError as exc:
    message: str = str(exc)
'''

REVEALED = 10


def test_user_script_type_checks_strictly_against_the_installed_package(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text(SCRIPT, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("MYPYPATH", "PYTHONPATH")}
    r = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--disallow-any-expr", "--no-incremental",
                        "--python-executable", sys.executable, "user.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    out = r.stdout + r.stderr
    assert "Cannot find implementation or library stub" not in out, (
        "mypy cannot see the installed fabriccfg: an import-hook editable install? reinstall with "
        "pip install -e . --config-settings editable_mode=compat (scripts/setup.sh does)\n" + out)
    revealed = re.findall(r'Revealed type is "([^"]+)"', out)
    assert len(revealed) == REVEALED, out
    for t in revealed:
        assert "Any" not in t and ("fabriccfg." in t), t
    assert r.returncode == 0 and "Success: no issues found in 1 source file" in out, out
