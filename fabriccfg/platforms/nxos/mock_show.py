"""Show-command renderers of the nxos mock: what the real NOS prints, from the traffic model (the
parsers in ``parsers.py`` read it back; tests hold both to the published captures)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabriccfg.mock.cli_telemetry import (
    eth_counters,
    lossless_tc,
    wd_state,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel


# ----- NX-OS
def nxos_queuing_interface(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``show queuing interface ethernet1/N`` (modelled on NX-OS 10.x): per QoS-group egress block, then
    the PFC statistics table per CoS; ``ECN Marked Pkts`` is in each QoS-group block."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    out = ["", "slot  1", "=======", "", "", f"Egress Queuing for {port} [System]", "-" * 78]
    for q in range(8):
        drops = c[f"tc_nobuffer_discard.{q}"] + c[f"tc_wred_discard.{q}"]
        out += [
            "  +-------------------------------------------------------------+",
            f"  |                              QOS GROUP {q}                    |",
            "  +-------------------------------------------------------------+",
            "  |                           |  Unicast       |Multicast       |",
            "  +-------------------------------------------------------------+",
            f"  |                   Tx Pkts |{c[f'tc_tx_pkts.{q}']:>16}|{0:>16}|",
            f"  |                   Tx Byts |{c[f'tc_tx_bytes.{q}']:>16}|{0:>16}|",
            f"  | WRED/AFD & Tail Drop Pkts |{drops:>16}|{0:>16}|",
            f"  | WRED/AFD & Tail Drop Byts |{drops * 4166:>16}|{0:>16}|",
            f"  |              Q Depth Byts |{0:>16}|{0:>16}|",
            f"  |       WD & Tail Drop Pkts |{c[f'pfcwd_tx_drop.{q}']:>16}|{0:>16}|",
            f"  |           ECN Marked Pkts |{c[f'ecn_marked.{q}']:>16}|{0:>16}|",
            "  +-------------------------------------------------------------+",
        ]
    tx = sum(c[f"pfc_tx_pause.{q}"] for q in range(8))
    rx = sum(c[f"pfc_rx_pause.{q}"] for q in range(8))
    out += [
        "",
        "",
        "  PFC Statistics",
        "  " + "-" * 76,
        f"  TxPPP: {tx:>20}, RxPPP: {rx:>20}",
        "  " + "-" * 76,
        "   PFC_COS QOS_Group   TxPause                 TxCount            RxPause                 RxCount",
    ]
    for q in range(8):
        tx_active = "Active" if q == p and c[f"pfc_tx_pause.{q}"] else "Inactive"
        rx_active = "Active" if q == p and c[f"pfc_rx_pause.{q}"] else "Inactive"
        out.append(
            f"   {q:>7} {q:>9} {tx_active:>9} {c[f'pfc_tx_pause.{q}']:>23} {rx_active:>18} "
            f"{c[f'pfc_rx_pause.{q}']:>23}"
        )
    out.append("  " + "-" * 76)
    return "\n".join(out) + "\n", 0


def nxos_pfc_queue_detail(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``show queuing pfc-queue interface ethernet1/N detail`` (modelled): PFC watchdog per no-drop group."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    det, res, storm = wd_state(c, p)
    out = [
        "+----------------------------------------------------+",
        "Global watch-dog interval [Enabled]",
        "+----------------------------------------------------+",
        "",
        f"{port} Interface PFC watchdog: [Enabled]",
        "+----------------------------------------------------+",
        f"|     QOS GROUP {p} [{'Shutdown' if storm else 'Active'}] PFC [YES] PFC-COS [{p}]",
        "+----------------------------------------------------+",
        "|               |  Stats                             |",
        "+----------------------------------------------------+",
        f"|         Shutdown|{det:>34}|",
        f"|         Restored|{res:>34}|",
        f"|  Total pkts drained|{0:>31}|",
        f"|  Total pkts dropped|{c[f'pfcwd_tx_drop.{p}']:>31}|",
        "+----------------------------------------------------+",
    ]
    return "\n".join(out) + "\n", 0
