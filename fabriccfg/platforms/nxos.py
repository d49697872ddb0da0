"""Cisco NX-OS on Nexus 9000 (netmiko ``cisco_nxos``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import CliDiffSpec, RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


PLATFORM = PlatformInfo(
    name="nxos",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="cisco_nxos",
    config_style="cli",
    port_name=lambda n: f"Ethernet1/{n}",
    subport_name=lambda n, lane, lanes: f"Ethernet1/{n}/{lane + 1}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)

# --- render (owned by fabriccfg.render) ---
NAMES = {"cm_roce": "ROCEv2", "cm_cnp": "CNP", "pm_qos": "QOS_CLASSIFICATION",
         "pm_queuing": "QOS_EGRESS_PORT", "pm_network": "qos_network"}
"""Class and policy names of Cisco's AI/ML blueprint (roce.md §5)."""


def _queue_class(tc: int) -> str:
    return "c-out-8q-q-default" if tc == 0 else f"c-out-8q-q{tc}"


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """MQC policies of the blueprint, with every queue of the 8q template given its share."""
    from fabriccfg.render.roce import roce_switch_context

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    queues: list[dict[str, Any]] = []
    for tc in (ctx["roce_tc"], ctx["lossy_tc"], *range(1, 8)):
        if any(q["tc"] == tc for q in queues):
            continue
        strict = ctx["cnp_strict"] and tc == ctx["cnp_tc"]
        bw = ctx["roce_bw"] if tc == ctx["roce_tc"] else ctx["lossy_bw"] if tc == ctx["lossy_tc"] else 0
        queues.append({"tc": tc, "cls": _queue_class(tc), "strict": strict, "bw": bw,
                       "ecn": ctx["ecn_enabled"] and tc == ctx["roce_tc"]})
    ctx.update(NAMES)
    ctx["queues"] = queues
    return ctx


RENDER = RenderSpec(
    files={"config.txt": "nxos/config.txt.j2"},
    context=_render_context,
    cli=CliDiffSpec(
        hier_platform="CISCO_NXOS",
        idempotent=(
            (r"^interface (\S+)", r"^description "),
            (r"^policy-map type queuing (\S+)", r"^class type queuing (\S+)",
             r"^bandwidth remaining percent "),
            (r"^policy-map type queuing (\S+)", r"^class type queuing (\S+)", r"^random-detect "),
            (r"^policy-map type network-qos (\S+)", r"^class type network-qos (\S+)", r"^mtu "),
            (r"^policy-map type qos (\S+)", r"^class (\S+)", r"^set qos-group "),
            (r"^system qos", r"^service-policy type (network-qos|queuing output) "),
        ),
    ),
)

# --- push (owned by fabriccfg.push) ---
# Cisco NX-OS: ``checkpoint``, config, ``rollback running-config checkpoint`` on failure, save.
from fabriccfg.push.transaction import CliTransaction, DiffLike  # noqa: E402


class NxosTransaction(CliTransaction):
    error_pattern: ClassVar[str] = r"^% |^ERROR:"

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.have_checkpoint = False

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"checkpoint {self.checkpoint}", ok=r"Done")
        self.have_checkpoint = True

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        conn.config_mode()
        self.config_lines(conn, diff.commands)
        conn.exit_config_mode()

    def confirm(self, conn: Any) -> None:
        self.cmd(conn, "copy running-config startup-config", ok=r"Copy complete", timeout=120)
        self._drop(conn)

    def rollback(self, conn: Any) -> None:
        self.cmd(conn, f"rollback running-config checkpoint {self.checkpoint}",
                 ok=r"Rollback completed successfully", timeout=max(self.ctx.read_timeout, 120))

    def _drop(self, conn: Any) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"no checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Any) -> None:
        if conn.check_config_mode():
            conn.exit_config_mode()
        self._drop(conn)


TRANSACTION = NxosTransaction

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.commands import show_port as _show_port  # noqa: E402
from fabriccfg.telemetry.parsers import nxos as _parse  # noqa: E402
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

SHOW = (
    _show_port("nxos-queuing", "show queuing interface {port}", _parse.queuing_samples),
    _show_port("nxos-pfcwd", "show queuing pfc-queue interface {port} detail", _parse.pfc_queue_samples),
)
"""Per-queue ECN/drop counters and PFC-watchdog state per port."""
# The standard MIBs only; per-queue counters come from show commands.
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.IEEE_PFC, _tt.LLDP), cli=SHOW)
