"""What a push run shows: devices that are never targets fold into one line; report.json keeps them all."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from rich.console import Console

from fabriccfg.inventory.models import Fabric
from fabriccfg.push import api
from fabriccfg.push.device import DeviceJob, Progress, Watch
from fabriccfg.push.display import PlainDisplay, RichDisplay, final_table, not_targets_line
from fabriccfg.push.report import DeviceResult, RunReport
from fabriccfg.push.runner import Runner, RunnerOptions


def never(name: str, platform: str, label: str) -> DeviceJob:
    return DeviceJob(name=name, platform=platform, skip_reason=f"not a push target: {label} (in full)",
                     skip_label=label)


def mixed_jobs() -> list[DeviceJob]:
    return [never("ib0", "unmanaged-ib", "no CLI"), DeviceJob(name="d0", platform="eos"),
            never("ib1", "unmanaged-ib", "no CLI"), never("gpu0", "connectx-host", "render nothing"),
            DeviceJob(name="d1", platform="eos"), never("ib2", "unmanaged-ib", "no CLI"),
            DeviceJob(name="d2", platform="eos")]


def work(fail: set[str]) -> Any:
    def run(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
        res = DeviceResult(job.name, job.platform)
        res.state, res.reason = ("failed", "boom") if job.name in fail else ("applied", "")
        return res
    return run


def test_plan_jobs_flags_devices_that_are_never_targets(ib8790: Fabric) -> None:
    jobs = {j.name: j for j in api.plan_jobs(ib8790, {}, list(ib8790.devices))}
    spine, gpu, sm = jobs["ib-spine1"], jobs["gpu01"], jobs["sm1"]
    assert not spine.target and spine.skip_reason.startswith("not a push target: ")
    assert spine.skip_label == "externally managed HDR switch, no CLI and no SNMP"
    assert not gpu.target and gpu.skip_reason == "renders no configuration (nothing to push)"
    assert gpu.skip_label == "render nothing"
    assert sm.target and not sm.skip_label and sm.fail_reason  # no endpoint: a target that fails
    line = not_targets_line(jobs.values())
    assert line == ("not push targets: 6 unmanaged-ib (externally managed HDR switch, no CLI and no SNMP), "
                    "8 connectx-host (render nothing)")


def test_plain_display_folds_non_targets_and_numbers_targets_only(tmp_path: Path) -> None:
    out = io.StringIO()
    opts = RunnerOptions(workers=1, max_failures=0)  # d0 fails: d1 and d2 are skipped, one by one
    outcome = Runner(mixed_jobs(), work({"d0"}), opts, PlainDisplay(out)).run()
    lines = out.getvalue().splitlines()
    assert lines[0] == "not push targets: 3 unmanaged-ib (no CLI), 1 connectx-host (render nothing)"
    device_lines = [ln for ln in lines if ln.startswith("[")]
    assert [ln.split()[:3] for ln in device_lines] == [["[1/3]", "d0", "failed"], ["[2/3]", "d1", "skipped"],
                                                       ["[3/3]", "d2", "skipped"]]
    assert "failure budget exceeded" in device_lines[1]
    assert not any(name in out.getvalue() for name in ("ib0", "ib1", "ib2", "gpu0"))
    # the report still lists every device, with its reason, exactly as before
    report = RunReport("push", "f", "", str(tmp_path), devices=outcome.results)
    doc = report.to_dict()
    assert [d["name"] for d in doc["devices"]] == [j.name for j in mixed_jobs()]
    ib0 = doc["devices"][0]
    assert ib0["state"] == "skipped" and ib0["target"] is False
    assert ib0["reason"] == "not a push target: no CLI (in full)"
    assert all("skip_label" not in d for d in doc["devices"])
    assert doc["summary"]["skipped"] == 2 and doc["summary"]["failed"] == 1


def test_plain_display_without_non_targets_has_no_summary_line() -> None:
    out = io.StringIO()
    Runner([DeviceJob(name="d0", platform="eos")], work(set()), RunnerOptions(), PlainDisplay(out)).run()
    assert out.getvalue().splitlines()[0].startswith("[1/1] d0")
    assert "not push targets" not in out.getvalue()


def test_rich_display_counts_targets_only() -> None:
    buf = io.StringIO()
    display = RichDisplay(Console(file=buf, width=200))
    Runner(mixed_jobs(), work(set()), RunnerOptions(), display).run()
    assert display.total == 3 and len(display.done_results) == 3
    text = buf.getvalue()
    assert text.count("not push targets: 3 unmanaged-ib (no CLI), 1 connectx-host (render nothing)") == 1
    assert "ib1" not in text


def test_final_table_lists_targets_and_one_line_for_the_rest(tmp_path: Path) -> None:
    outcome = Runner(mixed_jobs(), work(set()), RunnerOptions()).run()
    report = RunReport("push", "f", "", str(tmp_path), devices=outcome.results)
    buf = io.StringIO()
    final_table(report, Console(file=buf, width=150))
    text = buf.getvalue()
    assert all(f" {n} " in text for n in ("d0", "d1", "d2"))
    assert not any(n in text for n in ("ib0", "ib1", "ib2", "gpu0"))
    assert text.count("not push targets: 3 unmanaged-ib (no CLI), 1 connectx-host (render nothing)") == 1
    assert "3 applied in" in text


def test_demo_diff_listing_folds_non_targets(tmp_path: Path) -> None:
    from fabriccfg.commands.demo import Demo, _say_diff

    outcome = Runner(mixed_jobs(), work(set()), RunnerOptions()).run()
    for r in outcome.results:
        if r.target:
            r.state, r.changed = "unchanged", False
    report = RunReport("diff", "f", "", str(tmp_path), devices=outcome.results)
    buf = io.StringIO()
    assert _say_diff(Demo(console=Console(file=buf, width=150), workdir=tmp_path), report) == 0
    lines = buf.getvalue().splitlines()
    assert lines[0].strip() == "not push targets: 3 unmanaged-ib (no CLI), 1 connectx-host (render nothing)"
    assert [ln.split()[0] for ln in lines[1:]] == ["d0", "d1", "d2"]
