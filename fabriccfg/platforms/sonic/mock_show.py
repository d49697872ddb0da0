"""Show-command renderers of the sonic mock: what the real NOS prints, from the traffic model (the
parsers in ``parsers.py`` read it back; tests hold both to the published captures)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from fabriccfg.mock.cli_telemetry import (
    comma,
    eth_counters,
    lossless_tc,
    no_port,
    ports_of,
    text_table,
    wd_state,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel




def _sonic_queue_table(model: TrafficModel, device: str, port: str | None, t: float, *, columns: list[str],
                       cells: Callable[[dict[str, int], int], list[str]]) -> tuple[str, int]:
    """One row per port and unicast queue UC0-7: Port, TxQ, then ``cells(counters, queue)``."""
    ports = ports_of(model, device, port)
    if ports is None:
        return no_port(device, port or "")
    rows = []
    for name in ports:
        c = eth_counters(model, device, name, t)
        for q in range(8):
            rows.append([name, f"UC{q}", *cells(c, q)])
    return text_table(["Port", "TxQ", *columns], rows, ["r"] * (2 + len(columns))), 0


def sonic_queue_counters(model: TrafficModel, device: str, port: str | None, t: float) -> tuple[str, int]:
    """``show queue counters [IF]``: UC0-7 per port, Counter/pkts, Counter/bytes, Drop/pkts, Drop/bytes."""

    def cells(c: dict[str, int], q: int) -> list[str]:
        drops = c[f"tc_nobuffer_discard.{q}"] + c[f"tc_wred_discard.{q}"] + c[f"pfcwd_tx_drop.{q}"]
        pkts, octets = c[f"tc_tx_pkts.{q}"], c[f"tc_tx_bytes.{q}"]
        return [comma(pkts), comma(octets), comma(drops), comma(drops * 4166)]

    return _sonic_queue_table(model, device, port, t, cells=cells,
                              columns=["Counter/pkts", "Counter/bytes", "Drop/pkts", "Drop/bytes"])


def sonic_wred_counters(model: TrafficModel, device: str, port: str | None, t: float) -> tuple[str, int]:
    """``show queue wredcounters [IF]``: WredDrp/pkts, WredDrp/bytes, EcnMarked/pkts, EcnMarked/bytes."""

    def cells(c: dict[str, int], q: int) -> list[str]:
        w, e = c[f"tc_wred_discard.{q}"], c[f"ecn_marked.{q}"]
        return [comma(w), comma(w * 4166), comma(e), comma(e * 4166)]

    return _sonic_queue_table(model, device, port, t, cells=cells,
                              columns=["WredDrp/pkts", "WredDrp/bytes", "EcnMarked/pkts", "EcnMarked/bytes"])


def sonic_pfc_counters(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show pfc counters``: an Rx table then a Tx table, PFC0..PFC7 per port."""
    parts = []
    for d, title in (("rx", "Port Rx"), ("tx", "Port Tx")):
        rows = []
        for name in model.ports(device):
            c = eth_counters(model, device, name, t)
            rows.append([name] + [comma(c[f"pfc_{d}_pause.{q}"]) for q in range(8)])
        parts.append(text_table([title] + [f"PFC{q}" for q in range(8)], rows, ["r"] * 9))
    return "\n".join(parts), 0


def sonic_pfcwd_stats(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``pfcwd show stats`` / ``show pfcwd stats``: queues of lossless ports (``PORT:QUEUE``)."""
    p = lossless_tc(model)
    rows = []
    for name in model.ports(device):
        c = eth_counters(model, device, name, t)
        det, res, storm = wd_state(c, p)
        drop = c[f"pfcwd_tx_drop.{p}"]
        ok = c[f"tc_tx_pkts.{p}"]
        rows.append(
            [
                f"{name}:{p}",
                "stormed" if storm else "operational",
                f"{det}/{res}",
                f"{ok}/{drop}",
                f"{c['if_in_ucast_pkts']}/0",
                f"0/{drop if storm else 0}",
                "0/0",
            ]
        )
    return text_table(
        [
            "QUEUE",
            "STATUS",
            "STORM DETECTED/RESTORED",
            "TX OK/DROP",
            "RX OK/DROP",
            "TX LAST OK/DROP",
            "RX LAST OK/DROP",
        ],
        rows,
        ["r"] * 7,
    ), 0


def _sonic_watermark(model: TrafficModel, device: str, t: float, *, title: str, prefix: str,
                     metric: str) -> tuple[str, int]:
    """One ``watermarkstat`` table: a title, then ``Port`` and ``<prefix>0-7`` (bytes) per port."""
    rows = []
    for name in model.ports(device):
        wm = model.watermarks(device, name, t)
        if wm:
            rows.append([name] + [str(wm[f"{metric}.{q}"]) for q in range(8)])
    return f"{title}:\n" + text_table(["Port"] + [f"{prefix}{q}" for q in range(8)], rows, ["r"] * 9), 0


def sonic_queue_watermark(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show queue watermark unicast``: peak egress occupancy per unicast queue (bytes)."""
    return _sonic_watermark(model, device, t, title="Egress shared pool occupancy per unicast queue",
                            prefix="UC", metric="queue_watermark_bytes")


def sonic_pg_shared_watermark(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show priority-group watermark shared``: peak shared-pool use per ingress PG (bytes)."""
    return _sonic_watermark(model, device, t, title="Ingress shared pool occupancy per PG", prefix="PG",
                            metric="pg_shared_watermark_bytes")


def sonic_pg_headroom_watermark(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``show priority-group watermark headroom``: peak headroom use per ingress PG (bytes)."""
    return _sonic_watermark(model, device, t, title="Ingress headroom per PG", prefix="PG",
                            metric="pg_headroom_watermark_bytes")
