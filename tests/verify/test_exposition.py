"""The watch exposition renderer prints exactly what prometheus_client's ``generate_latest`` prints for the
same families (the library is the judge), and keeps only the series the last round had."""

from __future__ import annotations

import math
import random

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


def test_series_kept_between_rounds_are_the_library_s_bytes_every_round() -> None:
    """Round after round (the renderer keeps the prefixes of the families around the per-port series), the
    library judges each round over random changes: values that stay, change, stop being numbers (``"n/a"``,
    ``True``) or come back; states that flip; duplicate series; a label name that appears in one metric;
    ``keep`` switched; samples and family rows that come and go."""
    rng = random.Random(7)
    keeps: list[dict[str, frozenset[str]] | None] = [{"leaf1": frozenset({"3"})}, None]
    keep = keeps[0]
    values: list[object] = [0, 0, 1, 5, 2**64 - 1, 1234567, "n/a", True, False]
    pool = [
        *(Sample(f"leaf{d}", f"swp{p}", "if_in_octets", (), 0, "counter64")
          for d in (1, 2) for p in (1, 2, 3)),
        *(Sample("leaf1", "swp1", "pfc_rx_pause", labels(prio=i), 0, "counter64") for i in (3, 4)),
        Sample("leaf1", "swp1", "queue_watermark_bytes", labels(tc=3), 0, "gauge"),
        Sample("leaf1", "swp1", "oper_status", (), "up", "state"),
        Sample("leaf2", "swp2", "oper_status", (), "up", "state"),
        Sample("leaf2", None, "if_in_octets", (), 0, "counter64"),
        Sample("leaf2", "", "if_in_octets", (), 0, "counter64"),  # the same series as the one above
    ]
    extra = Sample("leaf1", "swp1", "ecn_marked", labels(tc=3, queue="uc"), 1, "counter64")
    plain = Sample("leaf1", "swp2", "ecn_marked", labels(tc=3), 1, "counter64")
    r = exposition.Renderer()
    for _ in range(300):
        rounds = float(rng.randint(0, 9))
        head = [Family("fabriccfg_watch_rounds_total", "rounds", "counter", [], [([], rounds)])]
        tail = [Family("fabriccfg_check_state", "state", "gauge", ["check", "state"],
                       [([c, st], 1.0) for c in ("a", 'b"', "c") if rng.random() < 0.7
                        for st in [rng.choice(["ok", "warning"])]])]
        samples = []
        for i, s in enumerate(pool):
            if s.kind == "state":
                value: object = rng.choice(["up", "up", "down", 'd"own'])
            else:
                value = s.value if rng.random() < 0.5 else rng.choice(values)
            pool[i] = s._replace(value=value)  # type: ignore[arg-type]
            if rng.random() < 0.9:
                samples.append(pool[i])
        samples += [plain] + ([extra] if rng.random() < 0.2 else [])
        if rng.random() < 0.1:
            keep = rng.choice(keeps)
        body, n = r.render_round(head, samples, keep, tail)
        fams = head + sample_families(samples, keep) + tail
        assert body == _library(fams)
        assert n == sum(len(f.rows) for f in fams)
