"""The watch exposition renderer prints exactly what prometheus_client's ``generate_latest`` prints for the
same families (the library is the judge), and keeps only the series the last round had."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from fabriccfg.verify import exposition, watch
from fabriccfg.verify.output import Family

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
