"""Issue 10 §5: a command resolves only the secrets it uses (push/diff: SSH; verify: SSH and SNMP).

The inventory's devices are on 127.0.0.1 (loopback only): the live commands get as far as connecting,
which shows the secrets step passed; nothing leaves the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from fabriccfg.inventory.load import loads
from fabriccfg.secrets import SecretError
from fabriccfg.targets import from_inventory

INVENTORY = """\
fabric: {name: t, technology: roce, link_speed: 400G}
credentials:
  ssh: {username: admin, password: "env:T_SSH_PASSWORD"}
  snmp: {version: "3", user: mon, auth_key: "env:T_SNMP_AUTH", priv_key: "env:T_SNMP_PRIV"}
  known_hosts: KNOWN
switches:
  - {name: leaf1, platform: eos, model: 7060X5-64, role: leaf, ports: 32, asic: tomahawk-4, mgmt: 127.0.0.1}
"""
EXE = str(Path(sys.executable).with_name("fabriccfg"))


@pytest.fixture
def inventory(tmp_path: Path) -> Path:
    inv = tmp_path / "inv.yaml"
    inv.write_text(INVENTORY.replace("KNOWN", str(tmp_path / "known_hosts")))
    (tmp_path / "known_hosts").write_text("")
    return inv


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("T_S")}
    env.update(values)
    return env


def _run(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EXE, *args], capture_output=True, text=True, timeout=120, env=env, check=False)


def test_ssh_only_endpoints_skip_snmp_secrets(monkeypatch: pytest.MonkeyPatch, inventory: Path) -> None:
    fabric = loads(inventory.read_text(), str(inventory)).fabric
    assert fabric is not None
    monkeypatch.setenv("T_SSH_PASSWORD", "ssh-pass")
    monkeypatch.delenv("T_SNMP_AUTH", raising=False)
    eps = from_inventory(fabric, inventory.parent, access=("ssh",))
    assert eps["leaf1"].password == "ssh-pass" and eps["leaf1"].snmp is None
    with pytest.raises(SecretError, match="T_SNMP_AUTH"):
        from_inventory(fabric, inventory.parent)  # verify needs both, and still says which one is missing


def test_diff_and_push_run_with_snmp_secrets_unset(inventory: Path, tmp_path: Path) -> None:
    env = _env(T_SSH_PASSWORD="ssh-pass")
    res = _run("diff", str(inventory), "-d", "leaf1", "--timeout", "10", "--run-dir", str(tmp_path / "r"),
               env=env)
    assert res.returncode == 3, res.stdout + res.stderr  # reached the connect step: unreachable/refused
    assert "T_SNMP" not in res.stdout + res.stderr
    res = _run("push", str(inventory), "-d", "leaf1", "--dry-run", "--timeout", "10",
               "--run-dir", str(tmp_path / "r"), env=env)
    assert res.returncode == 1, res.stdout + res.stderr  # the device failed; not a usage error (2)
    assert "T_SNMP" not in res.stdout + res.stderr


def test_secrets_a_command_needs_are_still_required(inventory: Path, tmp_path: Path) -> None:
    res = _run("push", str(inventory), "-d", "leaf1", "--dry-run", "--run-dir", str(tmp_path / "r"),
               env=_env(T_SNMP_AUTH="auth-key", T_SNMP_PRIV="priv-key"))
    assert res.returncode == 2 and "T_SSH_PASSWORD" in res.stderr, res.stderr
    res = _run("verify", str(inventory), "--samples", "1", env=_env(T_SSH_PASSWORD="ssh-pass"))
    assert res.returncode == 3 and "T_SNMP_AUTH" in res.stdout + res.stderr, res.stdout + res.stderr
