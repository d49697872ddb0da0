"""Cumulus NVUE: ``nv show interface PORT qos roce counters`` and ``nv show interface PORT qos
pfc-watchdog`` (one port per command; the RoCE counters are those of the RoCE traffic class)."""

from __future__ import annotations

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.telemetry.parsers._table import data_lines, num


def parse_roce_counters(text: str) -> dict[str, int]:
    """Flattened ``section.subsection.name`` -> value (indentation gives the nesting)."""
    out: dict[str, int] = {}
    path: list[tuple[int, str]] = []
    for line in text.splitlines():
        if not line.strip() or set(line.strip()) <= set("- ") or line.strip() == "operational":
            continue
        indent = len(line) - len(line.lstrip())
        parts = line.split()
        while path and path[-1][0] >= indent:
            path.pop()
        if len(parts) >= 2 and (v := num(parts[-1])) is not None:
            out[".".join([p for _, p in path] + [" ".join(parts[:-1])])] = v
        elif len(parts) == 1:
            path.append((indent, parts[0]))
    return out


def parse_watchdog(text: str) -> dict[str, dict[str, int | str]]:
    """traffic class -> {status, deadlock_count}."""
    out: dict[str, dict[str, int | str]] = {}
    for row in data_lines(text):
        if len(row) >= 3 and row[0].isdigit() and (v := num(row[2])) is not None:
            out[row[0]] = {"status": row[1].lower(), "deadlock_count": v}
    return out


ROCE_MAP: dict[str, tuple[str, str]] = {
    "rx-stats.rx-pfc-stats.pause-packets": ("pfc_rx_pause", "prio"),
    "rx-stats.rx-pfc-stats.pause-duration": ("pfc_rx_pause_duration", "prio"),
    "tx-stats.tx-pfc-stats.pause-packets": ("pfc_tx_pause", "prio"),
    "tx-stats.tx-pfc-stats.pause-duration": ("pfc_tx_pause_duration", "prio"),
    "tx-stats.tx-ecn-stats.ecn-marked-packets": ("ecn_marked", "tc"),
    # "Tx buffer discards for RoCE traffic": NVIDIA's RoCE page (Cumulus Linux 5.16, 'Verify RoCE
    # Configuration', nv show interface <id> qos roce counters)
    "tx-stats.tx-roce-stats.unicast-no-buffer-discard": ("tc_no_buffer_discard", "tc"),
}
"""ECN marks, lossless-class drops and (``with_pfc=True``) PFC: Cumulus' snmpd serves no PFC or queue MIB
(its Supported MIBs page), so on Cumulus this command is the source of all of them."""


def roce_samples(device: str, port: str | None, text: str, roce_tc: int, *,
                 with_pfc: bool = False) -> list[Sample]:
    out = []
    for key, value in parse_roce_counters(text).items():
        mapped = ROCE_MAP.get(key)
        if mapped is None or (mapped[1] == "prio" and not with_pfc):
            continue
        metric, label = mapped
        out.append(Sample(device, port, metric, labels(**{label: roce_tc}), value, "counter64"))
    return out


def watchdog_samples(device: str, port: str | None, text: str) -> list[Sample]:
    out = []
    for tc, d in parse_watchdog(text).items():
        lbl = labels(prio=tc)
        out.append(Sample(device, port, "pfcwd_storm_detected", lbl, int(d["deadlock_count"]), "counter64"))
        status = "stormed" if d["status"] in ("deadlock", "stormed") else str(d["status"])
        out.append(Sample(device, port, "pfcwd_status", lbl, status, "state"))
    return out
