"""Each fabric-wide rule fires on a minimal mutation of a valid fabric, at the right place."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from fabriccfg.inventory.rules import RULES, load_families

from .conftest import IB, ROCE, dump, load_data, only, rules_of

Mut = Callable[[dict[str, Any]], None]


def _set(path: tuple[Any, ...], value: Any) -> Mut:
    def mut(d: dict[str, Any]) -> None:
        cur = d
        for p in path[:-1]:
            cur = cur.setdefault(p, {}) if isinstance(cur, dict) else cur[p]
        cur[path[-1]] = value

    return mut


def _do(*muts: Mut) -> Mut:
    def mut(d: dict[str, Any]) -> None:
        for m in muts:
            m(d)

    return mut


def _append(section: str, item: Any) -> Mut:
    return lambda d: d.setdefault(section, []).append(item)


def _nic_qos(**qos: Any) -> Mut:
    return _set(("hosts", 1, "nics", 0, "qos"), qos)


def _switch_qos(**qos: Any) -> Mut:
    return _set(("switches", 0, "qos"), qos)


# (base, mutation, rule id, severity)
CASES: list[tuple[str, dict[str, Any], Mut, str, str]] = [
    (
        "dup-switch",
        ROCE,
        _append(
            "switches",
            {"name": "leaf1", "platform": "nxos", "role": "leaf", "ports": 32, "mgmt": "192.0.2.99"},
        ),
        "unique-names",
        "error",
    ),
    (
        "dup-nic",
        ROCE,
        lambda d: d["hosts"][0]["nics"].append({"name": "mlx5_0", "rail": 2}),
        "unique-names",
        "error",
    ),
    ("dup-addr", ROCE, _set(("hosts", 1, "mgmt"), "192.0.2.101"), "unique-address", "error"),
    ("dup-guid", IB, _set(("switches", 1, "guid"), "0xb8599f0300fc0001"), "unique-guid", "error"),
    (
        "dangling",
        ROCE,
        _append("links", {"a": "gpu3:mlx5_0", "b": "leaf1:swp5"}),
        "dangling-link-end",
        "error",
    ),
    (
        "reused",
        ROCE,
        _append("links", {"a": "leaf1:swp1", "b": "spine1:Ethernet9/1", "length_m": 5}),
        "port-reused",
        "error",
    ),
    (
        "reused-netdev",
        ROCE,
        _append("links", {"a": "gpu1:ens1f0np0", "b": "leaf1:swp9", "length_m": 5}),
        "port-reused",
        "error",
    ),
    ("unknown-switch-port", ROCE, _set(("links", 0, "b"), "leaf1:swp99"), "unknown-port", "error"),
    ("unknown-nic", ROCE, _set(("links", 0, "a"), "gpu1:mlx5_7"), "unknown-port", "error"),
    ("split-parent", IB, _do(_set(("switches", 0, "breakouts"), {"1/1": "2x100G"})), "unknown-port", "error"),
    ("speed", ROCE, _set(("hosts", 0, "nics", 0, "speed"), "200G"), "speed-mismatch", "error"),
    ("link-speed", ROCE, _set(("links", 0, "speed"), "100G"), "speed-mismatch", "error"),
    (
        "breakout-mode",
        ROCE,
        _set(("switches", 0, "breakouts"), {"swp5": "3x133G"}),
        "breakout-invalid",
        "error",
    ),
    (
        "breakout-port",
        ROCE,
        _set(("switches", 0, "breakouts"), {"swp99": "4x100G"}),
        "breakout-invalid",
        "error",
    ),
    ("rail", ROCE, _do(_set(("links", 0, "b"), "leaf2:Ethernet16")), "rail-mismatch", "error"),
    ("oversub", ROCE, lambda d: d["links"].pop(), "leaf-oversubscription", "warning"),
    ("lossless-switch-dscp", ROCE, _switch_qos(roce_dscp=24), "lossless-mismatch", "error"),
    ("lossless-switch-pfc", ROCE, _switch_qos(pfc_enabled=False), "lossless-mismatch", "error"),
    ("lossless-nic-prio", ROCE, _nic_qos(pfc_priorities=[4]), "lossless-mismatch", "error"),
    ("lossless-nic-trust", ROCE, _nic_qos(trust="pcp"), "lossless-mismatch", "error"),
    ("cnp-nic", ROCE, _nic_qos(cnp_dscp=46), "cnp-mismatch", "error"),
    ("cnp-switch", ROCE, _switch_qos(cnp_priority=7), "cnp-mismatch", "error"),
    ("cnp-same-prio", ROCE, _set(("roce", "cnp_priority"), 3), "cnp-mismatch", "error"),
    ("ecn-off", ROCE, _switch_qos(ecn_enabled=False), "ecn-disabled", "error"),
    ("ecn-kmin", ROCE, _set(("roce", "ecn", "kmin_bytes"), 2_000_000), "ecn-thresholds", "error"),
    ("ecn-pmax", ROCE, _set(("roce", "ecn", "pmax_percent"), 0), "ecn-probability", "error"),
    ("ecn-pmax-high", ROCE, _set(("roce", "ecn", "pmax_percent"), 150), "ecn-probability", "error"),
    ("ecn-buffer", ROCE, _do(_set(("roce", "ecn", "kmax_bytes"), 200_000_000)), "ecn-buffer", "error"),
    ("headroom", ROCE, _set(("links", 4, "length_m"), 2000), "pfc-headroom", "error"),
    (
        "headroom-budget",
        ROCE,
        _set(("roce", "buffer"), {"headroom_budget_bytes": 100_000}),
        "pfc-headroom",
        "error",
    ),
    ("no-length", ROCE, lambda d: d["links"][0].pop("length_m"), "cable-length-missing", "warning"),
    ("host-mtu", ROCE, _set(("roce", "host_mtu"), 1500), "host-mtu", "error"),
    ("nic-mtu", ROCE, _nic_qos(mtu=1500), "host-mtu", "error"),
    ("switch-mtu", ROCE, _do(_set(("roce", "host_mtu"), 9216)), "switch-mtu", "error"),
    ("sm-tie", IB, _set(("ib", "subnet_managers", 1, "priority"), 15), "sm-master", "error"),
    (
        "sm-none",
        IB,
        _do(_set(("ib", "subnet_managers"), []), _set(("ib", "sharp"), {"enabled": False})),
        "sm-master",
        "error",
    ),
    ("sm-one", IB, lambda d: d["ib"]["subnet_managers"].pop(), "sm-standby", "warning"),
    ("sm-on-unmanaged", IB, _set(("ib", "subnet_managers", 1, "device"), "leaf1"), "sm-device", "error"),
    ("sm-missing", IB, _set(("ib", "subnet_managers", 1, "device"), "sm3"), "sm-device", "error"),
    (
        "sharp-embedded",
        IB,
        _do(
            _set(("switches", 2, "platform"), "mlnxos-ib"),
            _set(("switches", 2, "mgmt"), "198.51.100.50"),
            _set(("ib", "subnet_managers", 1, "device"), "spine1"),
        ),
        "sharp-needs-host-sm",
        "error",
    ),
    ("sharp-upstream", IB, _set(("ib", "opensm_flavour"), "upstream"), "sharp-needs-mlnx", "error"),
    ("sharp-engine", IB, _set(("ib", "routing_engines"), ["minhop"]), "sharp-routing-engine", "error"),
    (
        "sharp-ipoib",
        IB,
        lambda d: d["ib"]["partitions"].append(
            {
                "name": "Default",
                "pkey": "0x7fff",
                "ipoib": False,
                "members": [{"device": "ALL", "membership": "full"}],
            }
        ),
        "sharp-ipoib",
        "error",
    ),
    ("sharp-am", IB, _set(("ib", "sharp", "am_host"), "gpu1"), "sharp-am-host", "error"),
    ("sharp-am-none", IB, _set(("ib", "sharp", "am_host"), None), "sharp-am-host", "error"),
    (
        "ar-upstream",
        IB,
        _do(
            _set(("ib", "sharp", "enabled"), False),
            _set(("ib", "opensm_flavour"), "upstream"),
            _set(("ib", "routing_engines"), ["ar_updn"]),
        ),
        "ar-needs-mlnx",
        "error",
    ),
    ("engine-typo", IB, _set(("ib", "routing_engines"), ["ftre"]), "routing-engine-unknown", "warning"),
    ("lmc", IB, _set(("ib", "lmc"), 1), "lmc-ftree", "error"),
    (
        "default-limited",
        IB,
        lambda d: d["ib"]["partitions"].append(
            {
                "name": "Default",
                "pkey": "0x7fff",
                "ipoib": True,
                "members": [{"device": "ALL", "membership": "limited"}],
            }
        ),
        "partition-default",
        "error",
    ),
    (
        "default-misnamed",
        IB,
        lambda d: d["ib"]["partitions"].append(
            {"name": "everyone", "pkey": "0x7fff", "ipoib": True, "members": [{"device": "ALL"}]}
        ),
        "partition-default",
        "error",
    ),
    (
        "pkey-dup",
        IB,
        lambda d: d["ib"]["partitions"].append(
            {"name": "storage", "pkey": 257, "members": [{"device": "ALL_CAS"}]}
        ),
        "partition-pkey-unique",
        "error",
    ),
    (
        "member",
        IB,
        _set(("ib", "partitions", 0, "members", 0, "device"), "gpu9"),
        "partition-member",
        "error",
    ),
    ("unmanaged-mgmt", IB, _set(("switches", 0, "mgmt"), "198.51.100.40"), "unmanaged-push", "warning"),
    ("tech", IB, _set(("switches", 0, "platform"), "sonic"), "platform-technology", "error"),
    (
        "tech-sm-host",
        ROCE,
        _append("management_hosts", {"name": "sm1", "mgmt": "192.0.2.200", "port_guid": "0x01"}),
        "platform-technology",
        "error",
    ),
    ("needs-mgmt", ROCE, lambda d: d["switches"][0].pop("mgmt"), "needs-mgmt", "error"),
    ("creds", ROCE, _set(("credentials", "ssh"), {"username": "admin"}), "credentials-missing", "warning"),
]


def test_baselines_are_clean() -> None:
    for base in (ROCE, IB):
        result = load_data(base)
        assert result.ok and not result.findings, [f.format() for f in result.findings]


@pytest.mark.parametrize(("name", "base", "mutate", "rule", "severity"), CASES, ids=[c[0] for c in CASES])
def test_rule_fires(name: str, base: dict[str, Any], mutate: Mut, rule: str, severity: str) -> None:
    import copy

    data = copy.deepcopy(base)
    mutate(data)
    result = load_data(data, f"{name}.yaml")
    hits = only(result, rule)
    assert hits, f"{rule} did not fire; got {[f.format() for f in result.findings]}"
    assert all(f.severity == severity for f in hits)
    assert all(f.line >= 1 and f.col >= 1 for f in hits)
    assert result.ok == (severity == "warning" and not rules_of(result, "error"))


def test_every_rule_has_a_case() -> None:
    load_families()
    covered = {c[3] for c in CASES}
    assert set(RULES) - covered == set()


def test_finding_points_at_the_offending_line() -> None:
    import copy

    data = copy.deepcopy(ROCE)
    data["hosts"][1]["nics"][0]["qos"] = {"pfc_priorities": [4]}
    result = load_data(data)
    (hit,) = only(result, "lossless-mismatch")
    text = dump(data).splitlines()
    assert "pfc_priorities" in text[hit.line - 1]
    assert "gpu2:mlx5_0" in hit.message


def test_sm_tie_names_the_lower_guid() -> None:
    import copy

    data = copy.deepcopy(IB)
    data["ib"]["subnet_managers"][1]["priority"] = 15
    (hit,) = only(load_data(data), "sm-master")
    assert "sm1" in hit.message and "0x1070fd0300aa0001" in hit.message


def test_oversubscription_reports_ratio() -> None:
    import copy

    data = copy.deepcopy(ROCE)
    data["links"].pop()
    (hit,) = only(load_data(data), "leaf-oversubscription")
    assert "2.00:1" in hit.message and "leaf2" in hit.message


def test_lossy_mode_skips_pfc_rules() -> None:
    import copy

    data = copy.deepcopy(ROCE)
    data["roce"]["mode"] = "lossy"
    data["links"][0].pop("length_m")
    data["hosts"][0]["nics"][0]["qos"] = {"pfc_priorities": []}
    result = load_data(data)
    assert not rules_of(result) & {"lossless-mismatch", "cable-length-missing", "pfc-headroom"}


def test_profile_positions_blame_the_profile_line() -> None:
    import copy

    data = copy.deepcopy(ROCE)
    data["profiles"]["leaf"]["asic"] = "spectrum"  # 16 MB: kmax 20 MB does not fit
    data["roce"]["ecn"]["kmax_bytes"] = 20_000_000
    result = load_data(data)
    assert only(result, "ecn-buffer")


def test_profile_setting_breaking_a_rule_is_reported_once() -> None:
    import copy

    data = copy.deepcopy(ROCE)
    data["profiles"]["leaf"]["qos"] = {"ecn_enabled": False}
    hits = only(load_data(data), "ecn-disabled")
    assert len(hits) == 1 and "1 more devices using the same profile" in hits[0].message
