"""Cumulus NVUE mock (cumulus_linux): nv set/unset, diff, apply, commit-confirm, save_config."""

from __future__ import annotations

from mockssh_helpers import ROCE_LAB, mock_fixture, session, wait_for
from netmiko import ConnectHandler

mock = mock_fixture(ROCE_LAB)
DEV = "leaf-r0"

LINES = ["nv set interface swp1 link mtu 9216", "nv set interface swp1 qos pfc profile pfc-2m",
         "nv set qos mapping default-global trust l3",
         "nv set qos mapping default-global dscp 26 switch-priority 3",
         "nv set qos congestion-control default-global traffic-class 3 min-threshold 150000",
         "nv set qos pfc pfc-2m cable-length 2"]


def test_stock_connecthandler_config_set_and_save(mock):
    ep = mock.endpoints[DEV]
    conn = ConnectHandler(device_type="cumulus_linux", host=ep.host, port=ep.ssh_port, username=ep.username,
                          password=ep.password, secret=ep.password, ssh_strict=True, system_host_keys=False,
                          alt_host_keys=True, alt_key_file=ep.known_hosts, allow_agent=False)
    try:
        out = conn.send_config_set(LINES)  # netmiko enters 'sudo -s' first
        assert "Error" not in out
        diff = conn.send_command("nv config diff")
        assert all(line in diff for line in LINES)
        assert "applied [rev_id:" in conn.save_config()  # plain 'nv config apply'
        shown = conn.send_command("nv config show -o commands").splitlines()
        assert all(line in shown for line in LINES)
        assert conn.send_command("nv config diff").strip() == ""
        conn.send_command("nv set interface swp1 link mtu 9000")
        shown = conn.send_command("nv config show -o commands")
        assert "link mtu 9216" in shown  # staged only
        conn.send_command("nv config apply -y")
        shown = conn.send_command("nv config show -o commands")
        assert "link mtu 9000" in shown and "link mtu 9216" not in shown
    finally:
        conn.disconnect()


def test_invalid_nv_set(mock):
    conn = session(mock, DEV)
    try:
        out = conn.send_command("nv set qos frobnicate everything")
        assert "Error: Invalid config: 'nv set qos frobnicate everything'" in out
        assert conn.send_command("echo $?").strip() == "1"
        assert "frobnicate" not in conn.send_command("nv config diff")
    finally:
        conn.disconnect()


def test_apply_confirm_reverts_unless_confirmed(mock):
    conn = session(mock, "spine1")
    try:
        conn.send_command("nv set interface swp7 link mtu 9100")
        out = conn.send_command("nv config apply -y --confirm 1s")
        assert "applied" in out
        assert "swp7 link mtu 9100" in conn.send_command("nv config show -o commands")
        assert wait_for(lambda: "swp7" not in conn.send_command("nv config show -o commands"), 10)
        conn.send_command("nv set interface swp8 link mtu 9100")
        conn.send_command("nv config apply -y --confirm 1s")
        assert "applied" in conn.send_command("nv config confirm")
        dev = mock.device("spine1")
        assert "Error: no pending confirm" in conn.send_command("nv config confirm")
        assert mock.call(lambda: "nv set interface swp8 link mtu 9100" in dev.running)
        assert mock.call(lambda: dev.saved == dev.running)
    finally:
        conn.disconnect()


def test_unset(mock):
    conn = session(mock, "spine1")
    try:
        conn.send_command("nv set interface swp9 link mtu 9216")
        conn.send_command("nv set interface swp9 qos pfc-watchdog")
        conn.send_command("nv config apply -y")
        conn.send_command("nv unset interface swp9")
        assert "nv unset interface swp9 link mtu 9216" in conn.send_command("nv config diff")
        conn.send_command("nv config apply -y")
        assert "swp9" not in conn.send_command("nv config show -o commands")
    finally:
        conn.disconnect()
