"""NVIDIA Quantum MQM8700: managed HDR switch running MLNX-OS (netmiko ``mellanox_mlnxos``)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


def ib_port_number(port: str) -> int | None:
    """'1/5' -> 5; a split '1/5/2' -> 10 (split-ready numbering: 2 x (N-1) + lane)."""
    parts = port.split("/")
    try:
        nums = [int(p) for p in parts]
    except ValueError:
        return None
    if len(nums) == 2:
        return nums[1]
    if len(nums) == 3:
        return 2 * (nums[1] - 1) + nums[2]
    return None


PLATFORM = PlatformInfo(
    name="mlnxos-ib",
    kind="switch",
    technologies=frozenset({"infiniband"}),
    device_type="mellanox_mlnxos",
    config_style="cli",
    port_name=lambda n: f"1/{n}",
    subport_name=lambda n, lane, lanes: f"1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x100G"}),
    fabric_port_number=ib_port_number,
)

# --- render (owned by fabriccfg.render) ---
_MLNX_KEYWORDS = {"ALL": "all", "ALL_CAS": "all"}
"""Partition keywords MLNX-OS understands (``member all``); ALL_SWITCHES, ALL_ROUTERS, SELF have no form."""


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Embedded SM on/off with priority, partitions with colon GUIDs, HDR100 splits."""
    from fabriccfg.inventory.models import IbIntent
    from fabriccfg.render.derive import PARTITION_KEYWORDS, facts, natural_key
    from fabriccfg.render.filters import colon_guid

    ib = fabric.ib or IbIntent()
    ibf = facts(fabric).ib
    parts = []
    for p in ibf.partitions:
        members: list[tuple[str, str]] = []
        skipped: list[str] = []
        for spec, membership in p.members:
            if spec in PARTITION_KEYWORDS:
                if spec in _MLNX_KEYWORDS:
                    members.append((_MLNX_KEYWORDS[spec], membership))
                else:
                    skipped.append(spec)
            else:
                members.append((colon_guid(spec), membership))
        parts.append({"name": p.name, "pkey": p.pkey, "ipoib": p.ipoib, "mtu": p.mtu,
                      "members": list(dict.fromkeys(members)), "skipped": skipped})
    switch: Switch = device  # type: ignore[assignment]
    splits = sorted((port for port, mode in switch.breakouts.items() if mode.lower() == "2x100g"),
                    key=natural_key)
    return {
        "device": device,
        "fabric_name": fabric.fabric.name,
        "runs_sm": device.name in ibf.sm_priority,
        "sm_priority": ibf.sm_priority.get(device.name, 0),
        "partitions": parts,
        "mtu": ib.mtu,
        "splits": splits,
    }


RENDER = RenderSpec(
    files={"config.txt": "mlnxos-ib/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="GENERIC",
        # MLNX-OS prints every command indented by three spaces under '##' banners: flat commands
        ignore=(r"^\s*##.*", r"^\s*#.*", r"^\s+"),
        idempotent=(
            (r"^ib smnode (\S+) sm-priority ",),
            (r"^ib partition (\S+) pkey ",),
            (r"^ib partition (\S+) mtu ",),
            (r"^ib partition (\S+) member (\S+) type ",),
            (r"^interface ib (\S+) module-type ",),
        ),
        absent_negations=(r"^no ib sm$",),
    ),
)

# --- push (owned by fabriccfg.push) ---
# MLNX-OS: a saved backup configuration to switch back to, then ``configuration write``.
from fabriccfg.push.transaction import CliTransaction, DiffLike  # noqa: E402


class MlnxosTransaction(CliTransaction):
    # MLNX-OS has no configuration session or commit: lines take effect one by one. The restore point is
    # a saved configuration file (``configuration write to NAME no-switch``, ``configuration switch-to``:
    # MLNX-OS User Manual, "Configuration Management"); the journal names it, so ``push --recover``
    # can switch back to it after a dead run left a partial config.
    error_pattern: ClassVar[str] = r"^% "
    kind: ClassVar[str] = "lines in config term (no atomic commit) + saved backup file"
    journal_fields: ClassVar[tuple[str, ...]] = ("active", "have_backup")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.backup_file = ctx.tag
        self.active: str | None = None
        self.have_backup = False

    def _enable(self, conn: Any) -> None:
        # enable first: netmiko's MLNX-OS check_config_mode waits for '#', which the '>' prompt never shows
        if not conn.check_enable_mode():
            conn.enable()
        if conn.check_config_mode():
            conn.exit_config_mode()

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        self._enable(conn)
        files = self.cmd(conn, "show configuration files")
        m = re.search(r"^\s*(\S+)\s*\(active\)", files, re.M)
        self.active = m.group(1) if m else None
        self.cmd(conn, f"configuration write to {self.backup_file} no-switch")
        self.have_backup = True

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self._enable(conn)
        conn.config_mode()
        self.config_lines(conn, diff.commands)
        conn.exit_config_mode()

    def confirm(self, conn: Any) -> None:
        self._enable(conn)
        self.cmd(conn, "configuration write")
        self._drop(conn)

    def rollback(self, conn: Any) -> None:
        self._enable(conn)
        self.cmd(conn, f"configuration switch-to {self.backup_file}")
        if self.active and self.active != self.backup_file:
            # make the original file active again; it now holds the restored (pre-push) config
            self.cmd(conn, f"configuration write to {self.active}")
        else:
            self.ctx.note(f"active configuration file unknown; {self.backup_file} stays active")
            self.have_backup = False

    def _drop(self, conn: Any) -> None:
        if self.have_backup:
            self.cmd(conn, f"configuration delete {self.backup_file}", check=False)
            self.have_backup = False

    def cleanup(self, conn: Any) -> None:
        self._enable(conn)
        self._drop(conn)


TRANSACTION = MlnxosTransaction

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.MLNX_IF_VPI))
