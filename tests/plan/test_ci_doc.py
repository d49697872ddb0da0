"""docs/ci.md cannot rot: its GitHub workflow's ``run:`` steps and its GitLab job's ``script:`` lines run,
in order, in a fresh inventory repository with a pull-request change.

What is stubbed, and only that: the steps that are GitHub actions (``uses:``: checkout is the test's own
git setup, setup-python is this interpreter, the cache is a hit on this venv, upload-artifact is
skipped), the event's ``${{ }}`` values given to ``env:``, the runner's files (GITHUB_PATH,
GITHUB_STEP_SUMMARY, RUNNER_TEMP), and the commands that talk to the forge (``gh``, ``curl``), which
record their arguments. Everything else (git, bash, fabriccfg plan and its mock fabric) is real.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import pytest
import yaml

import fabriccfg

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "ci.md"
LAB = Path(fabriccfg.__file__).parent / "data" / "inventories" / "roce-lab.yaml"
EVENT = {"github.base_ref": "main", "github.token": "stub-token", "github.event.pull_request.number": "17"}
STUB = """#!/bin/sh
printf '%s\\n' "$(basename "$0") $*" >> "$STUB_LOG"
"""


def _block(marker: str) -> Any:
    text = DOC.read_text(encoding="utf-8")
    after = text.split(f"<!-- ci: {marker} ", 1)[1]
    body = after.split("```yaml\n", 1)[1].split("```", 1)[0]
    return yaml.safe_load(body)


def _fabriccfg() -> Path:
    exe = Path(sys.executable).parent / "fabriccfg"
    found = exe if exe.is_file() else Path(shutil.which("fabriccfg") or "")
    if not found.is_file():
        pytest.fail("the fabriccfg console script is not installed next to this interpreter "
                    "(pip install -e .)")
    return found


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bare ``origin`` with ``main``, and a checkout on a branch that raises an ECN threshold."""
    for k, v in (("GIT_AUTHOR_NAME", "ci"), ("GIT_AUTHOR_EMAIL", "ci@example.invalid"),
                 ("GIT_COMMITTER_NAME", "ci"), ("GIT_COMMITTER_EMAIL", "ci@example.invalid")):
        monkeypatch.setenv(k, v)
    origin = tmp_path / "origin.git"
    _git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    work = tmp_path / "work"
    _git(tmp_path, "init", "-q", "-b", "main", str(work))
    (work / "inventory").mkdir()
    (work / "inventory" / "fabric.yaml").write_text(LAB.read_text(encoding="utf-8"), encoding="utf-8")
    pin = f"fabriccfg=={fabriccfg.__version__}\n"
    (work / "requirements-fabriccfg.txt").write_text(pin, encoding="utf-8")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "today's fabric")
    _git(work, "remote", "add", "origin", str(origin))
    _git(work, "push", "-q", "origin", "main")
    _git(work, "checkout", "-q", "-b", "raise-kmin")
    inv = work / "inventory" / "fabric.yaml"
    inv.write_text(inv.read_text(encoding="utf-8").replace("kmin_bytes: 150000", "kmin_bytes: 200000"),
                   encoding="utf-8")
    _git(work, "commit", "-q", "-am", "raise ECN Kmin")
    # the venv cache hit: .venv/bin/fabriccfg is this test's installed fabriccfg
    (work / ".venv" / "bin").mkdir(parents=True)
    (work / ".venv" / "bin" / "fabriccfg").symlink_to(_fabriccfg())
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in ("gh", "curl"):
        (stubs / name).write_text(STUB, encoding="utf-8")
        (stubs / name).chmod(0o755)
    return work


def _base_env(work: Path) -> dict[str, str]:
    tmp = work.parent
    env = {k: v for k, v in os.environ.items() if k.startswith(("GIT_", "HOME", "LANG", "LC_", "TMPDIR"))}
    env.update(PATH=f"{tmp / 'stubs'}:/usr/local/bin:/usr/bin:/bin", STUB_LOG=str(tmp / "stub.log"))
    return env


def _event_value(value: object) -> str:
    text = str(value)
    return re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: EVENT[m.group(1)], text)


def test_github_workflow_steps_run_in_order(checkout: Path) -> None:
    work = checkout
    steps = _block("github")["jobs"]["plan"]["steps"]
    assert [s["uses"].split("@")[0] for s in steps if "uses" in s] == [
        "actions/checkout", "actions/setup-python", "actions/cache", "actions/upload-artifact"]
    runner_temp = work.parent / "runner-temp"
    runner_temp.mkdir()
    names = ("GITHUB_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT")
    files = {n: work.parent / f"{n.lower()}.txt" for n in names}
    for f in files.values():
        f.write_text("", encoding="utf-8")
    ran = []
    for step in steps:
        if "run" not in step:
            continue
        env = _base_env(work)
        env.update({k: str(v) for k, v in files.items()})
        env.update(RUNNER_TEMP=str(runner_temp), GITHUB_BASE_REF="main")
        added = [ln for ln in files["GITHUB_PATH"].read_text(encoding="utf-8").splitlines() if ln]
        env["PATH"] = ":".join([*reversed(added), env["PATH"]])
        env.update({k: _event_value(v) for k, v in (step.get("env") or {}).items()})
        script = work.parent / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=work,
                              env=env, capture_output=True, text=True, timeout=180, check=False)
        assert proc.returncode == 0, f"step {step.get('name')!r} failed:\n{proc.stdout}\n{proc.stderr}"
        ran.append(step.get("name"))
    assert ran == ["Install fabriccfg (skipped on a cache hit)", "The inventory on the base branch",
                   "fabriccfg plan", "Comment on the pull request"]
    assert "kmin_bytes: 150000" in (runner_temp / "base.yaml").read_text(encoding="utf-8")
    md = (work / "plan.md").read_text(encoding="utf-8")
    assert md.startswith("## fabriccfg plan: roce-lab") and "(exit 2)" in md
    assert "min-threshold 200000" in md
    assert files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8").strip() == md.strip()
    suite = ET.parse(work / "plan-junit.xml").getroot()
    assert suite.get("failures") == "0" and int(suite.get("tests") or 0) > 10
    log = (work.parent / "stub.log").read_text(encoding="utf-8")
    assert log.splitlines() == ["gh pr comment 17 --body-file plan.md --edit-last"]


def test_gitlab_job_script_runs_in_order(checkout: Path) -> None:
    work = checkout
    job = _block("gitlab")["fabriccfg-plan"]
    assert job["artifacts"]["reports"]["junit"] == "plan-junit.xml"
    assert job["cache"]["paths"] == [".venv/"]
    env = _base_env(work)
    env.update(CI_MERGE_REQUEST_TARGET_BRANCH_NAME="main", CI_API_V4_URL="https://gitlab.example.invalid/api/v4",
               CI_PROJECT_ID="42", CI_MERGE_REQUEST_IID="17", PLAN_NOTE_TOKEN="stub-token")
    script = work.parent / "job.sh"
    script.write_text("\n".join(job["script"]) + "\n", encoding="utf-8")
    proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], cwd=work,
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    assert "## fabriccfg plan: roce-lab" in proc.stdout and "(exit 2)" in proc.stdout
    assert ET.parse(work / "plan-junit.xml").getroot().get("failures") == "0"
    log = (work.parent / "stub.log").read_text(encoding="utf-8")
    assert "/projects/42/merge_requests/17/notes" in log and "body@plan.md" in log
