"""SQLite sample store: round trip with exact ints, previous-run rates, retention, concurrent access."""

from __future__ import annotations

import time
from pathlib import Path

from fabriccfg.telemetry.model import Sample, Snapshot, labels
from fabriccfg.telemetry.store import SampleStore, open_store


def _snap(ts: float, value: int) -> Snapshot:
    s = Snapshot(ts=ts, uptime={"sw1": 1234})
    s.add(Sample("sw1", "swp1", "if_in_octets", (), value, "counter64"))
    s.add(Sample("sw1", "swp1", "pfc_rx_pause", labels(prio=3), 7, "counter64"))
    s.add(Sample("sw1", None, "lldp_neighbor", labels(remote_port="swp9"), "spine1", "info"))
    s.error("sw2", "snmp: No SNMP response received before timeout")
    s.device_ts["sw1"] = ts + 0.1
    return s


def test_roundtrip_keeps_big_ints_exact(tmp_path: Path) -> None:
    big = 2**64 - 3  # beyond float64's exact range
    now = time.time()
    with SampleStore(tmp_path) as st:
        st.save(_snap(now, big))
        got = st.latest()
    assert got is not None
    assert got.samples["sw1"][0].value == big and isinstance(got.samples["sw1"][0].value, int)
    assert got.samples["sw1"][1].labels == (("prio", "3"),)
    assert got.errors == {"sw2": ["snmp: No SNMP response received before timeout"]}
    assert got.uptime == {"sw1": 1234} and got.device_ts == {"sw1": now + 0.1}
    assert (tmp_path / "samples.sqlite").exists()


def test_single_runs_rate_against_the_previous_run(tmp_path: Path) -> None:
    now = time.time()
    with open_store(tmp_path) as st:
        prev, rates = st.save_and_rate(_snap(now - 10, 1000))
        assert prev is None and {r.status for r in rates.values()} == {"first"}
    with open_store(tmp_path) as st:  # a later cron run: new process, same state dir
        prev, rates = st.save_and_rate(_snap(now, 6000))
    assert prev is not None
    r = rates[("sw1", "swp1", "if_in_octets", ())]
    assert r.status == "ok" and r.delta == 5000 and r.value_per_s == 500.0


def test_retention_by_count_and_age_per_scope(tmp_path: Path) -> None:
    now = time.time()
    with SampleStore(tmp_path, keep_count=3, keep_seconds=3600) as st:
        st.save(_snap(now - 7200, 1), scope="other")
        assert st.count("other") == 0  # older than keep_seconds: dropped at once
        for i in range(6):
            st.save(_snap(now - 60 + i, i))
        assert st.count() == 3
        assert [s.samples["sw1"][0].value for s in st.history(limit=10)] == [3, 4, 5]
        assert st.latest(before=now - 56) is not None
        assert st.latest(before=now - 60) is None


def test_two_handles_share_one_wal_database(tmp_path: Path) -> None:
    a, b = SampleStore(tmp_path), SampleStore(tmp_path)
    try:
        now = time.time()
        a.save(_snap(now - 1, 1), scope="watch")
        b.save(_snap(now, 2), scope="watch")
        assert a.count("watch") == 2
        got = b.latest("watch")
        assert got is not None and got.ts == now
        mode = a._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert mode == "wal"
    finally:
        a.close()
        b.close()
