"""Show-command renderers of the cumulus_nvue mock: what the real NOS prints, from the traffic model (the
parsers in ``parsers.py`` read it back; tests hold both to the published captures)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fabriccfg.mock.cli_telemetry import (
    eth_counters,
    lossless_tc,
    text_table,
    wd_state,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel


# ----- NVUE (Cumulus)
def _nvue_bytes(v: int) -> str:
    """NVUE's human byte sizes (binary units, two decimals): ``0 Bytes``, ``56.52 MB``, ``92824.38 GB``."""
    for unit, div in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if v >= div:
            return f"{v / div:.2f} {unit}"
    return f"{v} Bytes"


def nvue_qos_roce_counters(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``nv show interface SWP qos roce counters``: the layout of NVIDIA's own example (Cumulus Linux 5.16
    RoCE page, tests/telemetry/fixtures/nvue_roce/SOURCE): operational / applied / description columns,
    sections sorted by name, byte counters and buffer usage in human binary units, packets as integers.
    Buffer occupancy is not modelled (0 Bytes)."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    cnp = model.cnp_prio
    zero = _nvue_bytes(0)
    rows: list[tuple[int, str, str, str]] = [
        (0, "rx-stats", "", ""),
        (1, "rx-non-roce-stats", "", ""),
        (2, "buffer-max-usage", zero, "Max Ingress Pool-buffer usage for non-RoCE traffic"),
        (2, "buffer-usage", zero, "Current Ingress Pool-buffer usage for non-RoCE traffic"),
        (2, "no-buffer-discard", "0", "Rx buffer discards for non-RoCE traffic"),
        (2, "non-roce-bytes", zero, "non-roce rx bytes"),
        (2, "non-roce-packets", "0", "non-roce rx packets"),
        (2, "pg-max-usage", zero, "Max PG-buffer usage for non-RoCE traffic"),
        (2, "pg-usage", zero, "Current PG-buffer usage for non-RoCE traffic"),
        (1, "rx-pfc-stats", "", ""),
        (2, "pause-duration", str(c[f"pfc_rx_pause_duration.{p}"]), "Rx PFC pause duration for RoCE traffic"),
        (2, "pause-packets", str(c[f"pfc_rx_pause.{p}"]), "Rx PFC pause packets for RoCE traffic"),
        (1, "rx-roce-stats", "", ""),
        (2, "buffer-max-usage", zero, "Max Ingress Pool-buffer usage for RoCE traffic"),
        (2, "buffer-usage", zero, "Current Ingress Pool-buffer usage for RoCE traffic"),
        (2, "no-buffer-discard", str(c["if_in_discards"]), "Rx buffer discards for RoCE traffic"),
        (2, "pg-max-usage", zero, "Max PG-buffer usage for RoCE traffic"),
        (2, "pg-usage", zero, "Current PG-buffer usage for RoCE traffic"),
        (2, "roce-bytes", _nvue_bytes(c["if_in_octets"]), "Rx RoCE Bytes"),
        (2, "roce-packets", str(c["if_in_ucast_pkts"]), "Rx RoCE Packets"),
        (0, "tx-stats", "", ""),
        (1, "tx-cnp-stats", "", ""),
        (2, "buffer-max-usage", zero, "Max Egress Pool-buffer usage for CNP traffic"),
        (2, "buffer-usage", zero, "Current Egress Pool-buffer usage for CNP traffic"),
        (2, "cnp-bytes", _nvue_bytes(c.get(f"tc_tx_bytes.{cnp}", 0)), "Tx CNP Packet Bytes"),
        (2, "cnp-packets", str(c.get(f"tc_tx_pkts.{cnp}", 0)), "Tx CNP Packets"),
        (2, "tc-max-usage", zero, "Max TC-buffer usage for CNP traffic"),
        (2, "tc-usage", zero, "Current TC-buffer usage for CNP traffic"),
        (2, "unicast-no-buffer-discard", "0", "Tx buffer discards for CNP traffic"),
        (1, "tx-ecn-stats", "", ""),
        (2, "ecn-marked-packets", str(c[f"ecn_marked.{p}"]), "Tx ECN marked packets"),
        (1, "tx-pfc-stats", "", ""),
        (2, "pause-duration", str(c[f"pfc_tx_pause_duration.{p}"]), "Tx PFC pause duration for RoCE traffic"),
        (2, "pause-packets", str(c[f"pfc_tx_pause.{p}"]), "Tx PFC pause packets for RoCE traffic"),
        (1, "tx-roce-stats", "", ""),
        (2, "buffer-max-usage", zero, "Max Egress Pool-buffer usage for RoCE traffic"),
        (2, "buffer-usage", zero, "Current Egress Pool-buffer usage for RoCE traffic"),
        (2, "roce-bytes", _nvue_bytes(c[f"tc_tx_bytes.{p}"]), "Tx RoCE Packet bytes"),
        (2, "roce-packets", str(c[f"tc_tx_pkts.{p}"]), "Tx RoCE Packets"),
        (2, "tc-max-usage", zero, "Max TC-buffer usage for RoCE traffic"),
        (2, "tc-usage", zero, "Current TC-buffer usage for RoCE traffic"),
        (2, "unicast-no-buffer-discard", str(c[f"tc_nobuffer_discard.{p}"]),
         "Tx buffer discards for RoCE traffic"),
    ]
    key_w = max(len("  " * d + n) for d, n, _, _ in rows)
    op_w = max(len("operational"), *(len(v) for _, _, v, _ in rows))
    desc_w = max(len("description"), *(len(x) for _, _, _, x in rows))
    head = f"{'':{key_w}}  {'operational':{op_w}}  applied  description"
    lines = [head, f"{'-' * key_w}  {'-' * op_w}  -------  {'-' * desc_w}"]
    for depth, name, value, desc in rows:
        lines.append(f"{'  ' * depth + name:{key_w}}  {value:{op_w}}  {'':7}  {desc}".rstrip())
    return "\n".join(lines) + "\n", 0


_BLOCK_RULE = "-" * 37


def nvue_qos_roce_counters_all(model: TrafficModel, device: str, t: float) -> tuple[str, int]:
    """``nv show interface qos-roce-counters`` (Cumulus Linux 5.14+, "the counters for all interfaces",
    RoCE page): NVIDIA prints no example of it, so each cabled port's ``qos roce counters`` table follows
    an ``Interface: swpN`` banner, the layout of the sibling all-interfaces command the same page shows
    (``nv show interface qos-roce-status-pool-map``)."""
    parts = []
    for port in model.ports(device):
        table, _ = nvue_qos_roce_counters(model, device, port, t)
        parts.append(f"{_BLOCK_RULE}\nInterface: {port}\n{_BLOCK_RULE}\n{table}")
    return "".join(parts), 0


def nvue_pfc_watchdog(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``nv show interface SWP qos pfc-watchdog``: per traffic class status OK/DEADLOCK and deadlock-count."""
    c = eth_counters(model, device, port, t)
    p = lossless_tc(model)
    det, _res, storm = wd_state(c, p)
    rows = [[str(p), "DEADLOCK" if storm else "OK", str(det)]]
    # NVIDIA's example (tests/telemetry/fixtures/nvue_pfcwd/SOURCE): a state table, then the per-TC status
    head = ("                 operational  applied\n---------------  -----------  -------\n"
            "state            enabled      enabled\n\nPFC WD Status\n===========================\n")
    table = text_table(["traffic-class", "status", "deadlock-count"], rows, ["l", "l", "l"])
    return head + "".join(f"    {line}\n" for line in table.splitlines()), 0


def _nvue_section(title: str, headers: list[tuple[str, str]], rows: list[list[str]]) -> list[str]:
    """One ``qos buffer`` section: title, ``===`` underline, a two-line header, the dash rule, rows
    (indented by four, columns two apart, as NVUE prints them)."""
    widths = [max(len(h1), len(h2), *(len(r[i]) for r in rows)) for i, (h1, h2) in enumerate(headers)]

    def fmt(cells: list[str]) -> str:
        return "    " + "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True))

    out = [title, "=" * (len(title) + 3), fmt([h for h, _ in headers])]
    if any(h2 for _, h2 in headers):
        out.append(fmt([h2 for _, h2 in headers]))
    out.append(fmt(["-" * w for w in widths]))
    return out + [fmt(r) for r in rows] + [""]


def nvue_qos_buffer(model: TrafficModel, device: str, port: str, t: float) -> tuple[str, int]:
    """``nv show interface SWP qos buffer``: the sections of NVIDIA's reference example (ingress port,
    ingress priority group, egress port, egress traffic class; fixtures/nvue_qos_buffer/SOURCE), with
    "Max Usage" and the PG's "HR/PL Max" from :meth:`TrafficModel.watermarks`."""
    wm = model.watermarks(device, port, t)
    p = lossless_tc(model)
    b = _nvue_bytes
    pool = [("Pool ID", ""), ("Mode", ""), ("Reserved Size", ""), ("Current Usage", ""), ("Max Usage", ""),
            ("Shared Max", "")]
    lines = _nvue_section("Buffer Statistics - Ingress Port", pool, [
        ["1", "DYNAMIC", b(0), b(0), b(0), "ALPHA_8"],
        ["2", "DYNAMIC", b(10220), b(0), b(wm.get(f"pg_shared_watermark_bytes.{p}", 0)), "ALPHA_8"]])
    pg_rows = []
    for pg in sorted({0, p}):
        lossless = pg == p
        pg_rows.append([str(pg), "2" if lossless else "1", "DYNAMIC", b(0), b(0),
                        b(wm.get(f"pg_shared_watermark_bytes.{pg}", 0)), "ALPHA_8",
                        "Lossless" if lossless else "Lossy", b(0), b(0),
                        b(model.thresholds(device, port).headroom_bytes if lossless else 0), b(0),
                        b(wm.get(f"pg_headroom_watermark_bytes.{pg}", 0))])
    lines += _nvue_section("Buffer Statistics - Ingress Priority Group", [
        ("priority-group", ""), ("Pool ID", ""), ("Mode", ""), ("Reserved", "Size"), ("Current", "Usage"),
        ("Max", "Usage"), ("Shared", "Max"), ("Lossy/Lossless", ""), ("XON Th", ""), ("XOFF Th", ""),
        ("HR", ""), ("HR/PL", "Usage"), ("HR/PL", "Max")], pg_rows)
    lines += _nvue_section("Buffer Statistics - Egress Port", pool, [
        ["12", "DYNAMIC", b(0), b(0), b(0), "ALPHA_8"], ["13", "DYNAMIC", b(10220), b(0), b(0), "ALPHA_16"]])
    tc_rows = [[str(tc), "13", "DYNAMIC", b(1008), b(0), b(wm.get(f"queue_watermark_bytes.{tc}", 0)),
                "ALPHA_8"] for tc in range(8)]
    lines += _nvue_section("Buffer - Egress Traffic Class", [("traffic-class", ""), *pool], tc_rows)
    return "\n".join(lines), 0
