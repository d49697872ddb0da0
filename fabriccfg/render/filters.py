"""Unit and encoding conversions used by templates, as plain functions (registered as Jinja filters).

Templates only format; every conversion lives here so it is tested once and reads the same on
every platform. Sources: IBTA encodings from ``include/iba/ib_types.h`` (ib.md §3), OpenSM's
boolean parser (ib.md §3: only the exact text ``TRUE`` is true).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

IB_MTU_CODES: dict[int, int] = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}
"""IBTA MTU encoding (partitions.conf ``mtu=``)."""

IB_RATE_CODES: dict[int, int] = {
    10: 3, 30: 4, 5: 5, 20: 6, 40: 7, 60: 8, 80: 9, 120: 10, 14: 11, 56: 12, 112: 13, 168: 14,
    25: 15, 100: 16, 200: 17, 300: 18, 28: 19, 50: 20, 400: 21, 600: 22,
}
"""IBTA path-record rate encoding in Gb/s (``IB_PATH_RECORD_RATE_*``; partitions.conf ``rate=``)."""


def tf(value: object) -> str:
    """OpenSM boolean: exactly ``TRUE`` or ``FALSE`` (anything else reads as false)."""
    return "TRUE" if value else "FALSE"


def lower_bool(value: object) -> str:
    """CONFIG_DB boolean text: ``true`` / ``false``."""
    return "true" if value else "false"


def ib_mtu(mtu_bytes: int) -> int:
    """4096 -> 5 (IBTA MTU code)."""
    try:
        return IB_MTU_CODES[int(mtu_bytes)]
    except KeyError:
        raise ValueError(f"{mtu_bytes} is not an InfiniBand MTU (256..4096)") from None


def ib_rate(gbps: int) -> int:
    """200 -> 17 (IBTA rate code)."""
    try:
        return IB_RATE_CODES[int(gbps)]
    except KeyError:
        raise ValueError(f"{gbps} Gb/s has no IBTA rate code") from None


def mlnx_mtu(mtu_bytes: int) -> str:
    """MLNX-OS partition MTU keyword: 4096 -> ``4K``, 2048 -> ``2K``, 256 -> ``256``."""
    m = int(mtu_bytes)
    return f"{m // 1024}K" if m >= 1024 else str(m)


def colon_guid(guid: str) -> str:
    """``0x08c0eb0300f60001`` -> ``08:c0:eb:03:00:f6:00:01`` (MLNX-OS member syntax)."""
    text = guid.lower().removeprefix("0x").replace(":", "").rjust(16, "0")
    return ":".join(text[i:i + 2] for i in range(0, 16, 2))


def hex_pkey(pkey: int) -> str:
    """257 -> ``0x0101``."""
    return f"0x{int(pkey):04x}"


def kbytes(value_bytes: int, base: int = 1000) -> int:
    """Bytes -> kilobytes, rounded up so a threshold never shrinks (base 1000 unless told)."""
    return math.ceil(int(value_bytes) / base)


def seconds(ms: int, decimals: int = 2) -> str:
    """Milliseconds -> seconds text without trailing zeros: 200 -> ``0.2``, 1000 -> ``1``."""
    text = f"{int(ms) / 1000:.{decimals}f}".rstrip("0").rstrip(".")
    return text or "0"


def pfc_list(priorities: Iterable[int]) -> str:
    """PFC enable vector for mlnx_qos: (3,) -> ``0,0,0,1,0,0,0,0``."""
    on = {int(p) for p in priorities}
    return ",".join("1" if p in on else "0" for p in range(8))


def csv(values: Iterable[Any]) -> str:
    """(3, 4) -> ``3,4``."""
    return ",".join(str(v) for v in values)


def tos(dscp: int, ecn: int = 2) -> int:
    """DSCP + ECN bits -> IP ToS byte: DSCP 26 with ECT(0) -> 106."""
    return (int(dscp) << 2) | int(ecn)


def cable(length_m: float) -> int:
    """Cable length in whole metres, rounded up (headroom must cover the real cable)."""
    return max(1, math.ceil(float(length_m)))


def shell_quote(value: object) -> str:
    """One shell word (``shlex.quote``): a value placed in a rendered script can never become code."""
    import shlex

    return shlex.quote(str(value))


FILTERS: dict[str, Callable[..., Any]] = {
    "tf": tf,
    "lower_bool": lower_bool,
    "ib_mtu": ib_mtu,
    "ib_rate": ib_rate,
    "mlnx_mtu": mlnx_mtu,
    "colon_guid": colon_guid,
    "hex_pkey": hex_pkey,
    "kbytes": kbytes,
    "seconds": seconds,
    "pfc_list": pfc_list,
    "csv": csv,
    "tos": tos,
    "cable": cable,
    "shell_quote": shell_quote,
}
