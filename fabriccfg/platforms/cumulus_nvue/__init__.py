"""NVIDIA Cumulus Linux 5.x configured with NVUE (netmiko ``cumulus_linux``)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


PLATFORM = PlatformInfo(
    name="cumulus-nvue",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cumulus_linux",
    config_style="cli",
    port_name=lambda n: f"swp{n}",
    subport_name=lambda n, lane, lanes: f"swp{n}s{lane}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)

# --- render (owned by fabriccfg.render) ---
CURRENT_RELEASE = (5, 16)
"""The Cumulus Linux release assumed when a switch has no ``os_release``: the newest the NVUE reference
(CumulusNetworks/docs ``content/nvue-reference``) documented when the templates were checked (2026-12-01)."""
WATCHDOG_SINCE = (5, 6)
"""NVUE reference, QoS: ``nv set interface <id> qos pfc-watchdog state`` and ``nv set qos pfc-watchdog
polling-interval|robustness`` were introduced in Cumulus Linux 5.6.0; earlier releases have no NVUE
watchdog."""
_RELEASE = re.compile(r"(\d+)\.(\d+)")


def cumulus_release(os_release: str | None) -> tuple[int, int] | None:
    """``'5.9.1'`` -> (5, 9); None when absent or not a ``MAJOR.MINOR[...]`` release string."""
    m = _RELEASE.match((os_release or "").strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def egress_scheduler(roce_tc: int, cnp_tc: int, lossy_tc: int, roce_bw: int,
                     cnp_strict: bool) -> list[tuple[int, str, int | None]]:
    """(tc, mode, bw-percent) for all eight classes with a DWRR total of exactly 100 %.

    NVUE reference, QoS ``egress-scheduler <profile> traffic-class <id> bw-percent``: 1..100 per class, and
    "the combined total of values you assign must be less than or equal to 100"; a class not set keeps the
    factory 12/13 %. So every class is set: CNP strict (or DWRR 1 %), each class nothing maps to DWRR 1 %,
    RoCE its intent (capped so every other DWRR class keeps its 1 %), the lossy class the remainder.
    """
    rows: dict[int, tuple[str, int | None]] = {}
    for tc in range(8):
        if tc not in (roce_tc, lossy_tc):
            rows[tc] = ("strict", None) if tc == cnp_tc and cnp_strict else ("dwrr", 1)
    others = sum(bw or 0 for _, bw in rows.values())
    roce = max(1, min(roce_bw, 100 - others - 1))
    rows[roce_tc] = ("dwrr", roce)
    rows[lossy_tc] = ("dwrr", 100 - others - roce)
    return [(tc, *rows[tc]) for tc in range(8)]


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """Granular NVUE knobs: one PFC profile per cable length, watchdog robustness from detection time,
    every class scheduled and mapped, syntax by Cumulus release."""
    from fabriccfg.platforms.base import parse_breakout
    from fabriccfg.render.derive import natural_key
    from fabriccfg.render.roce import roce_switch_context

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    wd = ctx["wd"]
    lengths = sorted({p.cable_m for p in ctx["ports"]})
    release = cumulus_release(switch.os_release)
    ctx["release"] = release or CURRENT_RELEASE
    ctx["release_text"] = (f"{release[0]}.{release[1]}" if release else
                           f"{CURRENT_RELEASE[0]}.{CURRENT_RELEASE[1]} (default: no os_release)")
    ctx["wd_rendered"] = ctx["wd_enabled"] and ctx["release"] >= WATCHDOG_SINCE
    ctx["pfc_profile"] = {length: f"roce-{length}m" for length in lengths}
    ctx["headroom"] = {p.cable_m: p.headroom_bytes for p in sorted(ctx["ports"], key=lambda p: p.speed_gbps)}
    ctx["wd_robustness"] = max(1, math.ceil(wd.detection_ms / wd.poll_ms))
    ctx["breakouts"] = [(port, parsed[0]) for port in sorted(switch.breakouts, key=natural_key)
                        if (parsed := parse_breakout(switch.breakouts[port]))]
    own = {ctx["roce_tc"]: ctx["roce_tc"], ctx["cnp_tc"]: ctx["cnp_tc"]}
    ctx["sp_to_tc"] = [(sp, own.get(sp, ctx["lossy_tc"])) for sp in range(8)]
    ctx["scheduler"] = egress_scheduler(ctx["roce_tc"], ctx["cnp_tc"], ctx["lossy_tc"], ctx["roce_bw"],
                                        ctx["cnp_strict"])
    return ctx


RENDER = RenderSpec(
    files={"config.txt": "cumulus-nvue/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="GENERIC",
        ignore=(r"^\s*#.*",),
        # NVUE paths are leaves: 'nv set <path> <value>' replaces the previous value at <path>
        idempotent=((r"^(nv set \S+ \S+ \S+ .*) \S+$",),),
    ),
)

# --- push (owned by fabriccfg.push) ---
# NVUE: stage ``nv set``, apply with ``--confirm T``, verify, ``nv config confirm``. The applied revision
# is the restore point. A pending revision someone else staged is never touched: the push refuses the
# device instead of applying their half-done work with ours.
from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError  # noqa: E402


class NvueTransaction(CliTransaction):
    # NVUE command reference, "Config Commands" (https://docs.nvidia.com/networking-ethernet-software/
    # nvue-reference/Config-Commands): ``nv set``/``nv unset``
    # stage a pending revision that the running config does not see; ``nv config apply`` makes it the
    # applied revision in one step; ``--confirm TIME`` rolls back unless ``nv config confirm``;
    # ``nv config detach`` drops the pending revision.
    commit_confirm: ClassVar[bool] = True
    error_pattern: ClassVar[str] = r"^Error:"
    running_command: ClassVar[str] = "nv config show -o commands"
    kind: ClassVar[str] = "pending revision + nv config apply --confirm"
    journal_fields: ClassVar[tuple[str, ...]] = ("staged", "apply_sent")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.backup_running: dict[str, str] = {}
        self.staged = False
        self.apply_sent = False

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        pending = self.cmd(conn, "nv config diff")
        if pending.strip():
            raise TxError("a pending NVUE revision exists (nv config diff is not empty): someone else is "
                          "editing this switch; not touching it")
        self.backup_running = dict(running)

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        self.staged = True
        self.config_lines(conn, diff.commands)
        self.ctx.step("committing")
        self.apply_sent = True
        self.cmd(conn, f"nv config apply -y --confirm {max(1, int(self.ctx.confirm_timeout))}s",
                 ok=r"applied", timeout=max(self.ctx.read_timeout, 120))
        self.staged = False

    def confirm(self, conn: Any) -> None:
        self.cmd(conn, "nv config confirm", ok=r"applied")
        self.cmd(conn, "nv config save", check=False)

    def rollback(self, conn: Any) -> None:
        """Drop anything staged; if the change went in, apply its inverse now (the timer is the fallback)."""
        self.cmd(conn, "nv config detach", check=False)
        self.staged = False
        if not self.backup_running:
            return
        if self.apply_sent:
            # NVUE refuses a new apply while a --confirm is pending: accept it, then apply the inverse now
            self.cmd(conn, "nv config confirm", check=False)
        now = self.fetch(conn, list(self.backup_running))
        undo: list[str] = []
        for name, before in self.backup_running.items():
            undo += undo_commands(before, now.get(name, ""))
        if undo:
            self.config_lines(conn, undo)
            self.cmd(conn, "nv config apply -y", ok=r"applied", timeout=max(self.ctx.read_timeout, 120))

    def cleanup(self, conn: Any) -> None:
        if self.staged:
            self.cmd(conn, "nv config detach", check=False)
            self.staged = False

    def resume(self, restore: Mapping[str, Any], backup: Mapping[str, str]) -> None:
        """After a dead run: assume the worst (staged and applied); both steps are harmless otherwise."""
        self.backup_running = dict(backup)
        self.staged = self.apply_sent = True


def _keyed(text: str) -> dict[str, str]:
    """``nv set`` lines by key (every word but the value: NVUE replaces a line with the same key)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = " ".join(raw.split())
        if line.startswith("nv set "):
            out[line.rsplit(" ", 1)[0]] = line
    return out


def undo_commands(before: str, now: str) -> list[str]:
    """Commands that turn the applied config ``now`` back into ``before`` (``nv config show -o commands``)."""
    b, n = _keyed(before), _keyed(now)
    unset = [f"nv unset {key.removeprefix('nv set ')}" for key in n if key not in b]
    reset = [line for key, line in b.items() if n.get(key) != line]
    return unset + reset


TRANSACTION = NvueTransaction

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.commands import show_port as _show_port  # noqa: E402
from fabriccfg.telemetry.model import Sample as _Sample  # noqa: E402
from fabriccfg.telemetry.parsers import nvue as _parse  # noqa: E402
from fabriccfg.telemetry.spec import CliCommand as _CliCommand  # noqa: E402
from fabriccfg.telemetry.spec import CliContext as _CliContext  # noqa: E402
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402


def _roce_counters(text: str, ctx: _CliContext) -> list[_Sample]:
    """The RoCE counters do not name the lossless class: the parser needs the fabric's priority. PFC rows
    too: Cumulus' snmpd serves no PFC MIB, so this command is where the pause counters come from."""
    return _parse.roce_samples(ctx.device, ctx.port, text, ctx.roce_prio, with_pfc=True)


SHOW = (
    _CliCommand("nvue-roce", "nv show interface {port} qos roce counters", _roce_counters, per="port"),
    _show_port("nvue-pfcwd", "nv show interface {port} qos pfc-watchdog", _parse.watchdog_samples),
)
"""ECN marks (RoCE counters) and PFC-watchdog counters per port: what the SNMP tables lack."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.LLDP), cli=SHOW)
"""Cumulus' snmpd serves IF-MIB and LLDP-MIB (lldpd AgentX) but no PFC or queue MIB (its "Supported MIBs"
page, telemetry/oids.py): PFC, ECN and watchdog counters come from the NVUE show commands."""
