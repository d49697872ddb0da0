"""The runner's scheduling rules with a fake per-device work function (no network)."""

from __future__ import annotations

import threading
import time

from fabriccfg.push.device import DeviceJob, Progress, Watch
from fabriccfg.push.report import DeviceResult
from fabriccfg.push.runner import Runner, RunnerOptions, plan_batches


def jobs(n: int) -> list[DeviceJob]:
    return [DeviceJob(name=f"d{i}", platform="eos") for i in range(n)]


class Fake:
    """Work that fails listed devices, sleeps on slow ones and records start times."""

    def __init__(self, fail: set[str] = frozenset(), slow: dict[str, float] | None = None,  # type: ignore[assignment]
                 duration: float = 0.01) -> None:
        self.fail = set(fail)
        self.slow = slow or {}
        self.duration = duration
        self.started: dict[str, float] = {}
        self.lock = threading.Lock()
        self.t0 = time.monotonic()

    def __call__(self, job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
        with self.lock:
            self.started[job.name] = time.monotonic() - self.t0
        res = DeviceResult(job.name, job.platform)
        end = time.monotonic() + self.slow.get(job.name, self.duration)
        while time.monotonic() < end:
            if watch.handle.killed:
                res.state, res.reason = "failed", watch.reason
                return res
            time.sleep(0.005)
        res.state = "failed" if job.name in self.fail else "applied"
        return res


def states(outcome_results: list[DeviceResult]) -> dict[str, str]:
    return {r.name: r.state for r in outcome_results}


def test_plan_batches() -> None:
    names = [f"d{i}" for i in range(7)]
    assert plan_batches(names, None, None) == [names]
    assert plan_batches(names, 3, None) == [names[:3], names[3:6], names[6:]]
    assert plan_batches(names, None, 2) == [names[:2], names[2:]]
    assert plan_batches(names, 2, 1) == [names[:1], names[1:3], names[3:5], names[5:]]


def test_all_devices_run_and_results_keep_inventory_order() -> None:
    out = Runner(jobs(6), Fake(), RunnerOptions(workers=3)).run()
    assert [r.name for r in out.results] == [f"d{i}" for i in range(6)]
    assert set(states(out.results).values()) == {"applied"}
    assert not out.stopped


def test_failure_budget_stops_new_devices_and_reports_the_rest_skipped() -> None:
    fake = Fake(fail={"d0", "d1"})
    out = Runner(jobs(8), fake, RunnerOptions(workers=1, max_failures=1)).run()
    st = states(out.results)
    assert st["d0"] == st["d1"] == "failed"
    assert all(st[f"d{i}"] == "skipped" for i in range(2, 8))
    skipped = [r for r in out.results if r.state == "skipped"]
    assert all("failure budget" in r.reason for r in skipped)
    assert "failure budget" in out.stopped


def test_no_budget_means_every_device_is_tried() -> None:
    out = Runner(jobs(5), Fake(fail={"d0", "d2"}), RunnerOptions(workers=2)).run()
    st = states(out.results)
    assert [st[f"d{i}"] for i in range(5)] == ["failed", "applied", "failed", "applied", "applied"]


def test_canary_failure_stops_later_batches() -> None:
    out = Runner(jobs(6), Fake(fail={"d1"}), RunnerOptions(workers=4, canary=2, max_failures=10)).run()
    st = states(out.results)
    assert st["d0"] == "applied" and st["d1"] == "failed"
    assert all(st[f"d{i}"] == "skipped" for i in range(2, 6))
    assert "canary" in out.stopped


def test_batches_run_in_order_and_one_must_finish_before_the_next() -> None:
    fake = Fake(duration=0.05)
    out = Runner(jobs(6), fake, RunnerOptions(workers=6, batch=2)).run()
    assert set(states(out.results).values()) == {"applied"}
    # batch 2 started only after batch 1 finished (>= one device duration later)
    assert min(fake.started["d2"], fake.started["d3"]) >= max(fake.started["d0"], fake.started["d1"]) + 0.04


def test_failed_batch_stops_the_next_batch() -> None:
    out = Runner(jobs(6), Fake(fail={"d0"}), RunnerOptions(workers=2, batch=2)).run()
    st = states(out.results)
    assert st["d0"] == "failed" and st["d1"] == "applied"
    assert all(st[f"d{i}"] == "skipped" for i in range(2, 6))


def test_slow_device_times_out_without_delaying_the_others() -> None:
    fake = Fake(slow={"d0": 30.0}, duration=0.05)
    t0 = time.monotonic()
    out = Runner(jobs(5), fake, RunnerOptions(workers=2, timeout=0.5)).run()
    wall = time.monotonic() - t0
    st = states(out.results)
    assert st["d0"] == "failed" and "timed out" in out.results[0].reason
    assert all(st[f"d{i}"] == "applied" for i in range(1, 5))
    assert wall < 3.0
    # the other devices all started while d0 was still hanging (one worker kept busy by it)
    assert max(fake.started[f"d{i}"] for i in range(1, 5)) < 0.5


def test_a_worker_that_ignores_its_kill_is_abandoned() -> None:
    def stubborn(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
        time.sleep(8 if job.name == "d0" else 0.01)
        return DeviceResult(job.name, job.platform, state="applied")

    import fabriccfg.push.runner as runner_mod

    old = runner_mod.STOP_GRACE
    runner_mod.STOP_GRACE = 0.3
    try:
        t0 = time.monotonic()
        out = Runner(jobs(3), stubborn, RunnerOptions(workers=3, timeout=0.3)).run()
        assert time.monotonic() - t0 < 3
    finally:
        runner_mod.STOP_GRACE = old
    assert out.results[0].state == "failed" and "did not stop" in out.results[0].reason


def test_not_a_target_is_skipped_and_not_counted() -> None:
    js = [*jobs(2), DeviceJob(name="ib1", platform="unmanaged-ib", skip_reason="not a push target: no CLI")]
    out = Runner(js, Fake(), RunnerOptions()).run()
    ib = out.results[-1]
    assert ib.state == "skipped" and not ib.target and "no CLI" in ib.reason


def test_ctrl_c_stops_new_devices_and_lets_in_flight_ones_finish() -> None:
    import _thread

    d1_started = threading.Event()

    def work(job: DeviceJob, watch: Watch, progress: Progress, index: int) -> DeviceResult:
        if job.name == "d1":
            d1_started.set()
        if job.name == "d0":
            d1_started.wait(2)
            _thread.interrupt_main()  # what Ctrl-C does: KeyboardInterrupt in the main thread
        time.sleep(0.3)
        return DeviceResult(job.name, job.platform, state="applied")

    out = Runner(jobs(6), work, RunnerOptions(workers=2)).run()
    st = states(out.results)
    assert st["d0"] == "applied" and st["d1"] == "applied"  # in flight: finished
    assert all(st[f"d{i}"] == "skipped" for i in range(2, 6))
    assert all("interrupted" in r.reason for r in out.results[2:])
    assert out.interrupted


def test_nvue_undo_commands_reverse_an_applied_change() -> None:
    from fabriccfg.platforms.cumulus_nvue.transaction import undo_commands

    before = "nv set qos pfc a switch-priority 3\nnv set interface swp1 link mtu 1500\n"
    now = ("nv set qos pfc a switch-priority 3\nnv set interface swp1 link mtu 9216\n"
           "nv set qos roce mode lossless\n")
    assert undo_commands(before, now) == ["nv unset qos roce mode", "nv set interface swp1 link mtu 1500"]


def test_eos_session_table_parsing() -> None:
    from fabriccfg.platforms.eos.transaction import sessions

    table = """Maximum number of completed sessions: 1
Maximum number of pending sessions: 5

  Name              State                 User     Terminal
  ----------------- --------------------- -------- --------
* fc-abc-1          pending               admin
  fc-old-3          pendingCommitTimer    admin
"""
    assert sessions(table) == [("fc-abc-1", "pending"), ("fc-old-3", "pendingCommitTimer")]
