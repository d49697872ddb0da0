"""advise --from-telemetry with probe JSON (issue 15 §3) and advise --inventory/--prices (BOM, capex)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import Result

from fabriccfg.advise import model as m
from fabriccfg.advise.bom import BomError, build, load_prices
from fabriccfg.inventory.load import load_fabric

ROOT = Path(__file__).resolve().parents[2]
ROCE_LAB = ROOT / "inventories" / "roce-lab.yaml"
BASE = (
    "--params",
    "100e9",
    "--tokens",
    "2e12",
    "--gpu",
    "h100",
    "--gpus",
    "1024",
    "--fabrics",
    "ib-hdr,roce-400g",
)
Cli = Callable[..., Result]
PRICES = """\
currency: USD
amortisation_years: 4
switches: {SN5600: 30000, 7060X5-64: 28000, N9364D-GX2A: 29000}
nic_port: 1500
dac: {400: 150}
transceiver: {400: 1000}
fiber_per_m: 2
"""


def probe_doc(p999: float, status: str = "OK") -> dict[str, object]:
    """A probe document as `fabriccfg probe --format json` writes it (only the fields advise reads)."""
    results = []
    for k, (kind, p50) in enumerate((("same-leaf", 1.8), ("same-leaf", 1.8), ("cross-rail", 2.9))):
        results.append(
            {
                "pair": f"p{k}",
                "kind": kind,
                "rail": k,
                "latency_us": {"typical": p50, "p999": p999 if k == 2 else p50 * 1.1},
                "busbw_gbytes": 44.0,
            }
        )
    return {
        "tool": "fabriccfg probe",
        "fabric": "lab",
        "technology": "roce",
        "status": status,
        "line_rate_gbytes": 50.0,
        "results": results,
        "probe_findings": [],
    }


def test_sigma_from_p50_and_p999():
    # Phi^-1(0.999) = 3.0902 (standard normal table): a p99.9 of e^3.0902 x p50 is sigma_ln 1
    assert m.probe_sigma_ln(1.0, math.exp(3.0902)) == pytest.approx(1.0, abs=1e-4)
    assert m.probe_sigma_ln(2.0, 2.0) == 0.0


def test_probe_values_replace_the_assumptions(tmp_path):
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(probe_doc(30.0)), encoding="utf-8")
    profiles = [m.fabric_profile("ib-hdr"), m.fabric_profile("roce-400g")]
    tel, notes = m.load_telemetry(path, profiles)
    assert set(tel) == {"roce-400g"}  # the probe measured a RoCE fabric: IB keeps its assumptions
    vals = tel["roce-400g"].fabric_values
    sigma = math.log(30.0 / 2.9) / 3.0902
    assert vals["jitter_cv"] == pytest.approx(math.sqrt(math.exp(sigma**2) - 1), rel=1e-3)
    assert vals["e2e_latency"] == 2.9  # the only pair that crosses a spine
    assert vals["wire_eff"] == pytest.approx(44.0 / 50.0)
    assert any("still assumed" in n for n in notes) and any("measured" in n for n in notes)


def test_cli_says_the_straggler_term_changed(cli: Cli, tmp_path):
    calm, storm = tmp_path / "calm.json", tmp_path / "storm.json"
    calm.write_text(json.dumps(probe_doc(3.0)), encoding="utf-8")
    storm.write_text(json.dumps(probe_doc(40.0, "CRITICAL")), encoding="utf-8")
    out = {}
    for name, path in (("calm", calm), ("storm", storm)):
        r = cli(*BASE, "--from-telemetry", str(path), "--format", "json")
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        line = next(n for n in doc["telemetry"] if n.startswith("roce-400g: straggler term"))
        assert "assumed inputs ->" in line and "measured" in line
        out[name] = {e["fabric"]: e for e in doc["estimates"]}
    assert out["storm"]["roce-400g"]["straggler"] > 5 * out["calm"]["roce-400g"]["straggler"]
    assert out["storm"]["ib-hdr"]["straggler"] == out["calm"]["ib-hdr"]["straggler"]
    assert out["storm"]["roce-400g"]["tail_source"].startswith("fabriccfg probe")


def test_probe_of_another_family_is_refused(cli: Cli, tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(probe_doc(3.0)), encoding="utf-8")
    r = cli(*BASE[:-1], "ib-hdr", "--from-telemetry", str(path))
    assert r.exit_code == 2 and "none of the compared fabrics" in r.output


def test_bom_of_the_roce_lab(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    bom = build(load_fabric(ROCE_LAB), load_prices(prices))
    # read off inventories/roce-lab.yaml: 4 SN5600, one 7060X5-64, one N9364D-GX2A; 32 host links of
    # 3 m (DAC: 400G host reach 3 m), 32 uplinks of 20 m (optics: 64 transceivers, 640 m of fibre)
    assert bom.switches == {"SN5600": 4, "7060X5-64": 1, "N9364D-GX2A": 1}
    assert (bom.nic_ports, bom.dac_links, bom.optical_links, bom.fiber_m) == (32, 32, 32, 640.0)
    assert bom.capex == 4 * 30000 + 28000 + 29000 + 32 * 1500 + 32 * 150 + 64 * 1000 + 640 * 2
    assert bom.per_nic_port_hour == pytest.approx(295080 / (4 * 8760) / 32)


def test_bom_errors_name_the_missing_price(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.replace("7060X5-64: 28000, ", ""), encoding="utf-8")
    with pytest.raises(BomError, match="no price for switch model '7060X5-64'"):
        build(load_fabric(ROCE_LAB), load_prices(prices))
    prices.write_text("currency: USD\nswitchs: {}\n", encoding="utf-8")
    with pytest.raises(BomError, match="unknown key"):
        load_prices(prices)
    prices.write_text("switches: [1,\n", encoding="utf-8")
    with pytest.raises(BomError, match=r"prices.yaml:\d+:\d+: not YAML"):
        load_prices(prices)


def test_cli_prints_bom_and_adds_capex(cli: Cli, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES, encoding="utf-8")
    r = cli(*BASE, "--inventory", str(ROCE_LAB), "--prices", str(prices))
    assert r.exit_code == 0, r.output
    assert "bill of materials: roce-lab" in r.stdout and "capex 295,080 USD" in r.stdout
    r = cli(*BASE, "--inventory", str(ROCE_LAB), "--prices", str(prices), "--format", "json")
    doc = json.loads(r.stdout)
    assert doc["bom"][0]["capex"] == 295080
    est = {e["fabric"]: e for e in doc["estimates"]}
    assert est["roce-400g"]["net_cost"] == pytest.approx(
        doc["bom"][0]["per_nic_port_hour"] * 1024 * est["roce-400g"]["days"] * 24, rel=1e-6
    )
    assert est["ib-hdr"]["net_cost"] is None  # no IB inventory given: no capex for it
    r = cli(*BASE, "--inventory", str(ROCE_LAB))
    assert r.exit_code == 2 and "--prices" in r.output
