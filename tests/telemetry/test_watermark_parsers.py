"""Watermark parsers (#15): samples from the real captures, and no traceback on mangled input."""

from __future__ import annotations

import random
from pathlib import Path

from fabriccfg.platforms.cumulus_nvue.parsers import buffer_samples, parse_qos_buffer
from fabriccfg.platforms.sonic.parsers import parse_watermark, pg_headroom_wm_samples, queue_wm_samples

FIXTURES = Path(__file__).parent / "fixtures"


def _read(folder: str, name: str) -> str:
    return (FIXTURES / folder / name).read_text(encoding="utf-8")


NVUE = _read("nvue_qos_buffer", "nvidia_nvue_reference_swp5.txt")
SONIC_UC = _read("sonic_queue_wm", "sonic_utilities_wm_unicast.txt")
SONIC_HDRM = _read("sonic_pg_headroom_wm", "sonic_utilities_pg_wm_headroom.txt")


def test_sonic_samples_are_byte_gauges_of_unicast_queues_and_pgs() -> None:
    uc = {(s.port, dict(s.labels)["tc"]): s.value for s in queue_wm_samples("sw", SONIC_UC)}
    assert uc[("Ethernet0", "0")] == 2057328 and uc[("Ethernet8", "9")] == 7696  # as printed: bytes
    assert {s.metric for s in queue_wm_samples("sw", SONIC_UC)} == {"queue_watermark_bytes"}
    samples = pg_headroom_wm_samples("sw", SONIC_HDRM)
    hdrm = {(s.port, dict(s.labels)["prio"]): s.value for s in samples}
    assert hdrm[("Ethernet4", "3")] == 403 and all(s.kind == "gauge" for s in samples)
    assert queue_wm_samples("sw", SONIC_HDRM) == []  # a PG table is not a queue table


def test_nvue_samples_keep_tc_and_pg_0_to_7() -> None:
    samples = buffer_samples("sw", "swp5", NVUE)
    got = {(s.metric, dict(s.labels).get("tc", dict(s.labels).get("prio"))) for s in samples}
    assert {("queue_watermark_bytes", str(tc)) for tc in range(8)} <= got
    assert ("queue_watermark_bytes", "16") not in got  # the CPU / multicast classes
    assert ("pg_shared_watermark_bytes", "0") in got and ("pg_headroom_watermark_bytes", "0") in got
    assert ("pg_shared_watermark_bytes", "9") not in got  # PG 9 is the control PG, not a priority


def test_mangled_input_never_raises() -> None:
    rng = random.Random(7)
    lines = (NVUE + SONIC_UC + SONIC_HDRM).splitlines()
    for _ in range(500):
        cut = lines[:]
        rng.shuffle(cut)
        text = "\n".join(cut[: rng.randint(0, len(cut))])
        noise = "".join(rng.choice("=-… \nPort PG3 UC1 12 KB Bytes.") for _ in range(200))
        for t in (text, noise, text[: rng.randint(0, len(text))]):
            assert isinstance(parse_qos_buffer(t), dict) and isinstance(parse_watermark(t), dict)


def test_a_kept_cell_split_over_two_lines_is_joined() -> None:
    """NVUE wraps a cell too wide for its column onto the next line (``18.98`` / ``KB`` in the reference
    example's HR column); the same can happen to "HR/PL Max". 18.98 KiB = 19,435.52 -> 19,436 bytes."""
    lines = NVUE.splitlines()
    rule = next(line for line in lines if line.strip().startswith("------…"))
    last = rule.rindex("  ") + 2  # where the "HR/PL Max" column starts
    at = next(i for i, line in enumerate(lines) if line.startswith("    0        2"))
    row, cont = lines[at], lines[at + 1]
    lines[at] = row[:last] + "18.98"
    lines[at + 1] = cont.rstrip().ljust(last) + "KB"
    pg0 = parse_qos_buffer("\n".join(lines))["ingress_pg"]["0"]
    assert pg0 == {"max_usage": 0, "headroom": 19436, "headroom_max_usage": 19436}


def test_sections_other_than_pg_and_tc_are_not_read() -> None:
    """The ingress-port and egress-port pool tables have a "Max Usage" column too; their rows (pools 1, 2,
    12, 13) must not pass for priority groups or traffic classes."""
    parsed = parse_qos_buffer(NVUE)
    assert set(parsed) == {"ingress_pg", "egress_tc"}
    assert set(parsed["ingress_pg"]) == {"0", "9"}
    assert set(parsed["egress_tc"]) == {str(tc) for tc in range(17)}
