"""The watch exposition renderer prints exactly what prometheus_client's ``generate_latest`` prints for the
same families (the library is the judge), and keeps only the series the last round had."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fabriccfg.telemetry.model import Sample, labels
from fabriccfg.verify import exposition, watch
from fabriccfg.verify.output import Family, sample_families

from .synth import Synth
from .test_verify_watch import _collector


class _Fixed(watch.FabricCollector):
    """The production conversion to prometheus_client families, over given rows."""

    def __init__(self, fams: list[Family]) -> None:
        self.fams = fams

    def families(self) -> list[Family]:
        return self.fams


def _library(fams: list[Family]) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Fixed(fams))
    return generate_latest(reg)


def test_same_bytes_as_the_library_on_awkward_values() -> None:
    fams = [
        Family("fabriccfg_x_total", 'doc with \\ backslash,\nnewline and "quotes"', "counter",
               ["port", "device", "zz", "a"],
               [(["swp1", 'le"af\\1\n', "ünï", ""], 1.0), (["swp2", "leaf", "z", "a"], 2**64 - 1),
                (["swp3", "leaf", "z", "a"], 1234567.0)]),
        Family("fabriccfg_g", "gauge", "gauge", ["device"],
               [(["a"], math.inf), (["b"], -math.inf), (["c"], math.nan), (["d"], -0.5), (["e"], 1e-9),
                (["f"], 1e21), (["g"], 0.0)]),
        Family("fabriccfg_empty", "no rows", "gauge", ["device"], []),
        Family("fabriccfg_plain", "no labels", "gauge", [], [([], 3.0)]),
    ]
    r = exposition.Renderer()
    assert r.render(fams) == _library(fams)
    assert r.render(fams) == _library(fams)  # from the kept prefixes


def test_same_bytes_as_the_library_for_a_watch_round(roce, checks) -> None:
    synth = Synth(roce)
    synth.add_rate("leaf-r2", "Ethernet3/1", "tc_no_buffer_discard", 40, tc=3)
    w = watch.Watcher(roce, {n: None for n in roce.devices}, checks, _collector(synth))  # type: ignore[arg-type]
    w.run(0.01, rounds=2)
    w.close()
    fams = watch.FabricCollector(w).families()
    assert len(fams) > 20 and w.series == sum(len(f.rows) for f in fams) > 500
    body = w.exposition.body  # what the round published (second round: from kept prefixes)
    assert body == _library(fams)
    parsed = {f.name for f in text_string_to_metric_families(body.decode())}
    assert "fabriccfg_finding" in parsed


def test_prefixes_of_vanished_series_are_dropped() -> None:
    r = exposition.Renderer()
    r.render([Family("m", "d", "gauge", ["device"], [([f"d{i}"], 1.0) for i in range(100)])])
    assert len(r) == 100
    r.render([Family("m", "d", "gauge", ["device"], [(["d1"], 1.0)])])
    assert len(r) == 1


def test_series_written_from_samples_are_the_library_s_bytes() -> None:
    """``render_round`` writes the per-port series straight from the samples; the library, rendering the
    families ``sample_families`` makes of the same samples, is the judge (states, escaping, a label set
    that differs within a metric, a series given twice, priorities filtered, values that are dropped)."""
    samples = [
        Sample('le"af\\1', "swp1", "if_in_octets", (), 2**64 - 1, "counter64"),
        Sample("leaf2", None, "if_in_octets", (), 7, "counter64"),
        Sample("leaf2", "", "if_in_octets", (), 8, "counter64"),  # same series as the one above
        Sample("leaf2", "swp1", "pfc_rx_pause", labels(prio=3), 5, "counter64"),
        Sample("leaf2", "swp1", "pfc_rx_pause", labels(prio=4), 6, "counter64"),  # filtered by keep
        Sample("leaf2", "swp2", "pfc_rx_pause", (), 9, "counter64"),  # no prio: priority=""
        Sample("leaf2", "swp1", "oper_status", (), "up", "state"),
        Sample("leaf2", "swp2", "oper_status", (), 'd"own\n', "state"),
        Sample("leaf2", "swp1", "queue_watermark_bytes", labels(tc=3), 4096, "gauge"),
        Sample("leaf2", "swp1", "queue_watermark_bytes", labels(tc=0), "n/a", "gauge"),  # not a number
        Sample("leaf2", "swp1", "speed_mbps", (), True, "gauge"),  # a bool is no value
        Sample("leaf2", "swp1", "lldp_neighbor", (), "spine1 swp3", "info"),
        Sample("ünï", "swp\x001", "ecn_marked", labels(tc=3, queue="uc\x01"), 1234567, "counter64"),
    ]
    keep = {"leaf2": frozenset({"3"})}
    head = [Family("fabriccfg_watch_rounds_total", "rounds", "counter", [], [([], 2.0)])]
    tail = [Family("fabriccfg_check_state", "state", "gauge", ["check"], [(["x"], 1.0)])]
    for k in (keep, None):
        fams = head + sample_families(samples, k) + tail
        r = exposition.Renderer()
        body, n = r.render_round(head, samples, k, tail)
        assert body == _library(fams)
        assert n == sum(len(f.rows) for f in fams) and n > 8
        assert r.render_round(head, samples, k, tail)[0] == body  # again, from the kept prefixes
