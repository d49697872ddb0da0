"""Buffer watermarks (#15 §1) on EOS: LANZ (``show queue-monitor length``) carries the traffic model's
numbers faithfully, in bytes, as the contract metric ``queue_watermark_bytes{tc}``.

The judge is the traffic model (``TrafficModel.watermarks``), not the parser: what the mock switch was
told to have must come out of the collector's parse unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock import cli_telemetry as C
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.platforms.eos import parsers as eos
from fabriccfg.platforms.eos import telemetry as eos_telemetry
from fabriccfg.telemetry.model import METRICS

INV = Path(__file__).resolve().parents[2] / "inventories"
T0 = 1_750_000_000.0
LANZ = "show queue-monitor length limit 30 seconds | json"


def test_eos_collects_lanz_once_per_device() -> None:
    assert ("eos-lanz", LANZ, "device") in [(c.name, c.command, c.per) for c in eos_telemetry.TELEMETRY.cli]


def test_lanz_samples_are_the_model_watermarks_in_bytes() -> None:
    model = TrafficModel(load_fabric(INV / "roce-lab.yaml"), ["congestion:gpu01"], seed=1, t0=T0)
    t = T0 + 30
    text, rc = C.run(model, "leaf-r2", LANZ, t) or ("", 1)
    assert rc == 0
    got = {(s.port, s.label("tc")): s.value for s in eos.lanz_samples("leaf-r2", text)}
    want: dict[tuple[str, str], int] = {}
    for port in model.ports("leaf-r2"):
        for back in (0, 10, 20):  # the 30 s LANZ window
            for key, v in model.watermarks("leaf-r2", port, t - back).items():
                name, _, tc = key.partition(".")
                if name == "queue_watermark_bytes" and v > 0:
                    want[(port, tc)] = max(want.get((port, tc), 0), v)
    assert want and got == want
    kinds = {(s.metric, s.kind) for s in eos.lanz_samples("leaf-r2", text)}
    assert kinds == {("queue_watermark_bytes", "gauge")}
    assert METRICS["queue_watermark_bytes"][:2] == ("gauge", "bytes")


def test_lanz_units() -> None:
    """Sand reports bytes (the published capture); elsewhere segments x the reply's own segment size (our
    documented rule, UNVERIFIED); segments of unknown size give no value rather than a wrong one."""
    def reply(platform: str, seg: int | None) -> str:
        doc: dict[str, object] = {"platformName": platform, "entryList": [
            {"interface": "Ethernet1/1", "trafficClass": 3, "queueLength": 10, "entryType": "P"}]}
        if seg is not None:
            doc["bytesPerTxmpSegment"] = seg
        return json.dumps(doc)

    assert eos.parse_lanz(reply("Sand", 512)) == {"Ethernet1/1": {"3": 10}}
    assert eos.parse_lanz(reply("Strata", 208)) == {"Ethernet1/1": {"3": 2080}}
    assert eos.parse_lanz(reply("Strata", None)) == {}


def test_lanz_bad_input_is_one_line() -> None:
    assert eos.parse_lanz("% LANZ is not supported on this platform\n") == {}
    assert eos.parse_lanz('{"entryList": []}') == {}
    with pytest.raises(ValueError, match=r"^not EOS JSON \(line 1 col \d+: "):
        eos.parse_lanz('{"entryList": [')
    with pytest.raises(ValueError, match="without an 'entryList' list"):
        eos.parse_lanz('{"entryList": {}}')
    assert eos.parse_lanz('{"platformName": "Sand", "entryList": [{"interface": 1}, 7]}') == {}
