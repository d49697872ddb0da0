"""`fabriccfg storm --from-prometheus`: tracing over every shard's exported rates, across shard borders.

A congested spine (spine1, shard 0) pauses leaf-r1 (shard 2) without being paused itself. Shard 2 alone
stops at its border (it has no data for spine1) and reports no origin; the Prometheus-side tracer, given
both shards' series, names spine1's port, as an unsharded round does.
"""

from __future__ import annotations

import json
import urllib.parse

import pytest

from fabriccfg.telemetry.model import Rate, Sample, Snapshot, labels
from fabriccfg.verify import storm_prom
from fabriccfg.verify.model import Context, Point, _index
from fabriccfg.verify.runner import shard_of
from fabriccfg.verify.storm import pfc_storm_origin

# leaf-r1's uplinks to spine1 are paused at 90 % (duration 900,000 us/s); spine1's ports are not
PAUSED = {("leaf-r1", "Ethernet224"): 900_000.0, ("leaf-r1", "Ethernet192"): 880_000.0,
          ("spine1", "swp1"): 0.0, ("spine1", "swp2"): 0.0}
STEPS = (100.0, 101.0, 102.0)


def _answer(url: str) -> bytes:
    q = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
    assert url.startswith("http://prom.test/api/v1/query_range?")
    query = q["query"][0]
    result = []
    if query == "rate(fabriccfg_pfc_rx_pause_duration_seconds_total[20s])":  # exported in seconds
        result = [{"metric": {"device": d, "port": p, "priority": "3", "instance": "x"},
                   "values": [[t, str(v / 1e6)] for t in STEPS]} for (d, p), v in PAUSED.items()]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": result}}).encode()


@pytest.fixture
def origin_check(checks):
    return next(c for c in checks if c.id == "pfc-storm-origin")


def _context(roce, shard=None) -> Context:
    points = []
    for t in STEPS:
        snap = Snapshot(ts=t)
        rates = {}
        for (d, p), v in PAUSED.items():
            if shard is None or shard_of(d, shard[1]) == shard[0]:
                s = Sample(d, p, "pfc_rx_pause_duration", labels(prio=3), 0, "counter64")
                snap.add(s)
                rates[s.key] = Rate(v, "ok", interval_s=1.0)
        points.append(Point(snap, rates, _index(snap), 1.0))
    return Context(roce, [p.snapshot for p in points], points=points, options={"shard": shard})


def test_prometheus_trace_crosses_the_shard_border(roce, origin_check):
    assert (shard_of("spine1", 3), shard_of("leaf-r1", 3)) == (0, 2)
    unsharded = {(f.device, f.port) for f in pfc_storm_origin(origin_check, _context(roce))}
    assert unsharded == {("spine1", "swp2"), ("spine1", "swp8")}  # the spine ports facing the paused ones
    assert pfc_storm_origin(origin_check, _context(roce, (2, 3))) == []  # stops at its border
    got = storm_prom.trace(roce, origin_check, "http://prom.test", window=3, step=1, now=102.0,
                           fetch=_answer)
    assert {(f.device, f.port) for f in got} == unsharded
    assert {f.details["origin_kind"] for f in got} == {"switch"}


def test_prometheus_errors_are_one_line(roce, origin_check):
    def refuse(url: str) -> bytes:
        return b'{"status": "error", "error": "parse error: bad query"}'

    with pytest.raises(storm_prom.PrometheusError, match="query failed: parse error"):
        storm_prom.trace(roce, origin_check, "http://prom.test", fetch=refuse)
    with pytest.raises(storm_prom.PrometheusError, match="not JSON"):
        storm_prom.trace(roce, origin_check, "http://prom.test", fetch=lambda url: b"<html>")
