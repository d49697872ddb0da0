"""Which shard polls which device (``watch --shard I/N``): a stable hash of the device name.

Hashing (not contiguous ranges of a sorted order) so a device keeps its shard when others are added
or removed, and every host and Python run agree (SHA-256, never ``hash()``). Nothing needs a leaf and
its hosts in one shard: per-port checks read one device, and storm tracing stops at a shard border
(each shard reports the origins it can see; :mod:`fabriccfg.verify.storm_prom` traces across shards
from Prometheus).
"""

from __future__ import annotations

import hashlib

Shard = tuple[int, int]
"""(index, count), index in 0..count-1."""


def shard_of(device: str, shards: int) -> int:
    """Stable shard number of ``device`` (same on every host and Python run: no ``hash()``)."""
    digest = hashlib.sha256(device.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def in_shard(device: str, shard: Shard | None) -> bool:
    return shard is None or shard_of(device, shard[1]) == shard[0]


def parse_shard(text: str) -> Shard:
    """'1/4' -> (1, 4); shards are numbered 0..n-1. ValueError with a one-line message."""
    i, sep, n = text.partition("/")
    try:
        idx, total = int(i), int(n)
    except ValueError:
        raise ValueError(f"--shard {text!r}: write I/N, e.g. 0/4") from None
    if not sep or total < 1 or not 0 <= idx < total:
        raise ValueError(f"--shard {text!r}: I must be in 0..N-1")
    return idx, total
