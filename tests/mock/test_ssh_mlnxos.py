"""MLNX-OS mock (mellanox_mlnxos): stock netmiko, config modes, save, backup config files."""

from __future__ import annotations

import time

import pytest
from mockssh_helpers import IB_8700, mock_fixture, session
from netmiko import ConnectHandler
from netmiko.exceptions import ConfigInvalidException

mock = mock_fixture(IB_8700)
DEV = "ib8700-leaf1"


def test_stock_connecthandler_strict_host_keys(mock):
    ep = mock.endpoints[DEV]
    conn = ConnectHandler(device_type="mellanox_mlnxos", host=ep.host, port=ep.ssh_port, username=ep.username,
                          password=ep.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=ep.known_hosts, allow_agent=False)
    try:
        assert conn.base_prompt == f"{DEV} [standalone: master] "
        assert "MLNX-OS" in conn.send_command("show version")
        conn.enable()
        assert conn.check_enable_mode()
    finally:
        conn.disconnect()


def test_config_set_save_and_running_config(mock):
    conn = session(mock, DEV)
    try:
        conn.enable()
        out = conn.send_config_set(["ib sm", "ib smnode ib8700-leaf1 sm-priority 10", "interface ib 1/1",
                                    "mtu 4K force", "exit", "ib partition storage pkey 0x0202 force"])
        assert "Unrecognized" not in out
        conn.save_config()
        running = conn.send_command("show running-config")
        for line in ("ib sm", "ib smnode ib8700-leaf1 sm-priority 10", "interface ib 1/1 mtu 4K force",
                     "ib partition storage pkey 0x0202 force"):
            assert f"   {line}" in running.splitlines()
        # a value change replaces the old line
        conn.send_config_set(["ib smnode ib8700-leaf1 sm-priority 15"])
        running = conn.send_command("show running-config")
        assert "sm-priority 15" in running and "sm-priority 10" not in running
    finally:
        conn.disconnect()
    dev = mock.device(DEV)
    assert "   interface ib 1/1 mtu 4K force" in ["   " + x for x in dev.saved.flat()]


def test_invalid_line_is_rejected_with_platform_error(mock):
    conn = session(mock, DEV)
    try:
        conn.enable()
        with pytest.raises(ConfigInvalidException):
            conn.send_config_set(["interface ib 1/2", "mtu 9000 force"], error_pattern=r"% Unrecognized")
        out = conn.send_config_set(["frobnicate the fabric"])
        assert '% Unrecognized command "frobnicate the fabric".' in out
        assert "frobnicate" not in conn.send_command("show running-config")
    finally:
        conn.disconnect()


def test_no_line_is_kept_when_nothing_to_remove(mock):
    conn = session(mock, "ib8700-leaf2")
    try:
        conn.enable()
        conn.send_config_set(["no ib sm"])
        assert "   no ib sm" in conn.send_command("show running-config").splitlines()
        conn.send_config_set(["ib sm"])
        running = conn.send_command("show running-config").splitlines()
        assert "   ib sm" in running and "   no ib sm" not in running
    finally:
        conn.disconnect()


def test_backup_file_and_switch_back(mock):
    conn = session(mock, "ib8700-spine1")
    try:
        conn.enable()
        conn.config_mode()
        conn.send_command("configuration write to fabriccfg-backup no-switch", expect_string=r"#")
        conn.exit_config_mode()
        before = conn.send_command("show running-config").splitlines()[6:]
        conn.send_config_set(["ib partition gpu pkey 0x0010 force"])
        assert "ib partition gpu" in conn.send_command("show running-config")
        files = conn.send_command("show configuration files")
        assert "initial (active)" in files and "fabriccfg-backup" in files
        conn.config_mode()
        conn.send_command("configuration switch-to fabriccfg-backup", expect_string=r"#")
        conn.exit_config_mode()
        after = conn.send_command("show running-config").splitlines()[6:]
        assert after == before
    finally:
        conn.disconnect()


def test_exit_closes_session(mock):
    conn = session(mock, DEV)
    # netmiko's mellanox check_config_mode waits for '#': from the '>' level disconnect() would
    # sit out read_timeout (10 s) on a real switch too, so enable first.
    conn.enable()
    t = time.monotonic()
    conn.disconnect()
    assert time.monotonic() - t < 2
    assert not conn.is_alive()
