"""CLI smoke tests for ``fabriccfg advise``: table, json, explain, sweep, telemetry, errors, plot."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import Result

from fabriccfg.advise import model as m
from fabriccfg.advise import sources as src

BASE = ("--params", "100e9", "--tokens", "2e12", "--gpu", "h100")

Cli = Callable[..., Result]


def test_table(cli: Cli) -> None:
    r = cli("--gpus", "1024", *BASE, "--tp", "8", "--pp", "8")
    assert r.exit_code == 0, r.output
    for word in ("ib-hdr-sharp", "roce-400g", "ib-hdr", "compute", "straggler", "MFU", "recommendation:"):
        assert word in r.stdout
    assert "Traceback" not in r.output


def test_json_is_one_document(cli: Cli) -> None:
    r = cli("--gpus", "512", *BASE, "--format", "json", "--fabrics", "ib-hdr-sharp,roce-400g")
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert [e["fabric"] for e in doc["estimates"]] == ["ib-hdr-sharp", "roce-400g"]
    e = doc["estimates"][0]
    for key in ("compute", "exposed_comm", "straggler", "step", "mfu", "days", "cost"):
        assert isinstance(e[key], float)
    assert doc["recommendation"]["winner"] in ("ib-hdr-sharp", "roce-400g")
    assert doc["recommendation"]["reasons"]
    assert doc["shape"]["layers"] == 80


def test_quantity_suffixes(cli: Cli) -> None:
    a = json.loads(cli("--gpus", "512", "--params", "100B", "--tokens", "2T", "--format", "json").stdout)
    b = json.loads(cli("--gpus", "512", *BASE, "--format", "json").stdout)
    assert a["estimates"] == b["estimates"]


def test_explain_lists_sources(cli: Cli) -> None:
    r = cli("--gpus", "512", *BASE, "--explain")
    assert r.exit_code == 0, r.output
    assert "torchtitan" in r.stdout
    assert "calculon" in r.stdout
    assert "assumptions and sources" in r.stdout
    doc = json.loads(cli("--gpus", "512", *BASE, "--explain", "--format", "json").stdout)
    names = {(a["scope"], a["name"]) for a in doc["assumptions"]}
    assert ("gpu h100", "peak_bf16") in names
    assert ("fabric roce-400g", "jitter_cv") in names
    assert ("fabric ib-hdr-sharp", "sharp_traffic") in names
    assert all(a["source"] for a in doc["assumptions"])
    tags = {a["tag"] for a in doc["assumptions"] if a["scope"] != "formula"}
    assert {"V", "S", "A"} <= tags


def test_sweep_table_and_json(cli: Cli) -> None:
    r = cli(*BASE, "--sweep", "64,128,256,512,1024,4096")
    assert r.exit_code == 0, r.output
    assert "by scale band" in r.stdout
    for b in ("<=128", "128-512", "512+"):
        assert b in r.stdout
    doc = json.loads(cli(*BASE, "--sweep", "64,128,256,512,1024,4096", "--format", "json").stdout)
    assert [row["gpus"] for row in doc["sweep"]] == [64, 128, 256, 512, 1024, 4096]
    assert set(doc["bands"]) == {"<=128", "128-512", "512+"}
    # the same numbers as the library: computed, not written down
    rows = m.sweep(
        m.Workload(params=100e9, tokens=2e12, gpus=64),
        [src.FABRICS[n] for n in src.DEFAULT_FABRICS],
        [64, 128, 256, 512, 1024, 4096],
    )
    assert [row["winner"] for row in doc["sweep"]] == [r.winner for r in rows]


def test_sweep_reacts_to_set(cli: Cli) -> None:
    def winners(*extra: str) -> list[Any]:
        out = cli(*BASE, "--sweep", "512,1024,2048,4096", "--format", "json", *extra)
        assert out.exit_code == 0, out.output
        return [(r["winner"], round(r["margin"], 4)) for r in json.loads(out.stdout)["sweep"]]

    assert winners() != winners("--set", "roce.jitter_cv=0.05", "--set", "roce.ecmp_collision_p=0")


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--gpus", "1000", *BASE), "not divisible by tp*pp"),
        (("--gpus", "1024", *BASE[:4], "--gpu", "h10"), "did you mean 'h100'"),
        (("--gpus", "1024", *BASE, "--fabrics", "roce-400"), "did you mean 'roce-400g'"),
        (("--gpus", "1024", "--params", "lots", "--tokens", "2e12"), "not a number"),
        ((*BASE,), "--gpus is required"),
        ((*BASE, "--sweep", "64,100"), "not divisible"),
        (("--gpus", "1024", *BASE, "--format", "xml"), "--format"),
        (("--gpus", "1024", *BASE, "--set", "roce.bogus=1"), "unknown field"),
        (("--gpus", "1024", *BASE, "--port-cost", "roce-400g"), "--port-cost"),
        (("--gpus", "1024", *BASE, "--tp", "0"), "--tp and --pp"),
        ((*BASE, "--pp", "0", "--sweep", "64"), "--tp and --pp"),
        (("--gpus", "1024", *BASE, "--micro-batch", "0"), "--micro-batch"),
        (("--gpus", "1024", *BASE, "--seq-len", "0"), "--seq-len"),
        # 0 means automatic since issue 18 (interleaving by default); negative is still an error
        (("--gpus", "1024", *BASE, "--vpp", "-1"), "--vpp"),
        (("--gpus", "1024", *BASE, "--vpp", "20"), "cannot fill pp*vpp"),
        (("--gpus", "1024", *BASE, "--roce-tuning", "perfect"), "--roce-tuning"),
        (("--gpus", "1024", *BASE, "--recompute", "half"), "--recompute"),
        (("--gpus", "1024", *BASE, "--grad-bytes", "0"), "--grad-bytes"),
        (("--gpus", "1024", *BASE, "--global-batch", "0"), "--global-batch"),
        (("--gpus", "1024", *BASE, "--moe-experts", "-2"), "--moe-experts"),
        (("--gpus", "1024", *BASE, "--straggler", "sqrt"), "--straggler"),
        (("--gpus", "1024", *BASE, "--layers", "4"), "fewer than pp"),
        (("--gpus", "1024", *BASE, "--price", "-1"), "--price"),
        (("--gpus", "1024", *BASE, "--base-eff", "-0.5"), "--base-eff"),
        (("--gpus", "1024", *BASE, "--base-eff", "1.5"), "--base-eff"),
    ],
)
def test_bad_input_exit_2_without_traceback(cli: Cli, args: tuple[str, ...], needle: str) -> None:
    r = cli(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.stderr
    assert "Traceback" not in r.output
    assert r.stdout == ""


def test_from_telemetry_own_schema(cli: Cli, write_json: Callable[[str, Any], Path]) -> None:
    quiet = write_json(
        "t.json",
        {"source": "fabriccfg watch", "fabric": "roce-400g", "step_jitter_ms": {"mean": 0, "std": 1}},
    )
    noisy = write_json(
        "n.json",
        {
            "source": "fabriccfg watch",
            "fabric": "roce",
            "step_jitter_ms": {"mean": 20, "std": 80},
            "pause_fraction": 0.02,
        },
    )

    def roce(path: Path) -> dict[str, Any]:
        r = cli("--gpus", "1024", *BASE, "--format", "json", "--from-telemetry", str(path))
        assert r.exit_code == 0, r.output
        doc = json.loads(r.stdout)
        assert any("roce-400g" in note for note in doc["telemetry"])
        return next(e for e in doc["estimates"] if e["fabric"] == "roce-400g")

    q, n = roce(quiet), roce(noisy)
    assert n["straggler"] > q["straggler"]
    assert n["mfu"] < q["mfu"]
    assert q["sigma_rank"] == pytest.approx(0.001)


def test_from_telemetry_verify_output(cli: Cli, write_json: Callable[[str, Any], Path]) -> None:
    storm = write_json(
        "v.json",
        {
            "status": "CRITICAL",
            "findings": [
                {
                    "check": "pfc-pause-storm",
                    "severity": "critical",
                    "device": "leaf1",
                    "port": "swp3",
                    "priority": 3,
                    "value": 12000,
                    "threshold": 100,
                    "hint": "origin host07",
                },
            ],
        },
    )
    clean = write_json("ok.json", {"status": "OK", "findings": []})

    def run(path: Path) -> dict[str, Any]:
        r = cli("--gpus", "1024", *BASE, "--format", "json", "--from-telemetry", str(path))
        assert r.exit_code == 0, r.output
        return dict(json.loads(r.stdout))

    hit, ok = run(storm), run(clean)
    by = {e["fabric"]: e for e in hit["estimates"]}
    base = {e["fabric"]: e for e in ok["estimates"]}
    assert by["roce-400g"]["step"] > base["roce-400g"]["step"]
    assert by["ib-hdr-sharp"]["step"] == base["ib-hdr-sharp"]["step"]  # PFC findings map onto RoCE only
    assert any("pfc-pause-storm" in n for n in hit["telemetry"])


def test_from_telemetry_verify_uses_measured_pause_share(
    cli: Cli, write_json: Callable[[str, Any], Path]
) -> None:
    """verify's pfc-pause-storm value is the paused share of time; a bigger share costs more."""

    def roce_step(value: float) -> float:
        doc = {
            "status": "CRITICAL",
            "exit_code": 2,
            "findings": [
                {
                    "check": "pfc-pause-storm",
                    "severity": "critical",
                    "device": "leaf1",
                    "port": "swp3",
                    "priority": 3,
                    "value": value,
                    "threshold": "> 0.5",
                    "hint": "",
                    "message": "",
                },
                {"check": "sm-health", "severity": "unknown", "device": "sm1", "value": None},
            ],
            "checks": [],
        }
        path = write_json(f"v{value}.json", doc)
        r = cli("--gpus", "1024", *BASE, "--format", "json", "--from-telemetry", str(path))
        assert r.exit_code == 0, r.output
        out = json.loads(r.stdout)
        assert any("measured value" in n for n in out["telemetry"])
        return float(next(e["step"] for e in out["estimates"] if e["fabric"] == "roce-400g"))

    assert roce_step(0.6) > roce_step(0.3)


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "JSON object"),
        ('{"source": "x"}', "no measurement"),
        ('{"pause_fraction": 3}', "pause_fraction"),
    ],
)
def test_from_telemetry_bad_files(cli: Cli, tmp_path: Path, content: str, needle: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    r = cli("--gpus", "1024", *BASE, "--from-telemetry", str(path))
    assert r.exit_code == 2
    assert needle in r.stderr
    r = cli("--gpus", "1024", *BASE, "--from-telemetry", str(tmp_path / "missing.json"))
    assert r.exit_code == 2 and "cannot read" in r.stderr


def test_plot_without_matplotlib(cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    r = cli(*BASE, "--sweep", "64,512", "--plot", str(tmp_path / "p.png"))
    assert r.exit_code == 2
    assert "matplotlib" in r.stderr and "fabriccfg[plot]" in r.stderr
    assert r.stdout == ""  # checked before any work
    assert not (tmp_path / "p.png").exists()


def test_plot_with_matplotlib(cli: Cli, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="optional 'plot' extra not installed")
    out = tmp_path / "p.png"
    r = cli(*BASE, "--sweep", "64,512,4096", "--plot", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_from_telemetry_distribution(cli: Cli, write_json: Callable[[str, Any], Path]) -> None:
    def straggler(dist: str) -> float:
        path = write_json(f"{dist}.json", {"step_jitter_ms": {"mean": 10, "std": 10, "distribution": dist}})
        r = cli("--gpus", "1024", *BASE, "--format", "json", "--from-telemetry", str(path))
        assert r.exit_code == 0, r.output
        return float(json.loads(r.stdout)["estimates"][0]["straggler"])

    normal, expo, logn = straggler("normal"), straggler("exponential"), straggler("lognormal")
    assert normal == pytest.approx(0.010 + 0.010 * m.expected_max_normal(1024))
    assert expo == pytest.approx(0.010 * m.harmonic(1024))
    assert logn > normal
    bad = write_json("bad.json", {"step_jitter_ms": {"std": 1, "distribution": "pareto"}})
    r = cli("--gpus", "1024", *BASE, "--from-telemetry", str(bad))
    assert r.exit_code == 2 and "distribution" in r.stderr


DATA = Path(__file__).parent / "data"


def test_from_telemetry_real_verify_capture(cli: Cli) -> None:
    """A real `fabriccfg verify --format json` of the mock roce-lab with `pause-storm:gpu01`."""
    path = DATA / "verify-roce-lab-pause-storm.json"
    r = cli("--gpus", "1024", *BASE, "--format", "json", "--from-telemetry", str(path))
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    assert any("pfc-pause-storm (critical)" in n and "measured value" in n for n in doc["telemetry"])
    by = {e["fabric"]: e for e in doc["estimates"]}
    assert by["roce-400g"]["mfu"] < by["ib-hdr-sharp"]["mfu"] / 2  # a live storm stalls the RoCE fabric
    assert doc["recommendation"]["winner"] != "roce-400g"


def test_error_bars_in_table_and_json(cli: Cli) -> None:
    """Issue 18: every MFU, step time, days and cost carries the calibration spread."""
    from fabriccfg.advise import calibration as cal

    bar = cal.spread().pts
    r = cli("--gpus", "1024", *BASE)
    assert r.exit_code == 0, r.output
    assert f"±{bar:.1f} MFU pts" in r.stdout
    assert r.stdout.count(f"±{bar:.1f}") >= 4  # header + one MFU cell per fabric
    assert "decided by:" in r.stdout
    doc = json.loads(cli("--gpus", "1024", *BASE, "--format", "json").stdout)
    assert doc["calibration"]["spread_pts"] == bar
    assert doc["roce_tuning"] == "untuned"
    for e in doc["estimates"]:
        lo, hi = e["mfu_range"]
        assert lo == pytest.approx(e["mfu"] - bar / 100) and hi == pytest.approx(e["mfu"] + bar / 100)
        assert e["step_range"][0] < e["step"] < e["step_range"][1]
        assert e["cost_range"][0] < e["cost"] < e["cost_range"][1]
        assert e["days_range"][0] < e["days"] < e["days_range"][1]
    assert doc["recommendation"]["spread_pts"] == bar
    sweep = json.loads(cli(*BASE, "--sweep", "64,4096", "--format", "json").stdout)
    assert [row["tie"] for row in sweep["sweep"]] == [True, False]
    assert sweep["sweep"][1]["decided_by"].startswith("roce-tuning=untuned")
    assert sweep["sweep"][0]["decided_by"].startswith("robust")


def test_tie_when_gap_inside_spread(cli: Cli) -> None:
    from fabriccfg.advise import calibration as cal

    doc = json.loads(cli("--gpus", "1024", *BASE, "--format", "json").stdout)
    mfu = {e["fabric"]: e["mfu"] for e in doc["estimates"]}
    rec = doc["recommendation"]
    gap = abs(mfu[rec["winner"]] - mfu["roce-400g"]) * 100
    paired = cal.paired_spread().pts
    assert doc["calibration"]["paired_spread_pts"] == rec["paired_pts"] == paired
    assert doc["calibration"]["paired_spread_pts"] < doc["calibration"]["spread_pts"]
    assert gap <= paired
    assert "roce-400g" in rec["tie_with"] or rec["winner"] == "roce-400g"
    assert rec["reasons"][0].startswith("tie")
    assert f"± {paired:.1f} pts (paired)" in rec["reasons"][0]
    # the table prints the paired bar next to each sweep gap
    r = cli(*BASE, "--sweep", "1024,4096")
    assert r.exit_code == 0, r.output
    assert f"fabric differences: ±{paired:.1f} pts (paired" in r.stdout
    assert r.stdout.count(f"± {paired:.1f}") >= 2


def test_roce_tuning_changes_roce_only(cli: Cli) -> None:
    def run(*extra: str) -> dict[str, Any]:
        out = cli("--gpus", "4096", *BASE, "--format", "json", "--explain", *extra)
        assert out.exit_code == 0, out.output
        return dict(json.loads(out.stdout))

    untuned, tuned = run(), run("--roce-tuning", "tuned")
    mfu_u = {e["fabric"]: e["mfu"] for e in untuned["estimates"]}
    mfu_t = {e["fabric"]: e["mfu"] for e in tuned["estimates"]}
    assert mfu_t["roce-400g"] > mfu_u["roce-400g"]
    assert mfu_t["ib-hdr-sharp"] == mfu_u["ib-hdr-sharp"]
    assert untuned["recommendation"]["winner"] == "ib-hdr-sharp" and not untuned["recommendation"]["tie_with"]
    rec = tuned["recommendation"]
    assert "roce-400g" in rec["tie_with"] or rec["winner"] == "roce-400g"
    assert untuned["recommendation"]["decided_by"].startswith("roce-tuning=untuned")
    jit = {(a["scope"], a["name"]): a for a in tuned["assumptions"]}
    assert "Meta" in jit[("fabric roce-400g", "ecmp_collision_p")]["source"]
    # --set still wins over the tuning profile
    pinned = run("--roce-tuning", "tuned", "--set", "roce.jitter_cv=0.3")
    assert {e["fabric"]: e["mfu"] for e in pinned["estimates"]}["roce-400g"] < mfu_t["roce-400g"]


def test_explain_lists_calibration_spread(cli: Cli) -> None:
    from fabriccfg.advise import calibration as cal

    r = cli("--gpus", "512", *BASE, "--explain")
    assert r.exit_code == 0, r.output
    assert "calibration" in r.stdout and "llama3-405b-16k" in r.stdout
    doc = json.loads(cli("--gpus", "512", *BASE, "--explain", "--format", "json").stdout)
    rows = [a for a in doc["assumptions"] if a["scope"].startswith("calibration")]
    assert rows[0]["name"] == "spread" and rows[0]["value"] == cal.spread().pts
    assert rows[1]["name"] == "paired spread" and rows[1]["value"] == cal.paired_spread().pts
    pairs = [a for a in rows if a["scope"] == "calibration pair"]
    assert {a["name"] for a in pairs} == {p.name for p in cal.pairs()} and pairs
    runs = [a for a in rows[2:] if a["scope"] != "calibration pair"]
    assert {a["name"] for a in runs} == {e.id for e in cal.load()}
    assert all("Table" in a["source"] or "abstract" in a["source"] for a in runs)
