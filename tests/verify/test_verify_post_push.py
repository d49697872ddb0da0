"""`push --verify`: the post-push hook returns problems (-> rollback) only for critical findings on the
pushed device."""

from __future__ import annotations

from types import SimpleNamespace

from fabriccfg.verify import post_push

from .synth import Synth


def _collector(synth: Synth):
    clock = {"t": 0.0}

    def collect(fabric, targets):
        clock["t"] += 2.0
        return synth.snapshot(clock["t"])

    return collect


def test_critical_on_device_is_a_problem(roce, checks):
    synth = Synth(roce)
    synth.set_state("leaf-r1", "Ethernet224", "oper_status", "down")  # pushed device: critical
    synth.set_state("leaf-r0", "swp29", "speed_mbps", 200000)  # other device: ignored
    check = post_push.make_check(roce, checks, collector=_collector(synth), sleep=lambda s: None)
    problems = check(SimpleNamespace(name="leaf-r1", endpoint=None))
    assert len(problems) == 1
    assert problems[0].startswith("verify link-state-speed CRITICAL at leaf-r1:Ethernet224: ")
    assert problems[0].endswith(": down (critical: not up / not active / flapped)")
    assert check(SimpleNamespace(name="leaf-r0", endpoint=None)) == []


def test_push_verify_builds_a_check_for_one_run_and_registers_nothing(roce, checks) -> None:
    """The check is handed to one push (issue 13: no module-level hook list left to leak between runs)."""
    from fabriccfg.push import hooks

    check = post_push.make_check(roce, checks=checks)
    assert check.__name__ == "fabriccfg_verify"
    assert not hasattr(hooks, "post_push_checks")
