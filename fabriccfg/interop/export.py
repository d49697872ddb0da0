"""Write the inventory for Nornir (SimpleInventory) and Ansible (YAML inventory).

Teams keep their playbooks and runbooks on the same source of truth: hosts are the managed
devices (those with a CLI and a management address), grouped by role (``role_leaf``) and rail
(``rail_0``; a GPU host is in the group of every rail its NICs serve). Secrets are never written:
credentials appear as the inventory's references (Nornir ``data.password_ref``) or as Ansible
lookups that read the same environment variable or file when a play runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import yaml

from fabriccfg import catalog
from fabriccfg.inventory.models import Fabric, Host, ManagementHost, Switch

Device = Switch | Host | ManagementHost


@dataclass(frozen=True)
class Managed:
    device: Device
    device_type: str
    role: str
    rails: tuple[int, ...]


def managed(fabric: Fabric) -> tuple[list[Managed], list[str]]:
    """Devices Nornir/Ansible can reach, and the names left out (no CLI or no address)."""
    out: list[Managed] = []
    left: list[str] = []
    every: list[Device] = [*fabric.switches, *fabric.hosts, *fabric.management_hosts]
    for dev in every:
        device_type = catalog.info(dev.platform).device_type
        if device_type is None or dev.mgmt is None:
            left.append(dev.name)
            continue
        if isinstance(dev, Switch):
            rails: tuple[int, ...] = () if dev.rail is None else (dev.rail,)
        elif isinstance(dev, Host):
            rails = tuple(sorted({n.rail for n in dev.nics}))
        else:
            rails = ()
        out.append(Managed(dev, device_type, dev.role, rails))
    return out, left


def _groups(m: Managed) -> list[str]:
    return [f"role_{m.role}", *(f"rail_{r}" for r in m.rails)]


_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
"""libyaml's emitter when PyYAML has it: five times faster on a 16k-GPU fabric."""


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_DUMPER, sort_keys=False, default_flow_style=False, width=200)


def _header(fabric: Fabric, left: list[str], tool: str) -> str:
    lines = [
        f"# {tool} inventory of fabric {fabric.fabric.name!r}, written by `fabriccfg export`; edit the",
        "# fabriccfg inventory and export again rather than editing this file.",
    ]
    if left:
        lines.append(f"# Left out (no CLI or no management address): {', '.join(left)}")
    return "\n".join(lines) + "\n"


def nornir(fabric: Fabric) -> dict[str, str]:
    """``hosts.yaml``, ``groups.yaml`` and ``defaults.yaml`` for Nornir's SimpleInventory."""
    devices, left = managed(fabric)
    hosts: dict[str, Any] = {}
    group_names: set[str] = set()
    for m in devices:
        groups = _groups(m)
        group_names.update(groups)
        hosts[m.device.name] = {
            "hostname": str(m.device.mgmt),
            "platform": m.device_type,
            "groups": groups,
            "data": {
                "fabriccfg_platform": m.device.platform,
                "role": m.role,
                "kind": m.device.kind,
                "rails": list(m.rails),
            },
        }
    groups_doc = {g: {"data": _group_data(g)} for g in sorted(group_names, key=_group_key)}
    ssh = fabric.credentials.ssh
    defaults: dict[str, Any] = {"username": ssh.username, "data": {"fabric": fabric.fabric.name}}
    secret_lines = []
    for key, ref in (
        ("password", ssh.password),
        ("key_file", ssh.key_file),
        ("enable_secret", ssh.enable_secret),
    ):
        if ref:
            defaults["data"][f"{key}_ref"] = ref
            secret_lines.append(f"#   {key}: {ref}")
    secrets_note = (
        "# Secrets are not written here. The fabriccfg inventory references them as:\n"
        + "\n".join(secret_lines or ["#   (no SSH secret reference in the inventory)"])
        + "\n# Resolve them when Nornir starts, e.g. for env:NAME: "
        "nr.inventory.defaults.password = os.environ['NAME'].\n"
    )
    header = _header(fabric, left, "Nornir SimpleInventory")
    return {
        "hosts.yaml": header + _dump(hosts),
        "groups.yaml": header + _dump(groups_doc),
        "defaults.yaml": header + secrets_note + _dump(defaults),
    }


def _group_key(name: str) -> tuple[str, int, str]:
    kind, _, rest = name.partition("_")
    return (kind, int(rest) if rest.isdigit() else -1, rest)


def _group_data(name: str) -> dict[str, Any]:
    kind, _, rest = name.partition("_")
    return {"rail": int(rest)} if kind == "rail" else {"role": rest}


def ansible_table() -> dict[str, dict[str, Any]]:
    """Per-platform Ansible connection facts with their sources (``data/interop/ansible.yaml``)."""
    text = files("fabriccfg").joinpath("data/interop/ansible.yaml").read_text(encoding="utf-8")
    table: dict[str, dict[str, Any]] = yaml.safe_load(text)
    return table


def _lookup(ref: str) -> str:
    """An Ansible lookup that reads the secret a reference points to when the play runs."""
    kind, _, where = ref.partition(":")
    plugin = "ansible.builtin.env" if kind == "env" else "ansible.builtin.file"
    return "{{ lookup('" + plugin + "', '" + where.replace("'", "\\'") + "') }}"


def ansible(fabric: Fabric) -> dict[str, str]:
    """``inventory.yaml``: an Ansible YAML inventory grouped by role, rail and platform."""
    devices, left = managed(fabric)
    table = ansible_table()
    ssh = fabric.credentials.ssh
    all_vars: dict[str, Any] = {"ansible_user": ssh.username}
    if ssh.password:
        all_vars["ansible_password"] = _lookup(ssh.password)
    if ssh.key_file and ssh.key_file.startswith("file:"):
        all_vars["ansible_ssh_private_key_file"] = ssh.key_file.partition(":")[2]
    if ssh.enable_secret:
        all_vars["ansible_become_password"] = _lookup(ssh.enable_secret)
    children: dict[str, Any] = {}
    notes: list[str] = []
    for plat in sorted({m.device.platform for m in devices}):
        row = table.get(plat, {})
        group: dict[str, Any] = {}
        if row.get("vars"):
            group["vars"] = dict(row["vars"])
        if "ansible_network_os" not in row.get("vars", {}):
            notes.append(
                f"# platform_{_ident(plat)}: no ansible_network_os: "
                f"{' '.join(str(row.get('why', 'no Ansible facts known for this platform')).split())}"
            )
        group["hosts"] = {
            m.device.name: {
                "ansible_host": str(m.device.mgmt),
                "fabriccfg_platform": plat,
                "fabriccfg_role": m.role,
            }
            for m in devices
            if m.device.platform == plat
        }
        children[f"platform_{_ident(plat)}"] = group
    memberships: dict[str, list[str]] = {}
    for m in devices:
        for g in _groups(m):
            memberships.setdefault(g, []).append(m.device.name)
    for g in sorted(memberships, key=_group_key):
        children[g] = {"hosts": {name: None for name in memberships[g]}}
    doc = {"all": {"vars": all_vars, "children": children}}
    header = _header(fabric, left, "Ansible YAML")
    secrets = (
        "# Secrets are not written here: ansible_password and friends are lookups of the references in\n"
        "# the fabriccfg inventory, evaluated when a play runs.\n"
    )
    return {"inventory.yaml": header + secrets + "".join(n + "\n" for n in notes) + _dump(doc)}


def _ident(name: str) -> str:
    """Ansible group names are identifiers (letters, digits, underscores)."""
    return "".join(c if c.isalnum() else "_" for c in name)
