"""Show-command renderers of the nxos mock: what the real NOS prints, from the traffic model (the
parsers in ``parsers.py`` read it back; tests hold both to the published captures).

Layouts follow the captures in ``tests/telemetry/fixtures/nxos_*/SOURCE``: a Nexus 93180FX2's ``show
queuing interface`` (egress QoS-group boxes, ingress pause-buffer table, per-port ingress drops, ``PFC
Statistics``) and the watchdog box of ``show queuing pfc-queue ... detail``. With no interface both print
every interface, one block after the other (Cisco's NX-API schema: one row per interface).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabriccfg.mock.cli_telemetry import (
    eth_counters,
    lossless_tc,
    wd_state,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel

_BOX = "+" + "-" * 61 + "+"
_WD_BOX = "+" + "-" * 52 + "+"
_RULE = "-" * 78


def _queuing_block(model: TrafficModel, device: str, port: str, t: float) -> list[str]:
    """One interface of ``show queuing interface``. The FX2 capture has no ECN row; the mock prints
    ``ECN Marked Pkts`` (10.x, name UNVERIFIED) so ECN marks reach the checks."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    out = [f"Egress Queuing for {port} [System]", _RULE]
    for q in range(8):
        drops = c[f"tc_nobuffer_discard.{q}"] + c[f"tc_wred_discard.{q}"]
        out += [
            _BOX,
            f"|                              QOS GROUP {q}                    |",
            _BOX,
            "|                           |  Unicast       |Multicast       |",
            _BOX,
            f"|                   Tx Pkts |{c[f'tc_tx_pkts.{q}']:>16}|{0:>16}|",
            f"|                   Tx Byts |{c[f'tc_tx_bytes.{q}']:>16}|{0:>16}|",
            f"| WRED/AFD & Tail Drop Pkts |{drops:>16}|{0:>16}|",
            f"| WRED/AFD & Tail Drop Byts |{drops * 4166:>16}|{0:>16}|",
            f"|              Q Depth Byts |{0:>16}|{0:>16}|",
            f"|       WD & Tail Drop Pkts |{c[f'pfcwd_tx_drop.{q}']:>16}|{0:>16}|",
            f"|           ECN Marked Pkts |{c[f'ecn_marked.{q}']:>16}|{0:>16}|",
        ]
    out += [_BOX, "", f"Ingress Queuing for {port}", "-" * 53,
            "QoS-Group#                 Pause           Buff Size       Pause Th      Resume Th", "-" * 53]
    for q in range(7, -1, -1):
        cells = ("348608", "77376", "75712") if q == p else ("-", "-", "-")
        out.append(f"{q:>7}{cells[0]:>15}{cells[1]:>13}{cells[2]:>13}")
    tx = sum(c[f"pfc_tx_pause.{q}"] for q in range(8))
    rx = sum(c[f"pfc_rx_pause.{q}"] for q in range(8))
    out += [
        "Per Port Ingress Statistics",
        "-" * 56,
        f"     Hi Priority Drop Pkts{0:>28}",
        f"    Low Priority Drop Pkts{0:>28}",
        f"Ingress Overflow Drop Pkts{c[f'tc_nobuffer_discard.{p}']:>28}",
        "-" * 56,
        "PFC Statistics",
        _RULE,
        f"TxPPP:{tx:>21},   RxPPP:{rx:>21}",
        _RULE,
        "PFC_COS QOS_Group   TxPause             TxCount   RxPause             RxCount",
    ]
    for q in range(8):
        tx_state = "Active" if q == p and c[f"pfc_tx_pause.{q}"] else "Inactive"
        rx_state = "Active" if q == p and c[f"pfc_rx_pause.{q}"] else "Inactive"
        out.append(f"{q:>7}{q:>10}{tx_state:>10}{c[f'pfc_tx_pause.{q}']:>20}{rx_state:>10}"
                   f"{c[f'pfc_rx_pause.{q}']:>20}")
    out += [_RULE, ""]
    return out


def nxos_queuing_interface(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``show queuing interface ethernet1/N``: one interface."""
    return "\n".join(["", "slot  1", "=======", "", *_queuing_block(model, device, port, t)]) + "\n", 0


def nxos_queuing_all(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show queuing interface`` (no list): every interface, one command per device."""
    out = ["", "slot  1", "=======", ""]
    for port in model.ports(device):
        out += _queuing_block(model, device, port, t)
    return "\n".join(out) + "\n", 0


def _pfc_queue_block(model: TrafficModel, device: str, port: str, t: float) -> list[str]:
    """One interface of ``show queuing pfc-queue ... detail``: the eight watchdog rows of the published
    vector (the fields of Cisco's NX-API schema, in its order) for the no-drop QoS group."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    det, res, storm = wd_state(c, p)
    dropped = c[f"pfcwd_tx_drop.{p}"]
    rows = (("Shutdown", det), ("Restored", res), ("Total pkts drained", 0), ("Total pkts dropped", dropped),
            ("Total pkts drained + dropped", dropped), ("Aggregate pkts dropped", dropped),
            ("Total Ingress pkts dropped", 0), ("Aggregate Ingress pkts dropped", 0))
    return [
        f"{port} Interface PFC watchdog: [Enabled]",
        "Disable-action                     : No",
        "PFC watch-dog interface-multiplier : 0",
        _WD_BOX,
        f"| QOS GROUP {p} [{'Shutdown' if storm else 'Active'}] PFC [YES] PFC-COS [{p}]",
        _WD_BOX,
        "|                               |  Stats             |",
        _WD_BOX,
        *(f"|{name:>31}|{v:>20}|" for name, v in rows),
        _WD_BOX,
    ]


def nxos_pfc_queue_detail(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``show queuing pfc-queue interface ethernet1/N detail``: one interface."""
    return "\n".join(_pfc_queue_block(model, device, port, t)) + "\n", 0


def nxos_pfc_queue_all(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show queuing pfc-queue detail`` (no interface): every interface, one command per device."""
    out: list[str] = []
    for port in model.ports(device):
        out += _pfc_queue_block(model, device, port, t)
    return "\n".join(out) + "\n", 0
