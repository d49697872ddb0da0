"""The docs stay true: README lists every rule, and CI runs the README's test command."""

from __future__ import annotations

import re
from pathlib import Path

from fabriccfg.inventory.rules import RULES, _load_families

ROOT = Path(__file__).resolve().parent.parent


def test_readme_lists_every_rule() -> None:
    _load_families()
    readme = (ROOT / "README.md").read_text()
    listed = set(re.findall(r"^\| `([a-z0-9-]+)` \|", readme, flags=re.M))
    assert listed == set(RULES), f"README rule table is stale: {sorted(listed ^ set(RULES))}"


def test_ci_runs_the_readme_test_command() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "scripts/test.sh" in readme
    assert "scripts/test.sh" in (ROOT / ".ci" / "run").read_text()
