"""CollectorPool: a round spread over collector processes gives the single collector's snapshot.

Real mock fabrics (SSH + SNMP on loopback), real spawned worker processes. Values move with time, so
the comparison is on what was collected (one sample per series, the same series, the same errors);
on the IB lab the fabric-wide tools (ibnetdiscover, ibqueryerrors on the SM host) must run once.
"""

from __future__ import annotations

import pickle
from collections import Counter
from pathlib import Path

import pytest

from fabriccfg.inventory.models import Fabric
from fabriccfg.mock.fabric import MockFabric
from fabriccfg.telemetry.collect import Collector
from fabriccfg.telemetry.model import Sample, Snapshot, labels
from fabriccfg.telemetry.pool import CollectorPool, inner_shards, merge
from fabriccfg.telemetry.shard import in_shard

pytestmark = pytest.mark.timeout(180)


def test_inner_shards_split_an_outer_shard_exactly() -> None:
    names = [f"dev{i}" for i in range(500)]
    for outer in (None, (1, 3)):
        mine = [n for n in names if in_shard(n, outer)]
        parts = [[n for n in names if in_shard(n, s)] for s in inner_shards(outer, 2)]
        assert sorted(parts[0] + parts[1]) == sorted(mine) and not set(parts[0]) & set(parts[1])
        assert all(parts)


@pytest.mark.parametrize("which", ["roce_fabric", "ib_fabric"])
def test_pool_snapshot_equals_single_collector(which: str, request: pytest.FixtureRequest,
                                               tmp_path: Path) -> None:
    fabric: Fabric = request.getfixturevalue(which)
    with MockFabric(fabric, workdir=tmp_path) as mock:
        with Collector(timeout=30) as col:
            single = col.collect(fabric, mock.endpoints)
        pool = CollectorPool(2, timeout=30)
        try:
            pooled = pool(fabric, mock.endpoints)
            again = pool(fabric, mock.endpoints)  # the same workers serve the next round
            pids = {w.process.pid for w in pool._workers}
            assert len(pids) == 2
        finally:
            pool.close()
    assert single.errors == pooled.errors == again.errors == {}
    for snap in (pooled, again):
        assert max(Counter(s.key for s in snap).values()) == 1  # one sample per series
        assert {s.key for s in snap} == {s.key for s in single}
        assert set(snap.uptime) == set(single.uptime)
        assert set(snap.device_ts) == set(single.device_ts)


def test_merge_prefers_a_devices_own_samples(roce_fabric: Fabric) -> None:
    from fabriccfg.telemetry.model import Sample, Snapshot

    a, b = inner_shards(None, 2)
    dev = next(n for n in roce_fabric.devices if in_shard(n, a))
    own = Snapshot(ts=2.0, samples={dev: [Sample(dev, "p1", "m", (), 1, "gauge")]})
    other = Snapshot(ts=1.0, samples={dev: [Sample(dev, "p1", "m", (), 99, "gauge"),
                                            Sample(dev, "p2", "m", (), 5, "gauge")]})
    snap = merge([(b, other), (a, own)])
    assert sorted((s.port, s.value) for s in snap) == [("p1", 1), ("p2", 5)] and snap.ts == 1.0


def test_a_snapshot_crosses_processes_whole() -> None:
    """Worker processes send their snapshot pickled by columns: every field, sample order, sample type,
    an empty device and the per-source times come back as they were."""
    snap = Snapshot(ts=12.5, uptime={"leaf1": 4200}, device_ts={"leaf1": 12.6},
                    metric_ts={("leaf1", "ecn_marked"): 13.1})
    snap.add(Sample("leaf1", "swp1", "ecn_marked", labels(tc=3), 2**64 - 1, "counter64"))
    snap.add(Sample("leaf1", None, "sm_state", (), "master", "state"))
    snap.add(Sample("leaf1", "swp2", "queue_watermark_bytes", labels(tc=3), 0, "gauge"))
    snap.samples["leaf2"] = []
    snap.error("leaf3", "ssh: timed out")
    back = pickle.loads(pickle.dumps(snap))
    assert back == snap
    assert [type(s) for s in back] == [Sample] * 3
    assert back.samples["leaf1"][0].labels == (("tc", "3"),) and back.samples["leaf2"] == []


def test_equal_label_sets_are_one_object() -> None:
    assert labels(prio=3) is labels(prio="3") == (("prio", "3"),)
    assert labels(b=1, a="x") == (("a", "x"), ("b", "1"))
    assert labels(tc=True) == (("tc", "True"),)  # True is not 1 here
