"""``ethtool -S NETDEV`` on a ConnectX (mlx5) host: ``NIC statistics:`` then ``name: value`` lines.

Mapped to canonical metrics: ``rx_prio{p}_pause`` -> ``pfc_rx_pause{prio=p}`` (and ``tx``,
``*_pause_duration``), the DCQCN/ECN counters (``np_cnp_sent``, ``rp_cnp_handled``, ...; mlx5 also
exposes them as RDMA ``hw_counters``), pause-storm events, and the physical drop/error counters.
Everything else is ignored (an mlx5 port has ~300 counters).
"""

from __future__ import annotations

import re

from fabriccfg.telemetry.model import Sample, label

_LINE = re.compile(r"^\s*(?P<name>[A-Za-z0-9_.\-\[\]]+):\s*(?P<value>-?\d+)\s*$")
_PRIO = re.compile(r"^(?P<dir>rx|tx)_prio(?P<p>[0-7])_pause(?P<dur>_duration)?$")
DIRECT: dict[str, str] = {
    "np_cnp_sent": "np_cnp_sent",
    "np_ecn_marked_roce_packets": "np_ecn_marked_roce_packets",
    "rp_cnp_handled": "rp_cnp_handled",
    "rp_cnp_ignored": "rp_cnp_ignored",
    "tx_pause_storm_warning_events": "tx_pause_storm_warning_events",
    "tx_pause_storm_error_events": "tx_pause_storm_error_events",
    "rx_bytes_phy": "if_in_octets",
    "tx_bytes_phy": "if_out_octets",
    "rx_discards_phy": "rx_discards_phy",
    "tx_discards_phy": "tx_discards_phy",
    "rx_out_of_buffer": "rx_out_of_buffer",
    "rx_crc_errors_phy": "rx_crc_errors_phy",
    "rx_symbol_err_phy": "rx_symbol_err_phy",
    "link_down_events_phy": "link_down_events_phy",
}


def parse(text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            out[m.group("name")] = int(m.group("value"))
    return out


def samples(device: str, text: str, port: str | None = None) -> list[Sample]:
    out: list[Sample] = []
    for name, value in parse(text).items():
        if value < 0:
            continue
        m = _PRIO.match(name)
        if m:
            metric = f"pfc_{m.group('dir')}_pause" + ("_duration" if m.group("dur") else "")
            out.append(Sample(device, port, metric, label("prio", m.group("p")), value, "counter64"))
            continue
        direct = DIRECT.get(name)
        if direct is not None:
            out.append(Sample(device, port, direct, (), value, "counter64"))
    return out
