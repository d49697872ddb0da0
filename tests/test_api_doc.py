"""docs/api.md's notebook-style example, executed: every ``python`` block, in order, in one namespace,
from the repository root, against the embedded mock fabric. The blocks carry their own asserts, and
this module imports nothing of fabriccfg but what the example imports (the public API)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "api.md"

pytestmark = pytest.mark.timeout(180)


def blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", DOC.read_text(encoding="utf-8"), flags=re.S | re.M)


def test_api_doc_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    code = blocks()
    assert len(code) >= 7
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {"__name__": "api_doc"}
    out = io.StringIO()
    try:
        for i, block in enumerate(code, 1):
            with contextlib.redirect_stdout(out):
                exec(compile(block, f"docs/api.md block {i}", "exec"), namespace)
    finally:
        session = namespace.get("session")
        if isinstance(session, contextlib.ExitStack):
            session.close()  # a failed block must not leave the mock fabric running
    text = out.getvalue()
    assert "did you mean leaf-r0" in text and "critical" in text and "MFU" in text


def test_public_names_are_what_the_doc_lists() -> None:
    from fabriccfg import api as fabriccfg

    doc = DOC.read_text(encoding="utf-8")
    for name in ("validate", "load", "render", "diff", "push", "verify", "advise", "mock"):
        assert callable(getattr(fabriccfg, name)) and f"`{name}(" in doc
    for name in ("LoadResult", "Fabric", "RenderedDevice", "DiffResult", "DeviceDiff", "RunReport",
                 "DeviceResult", "Report", "CheckFinding", "CheckResult", "Estimate", "Workload",
                 "UsageError", "InventoryError", "Lab", "Finding"):
        assert isinstance(getattr(fabriccfg, name), type) and name in doc, name


def test_import_fabriccfg_is_light() -> None:
    import subprocess
    import sys

    probe = ("import sys, fabriccfg; heavy = [m for m in ('pydantic', 'jinja2', 'netmiko', 'pysnmp', "
             "'asyncssh', 'fabriccfg.api') if m in sys.modules]; print(heavy)")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    assert r.stdout.strip() == "[]", r.stdout
