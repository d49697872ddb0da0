"""EOS oracle: Arista's own generator (pyavd ``eos_cli_config_gen``) renders the same intent.

For every EOS switch (the lab inventory, a generated fabric and variants for each watchdog action, lossy
mode, ECN off and a ``tx-queue`` ASIC) the test builds the AVD *structured config* from the inventory
(not from our render context), has pyavd validate it against AVD's schema and render EOS CLI, and
requires our rendered lines to equal pyavd's, modulo order and whitespace. Every intended difference is
a row of ``INTENDED`` with its reason; a row no device needs fails the test, so the table stays true.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pyavd
import pytest
from render_helpers import by_platform, fabric_from, rendered_examples

from fabriccfg.inventory.derive import effective_switch_qos, roce_intent
from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import loads
from fabriccfg.inventory.models import Fabric, Switch
from fabriccfg.render.engine import render_fabric

EOS_MAX_MTU = 9214
"""Arista's own examples use 9214 (roce.md §7.4); AVD accepts up to 65535, the intent caps it here."""
UC_QUEUE_ASICS = ("tomahawk", "trident")
"""Broadcom XGS ASICs have separate unicast/multicast queues: AVD ``uc_tx_queues`` (roce.md §4)."""
WD_ACTION = {"drop": ("drop", None), "alert": (None, "notify-only"), "forward": (None, "notify-only")}
"""Intent action -> (AVD ``priority_flow_control.watchdog.action``, qos-profile watchdog ``action``).

AVD's schema allows ``drop | errdisable | notify-only`` globally and ``drop | notify-only`` per port:
EOS has no 'forward' (ignore pause, keep sending); the nearest safe choice is to report and not
errdisable (EOS's default action), so forward renders as notify-only with a WARNING comment."""


@dataclass(frozen=True)
class Intended:
    pattern: str
    side: str  # "ours": only in our output; "avd": only in pyavd's
    reason: str


INTENDED: tuple[Intended, ...] = (
    Intended(r"^interface \S+ / service-profile ", "avd",
             "AVD puts per-port PFC watchdog and tx-queue settings in a 'qos profile' applied with "
             "'service-profile'; we write the same interface-mode lines on each interface (the test "
             "inlines the profile's body, so only the service-profile line itself differs)"),
)


def _port_peers(fabric: Fabric, switch: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for link in fabric.links:
        (a, ap), (b, bp) = link.ends
        if a == switch:
            out[ap] = f"{b}:{bp}"
        elif b == switch:
            out[bp] = f"{a}:{ap}"
    return out


def structured_config(fabric: Fabric, sw: Switch) -> dict[str, Any]:
    """The AVD ``eos_cli_config_gen`` structured config for the switch's RoCE intent."""
    roce = roce_intent(fabric)
    q = effective_switch_qos(fabric, sw)
    wd = roce.pfc_watchdog
    wd_on = wd.enabled and q.pfc_enabled
    global_action, port_action = WD_ACTION[wd.action]
    uc = (sw.asic or "").lower().startswith(UC_QUEUE_ASICS)
    lossy_tc = 0
    queues: list[dict[str, Any]] = [
        {"id": lossy_tc, "priority": "no priority", "bandwidth_percent": 100 - roce.roce_bandwidth_percent},
        {"id": q.roce_priority, "priority": "no priority", "bandwidth_percent": roce.roce_bandwidth_percent},
    ]
    if q.ecn_enabled:
        queues[1]["random_detect"] = {"ecn": {"threshold": {
            "units": "bytes", "min": roce.ecn.kmin_bytes, "max": roce.ecn.kmax_bytes,
            "max_probability": roce.ecn.pmax_percent, "weight": 0}}}
    profile: dict[str, Any] = {"name": "ROCE", ("uc_tx_queues" if uc else "tx_queues"): queues}
    if wd_on:
        profile["priority_flow_control"] = {"watchdog": {"enabled": True, **(
            {"action": port_action} if port_action else {})}}
    interfaces = []
    for port, peer in _port_peers(fabric, sw.name).items():
        iface: dict[str, Any] = {"name": port, "description": peer, "mtu": min(q.mtu, EOS_MAX_MTU),
                                 "qos": {"trust": "dscp"}, "service_profile": "ROCE"}
        if q.ecn_enabled:  # the ECN-marked counter EOS reports only when enabled (AVD: interface-level only)
            iface["uc_tx_queues" if uc else "tx_queues"] = [
                {"id": q.roce_priority, "random_detect": {"ecn": {"count": True}}}]
        if q.pfc_enabled:
            iface["priority_flow_control"] = {"enabled": True,
                                              "priorities": [{"priority": q.roce_priority, "no_drop": True}]}
        interfaces.append(iface)
    sc: dict[str, Any] = {
        "qos": {"map": {"dscp": [f"{q.roce_dscp} to traffic-class {q.roce_priority}",
                                 f"{q.cnp_dscp} to traffic-class {q.cnp_priority}"]}},
        "ethernet_interfaces": interfaces,
        "qos_profiles": [profile],
    }
    if wd_on:
        sc["priority_flow_control"] = {"watchdog": {
            "timeout": wd.detection_ms / 1000, "polling_interval": wd.poll_ms / 1000,
            "recovery_time": wd.restoration_ms / 1000}}
        if global_action:
            sc["priority_flow_control"]["watchdog"]["action"] = global_action
    return sc


def avd_render(sc: dict[str, Any]) -> str:
    result = pyavd.validate_structured_config(sc)
    violations = [f"{'.'.join(map(str, v.path))}: {v.message}" for v in result.validation_result.violations]
    assert not violations, f"AVD's schema rejects the structured config: {violations}"
    return str(pyavd.get_device_config(result.validated_data))


def lines(text: str) -> set[str]:
    """EOS CLI -> a set of 'parent / child / grandchild' paths (comments and '!' dropped).

    ``qos profile NAME`` bodies are inlined into every interface whose ``service-profile`` names them."""
    out: set[str] = set()
    profiles: dict[str, list[str]] = {}
    uses: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for raw in text.splitlines():
        body = raw.strip()
        if not body or body.startswith("!") or body == "end":
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        path = " / ".join([s for _, s in stack] + [re.sub(r"\s+", " ", body)])
        stack.append((indent, body))
        top = stack[0][1]
        if top.startswith("qos profile ") and len(stack) > 1:
            profiles.setdefault(top.removeprefix("qos profile "), []).append(path.split(" / ", 1)[1])
            continue
        if top.startswith("qos profile "):
            continue
        if len(stack) == 2 and top.startswith("interface ") and body.startswith("service-profile "):
            uses[top] = body.removeprefix("service-profile ")
        out.add(path)
    for iface, name in uses.items():
        out.update(f"{iface} / {sub}" for sub in profiles.get(name, []))
    return out


def _gen_fabric() -> Fabric:
    data = generate(64, "roce", gpus_per_node=8, rails=2, platform="eos")
    result = loads(dump_yaml(data), "gen-eos.yaml")
    assert result.fabric is not None, [f.format() for f in result.findings]
    return result.fabric


def _cases() -> list[tuple[str, Fabric, str]]:
    lab = "roce-lab"
    wd = "enabled: true, detection_ms: 200, restoration_ms: 400, poll_ms: 100, action: drop"
    variants = {
        "lab": fabric_from(lab),
        "wd-alert": fabric_from(lab, (wd, wd.replace("drop", "alert"))),
        "wd-forward": fabric_from(lab, (wd, wd.replace("drop", "forward").replace("200", "350"))),
        "wd-off": fabric_from(lab, (wd, wd.replace("enabled: true", "enabled: false"))),
        "lossy": fabric_from(lab, ("host_mtu: 4200", "host_mtu: 4200\n  mode: lossy")),
        "ecn-off-tx-queue": fabric_from(
            lab, ("platform: eos, model: 7060X5-64, asic: tomahawk-4",
                  "platform: eos, model: 7800R3, asic: jericho2, qos: {ecn_enabled: false}")),
        "gen": _gen_fabric(),
    }
    out = []
    for label, fabric in variants.items():
        for dev in render_fabric(fabric):
            if dev.platform == "eos":
                out.append((f"{label}/{dev.name}", fabric, dev.files["config.txt"]))
    assert out and len(by_platform(rendered_examples(), "eos")) >= 1
    return out


CASES = _cases()


@pytest.mark.parametrize(("name", "fabric", "ours"), CASES, ids=[c[0] for c in CASES])
def test_oracle_eos_pyavd(name: str, fabric: Fabric, ours: str) -> None:
    sw = next(s for s in fabric.switches if s.name == name.split("/", 1)[1])
    theirs = avd_render(structured_config(fabric, sw))
    mine, avd = lines(ours), lines(theirs)
    unexplained = [f"only in {side}: {line}"
                   for side, extra in (("ours", mine - avd), ("avd", avd - mine)) for line in sorted(extra)
                   if not any(r.side == side and re.search(r.pattern, line) for r in INTENDED)]
    assert not unexplained, f"{name}: our EOS lines differ from pyavd's:\n" + "\n".join(unexplained)


def test_oracle_eos_intended_differences_are_all_needed() -> None:
    """Each INTENDED row explains a difference on at least one case (no stale excuses)."""
    needed: set[Intended] = set()
    for name, fabric, ours in CASES:
        sw = next(s for s in fabric.switches if s.name == name.split("/", 1)[1])
        mine, avd = lines(ours), lines(avd_render(structured_config(fabric, sw)))
        for side, extra in (("ours", mine - avd), ("avd", avd - mine)):
            needed.update(r for r in INTENDED for line in extra
                          if r.side == side and re.search(r.pattern, line))
    assert needed == set(INTENDED), {r.pattern for r in set(INTENDED) - needed}


def test_oracle_eos_catches_a_wrong_line() -> None:
    """The comparison can fail: a unit change on the ECN line is seen as a difference."""
    name, fabric, ours = CASES[0]
    sw = next(s for s in fabric.switches if s.name == name.split("/", 1)[1])
    broken = ours.replace(" bytes maximum-threshold", " kbytes maximum-threshold", 1)
    assert broken != ours
    assert lines(broken) != lines(avd_render(structured_config(fabric, sw)))
