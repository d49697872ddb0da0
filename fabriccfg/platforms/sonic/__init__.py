"""Community SONiC: CONFIG_DB JSON over a bash shell (netmiko ``linux``)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from fabriccfg.platforms.base import PlatformInfo
from fabriccfg.render.spec import RenderSpec

if TYPE_CHECKING:
    from fabriccfg.inventory.models import Device, Fabric, Switch


PLATFORM = PlatformInfo(
    name="sonic",
    kind="switch",
    technologies=frozenset({"roce"}),
    device_type="linux",
    config_style="json",
    port_name=lambda n: f"Ethernet{(n - 1) * 8}",
    subport_name=lambda n, lane, lanes: f"Ethernet{(n - 1) * 8 + lane * (8 // lanes)}",
    allowed_breakouts=frozenset({"2x200G", "4x100G", "8x50G"}),
)

# --- render (owned by fabriccfg.render) ---
ABNF_BEFORE = 202106
"""Releases older than this write references as ABNF ``[TABLE|name]`` (the 202012 docs still do,
roce.md §3.2); from 202106 on CONFIG_DB uses bare names as today's templates do."""
MAP_NAME = "ROCE"
WRED_NAME = "ROCE_LOSSLESS"
SCHEDULERS = {"roce": "ROCE_DWRR", "lossy": "LOSSY_DWRR", "cnp": "CNP_STRICT"}


def uses_abnf(os_release: str | None) -> bool:
    """True when ``os_release`` (e.g. '202012', '202305.2') predates bare-name references."""
    digits = re.match(r"\d{6}", os_release or "")
    return digits is not None and int(digits.group(0)) < ABNF_BEFORE


def lossless_profile_name(speed_gbps: int, cable_m: int) -> str:
    """SONiC's lossless PG profile name, e.g. ``pg_lossless_400000_5m_profile`` (speed in Mb/s)."""
    return f"pg_lossless_{speed_gbps * 1000}_{cable_m}m_profile"


def _kb_up(value: int) -> int:
    return -(-value // 1024) * 1024


def _render_context(fabric: Fabric, device: Device) -> dict[str, Any]:
    """CONFIG_DB tables for the lossless class, with release-specific references and profile names."""
    from fabriccfg.render.roce import roce_switch_context

    switch: Switch = device  # type: ignore[assignment]
    ctx = roce_switch_context(fabric, switch)
    abnf = uses_abnf(switch.os_release)

    def ref(table: str, name: str) -> str:
        return f"[{table}|{name}]" if abnf else name

    static = ctx["roce"].buffer.model == "static"
    profiles: dict[str, dict[str, int]] = {}
    pg_ref: dict[str, str] = {}
    for p in ctx["ports"]:
        if static:
            name = lossless_profile_name(p.speed_gbps, p.cable_m)
            xoff, xon = _kb_up(p.headroom_bytes), _kb_up(2 * ctx["mtu"])
            profiles[name] = {"xon": xon, "xoff": xoff, "size": xon + xoff, "dynamic_th": 0}
            pg_ref[p.name] = ref("BUFFER_PROFILE", name)
        else:
            pg_ref[p.name] = "NULL"  # dynamic model: buffermgrd sizes the PG from speed, cable and MTU
    ctx.update(
        release=switch.os_release or "current",
        abnf=abnf,
        map_name=MAP_NAME,
        wred_name=WRED_NAME,
        sched=SCHEDULERS,
        refs={
            "dscp_to_tc": ref("DSCP_TO_TC_MAP", MAP_NAME),
            "tc_to_pg": ref("TC_TO_PRIORITY_GROUP_MAP", MAP_NAME),
            "tc_to_queue": ref("TC_TO_QUEUE_MAP", MAP_NAME),
            "pfc_to_queue": ref("MAP_PFC_PRIORITY_TO_QUEUE", MAP_NAME),
            "pfc_to_pg": ref("PFC_PRIORITY_TO_PRIORITY_GROUP_MAP", MAP_NAME),
            "wred": ref("WRED_PROFILE", WRED_NAME),
            "sched_roce": ref("SCHEDULER", SCHEDULERS["roce"]),
            "sched_lossy": ref("SCHEDULER", SCHEDULERS["lossy"]),
            "sched_cnp": ref("SCHEDULER", SCHEDULERS["cnp"]),
            "lossless_pool": ref("BUFFER_POOL", "ingress_lossless_pool"),
        },
        static_buffers=static,
        buffer_profiles=sorted(profiles.items()),
        pg_profile_ref=pg_ref,
        pfc_enable=str(ctx["roce_tc"]) if ctx["lossless"] else "",
        pfcwd_sw_enable=str(ctx["roce_tc"]) if ctx["wd_enabled"] else "",
    )
    ports, lossless = ctx["ports"], ctx["lossless"]
    present = {
        "BUFFER_PG": bool(lossless and ports),
        "BUFFER_PROFILE": bool(lossless and static and ports),
        "CABLE_LENGTH": bool(ports),
        "PFC_PRIORITY_TO_PRIORITY_GROUP_MAP": True,
        "PFC_WD": bool(ctx["wd_enabled"] and ports),
        "TC_TO_QUEUE_MAP": True,
        "WRED_PROFILE": bool(ctx["ecn_enabled"]),
    }
    ctx["tables"] = [name for name, on in present.items() if on]
    ctx["last_table"] = ctx["tables"][-1]
    return ctx


RENDER = RenderSpec(
    files={"config_db.json": "sonic/config_db.json.j2"},
    context=_render_context,
)

# --- push (owned by fabriccfg.push) ---
# SONiC: ``config checkpoint``, ``config apply-patch`` (RFC 6902), rollback on failure, save.
from fabriccfg.push.transaction import CliTransaction, DiffLike, TxError, upload  # noqa: E402


class SonicTransaction(CliTransaction):
    # SONiC Generic Config Update and Rollback design (sonic-net/SONiC, doc/config-generic-update-rollback/
    # SONiC_Generic_Config_Update_and_Rollback_Design.md): ``config checkpoint NAME``,
    # ``config apply-patch FILE`` (the whole RFC 6902 patch, validated against YANG before anything is
    # written), ``config rollback NAME``. The patch itself is written change by change, so a dead
    # apply can be partial: the checkpoint (journaled) is how ``push --recover`` goes back.
    error_pattern: ClassVar[str] = r"^Error:|Failed to apply patch|command not found"
    running_command: ClassVar[str] = "show runningconfiguration all"
    kind: ClassVar[str] = "config checkpoint + apply-patch"
    journal_fields: ClassVar[tuple[str, ...]] = ("have_checkpoint", "uploaded")

    def __init__(self, ctx: Any) -> None:
        super().__init__(ctx)
        self.checkpoint = ctx.tag
        self.have_checkpoint = False
        self.patch_file = f"/tmp/{ctx.tag}.patch.json"
        self.uploaded = False

    def backup(self, conn: Any, running: Mapping[str, str]) -> None:
        self.cmd(conn, f"sudo config checkpoint {self.checkpoint}", ok=r"Checkpoint created successfully")
        self.have_checkpoint = True

    def apply(self, conn: Any, diff: DiffLike, intended: Mapping[str, str]) -> None:
        if not diff.patch:
            raise TxError("the diff has no JSON patch to apply")
        self.uploaded = True
        upload(self, conn, self.patch_file, json.dumps(diff.patch, indent=1) + "\n")
        self.ctx.step("committing")
        self.cmd(conn, f"sudo config apply-patch {self.patch_file}", ok=r"Patch applied successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def confirm(self, conn: Any) -> None:
        self.cmd(conn, "sudo config save -y")
        self._drop(conn)

    def rollback(self, conn: Any) -> None:
        self.cmd(conn, f"sudo config rollback {self.checkpoint}", ok=r"rolled back successfully",
                 timeout=max(self.ctx.read_timeout, 120))

    def _drop(self, conn: Any) -> None:
        if self.have_checkpoint:
            self.cmd(conn, f"sudo config delete-checkpoint {self.checkpoint}", check=False)
            self.have_checkpoint = False

    def cleanup(self, conn: Any) -> None:
        self._drop(conn)
        if self.uploaded:
            self.cmd(conn, f"rm -f {self.patch_file}", check=False)
            self.uploaded = False


TRANSACTION = SonicTransaction

# --- telemetry (owned by fabriccfg.telemetry) ---
from fabriccfg.telemetry import tables as _tt  # noqa: E402 (the platform seam)
from fabriccfg.telemetry.commands import show as _show  # noqa: E402
from fabriccfg.telemetry.parsers import sonic as _parse  # noqa: E402
from fabriccfg.telemetry.spec import TelemetrySpec as _TelemetrySpec  # noqa: E402

SHOW = (
    _show("sonic-wred", "show queue wredcounters", _parse.ecn_samples),
    _show("sonic-queue", "show queue counters", _parse.queue_samples),
    _show("sonic-pfcwd", "show pfcwd stats", _parse.pfcwd_samples),
)
"""ECN marks, queue and PFC-watchdog counters: what the SNMP tables lack."""
TELEMETRY = _TelemetrySpec(snmp=(_tt.IF_MIB, _tt.CISCO_PFC_PRIO, _tt.CISCO_QOS_QUEUE, _tt.LLDP), cli=SHOW)
"""What sonic-snmpagent serves (IF-MIB, CISCO-PFC-EXT-MIB per priority, CISCO-SWITCH-QOS-MIB queues, LLDP-MIB;
telemetry/oids.py cites each); IEEE8021-PFC-MIB and MELLANOX-QOS-MIB are not implemented there."""
