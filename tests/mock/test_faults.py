"""Each fault, as a client sees it."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
from mockssh_helpers import ROCE_LAB, mock_fixture, session

from fabriccfg.connect import ConnectError, connect

FAULTS = ["gpu01:auth-fail", "gpu02:unreachable", "gpu03:hostkey-changed", "leaf-r3:disconnect-after=2",
          "leaf-r2:reject=mtu 9999", "spine2:slow=0.25", "spine1:snmp-timeout", "gpu04:disconnect-after=1",
          "leaf-r0:reject=pfc-watchdog"]
mock = mock_fixture(ROCE_LAB, FAULTS)


def test_auth_fail(mock):
    with pytest.raises(ConnectError) as exc:
        connect(mock.endpoints["gpu01"])
    assert exc.value.kind == "auth"


def test_unreachable_is_connection_refused(mock):
    import socket

    ep = mock.endpoints["gpu02"]
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((ep.host, ep.ssh_port), timeout=2)
    t = time.monotonic()
    with pytest.raises(ConnectError) as exc:
        connect(ep)
    assert exc.value.kind == "unreachable"
    assert time.monotonic() - t < 5


def test_hostkey_changed_rejected_under_strict_checking(mock):
    with pytest.raises(ConnectError) as exc:
        connect(mock.endpoints["gpu03"])
    assert exc.value.kind == "hostkey"
    conn = connect(mock.endpoints["gpu03"], insecure_host_keys=True)
    try:
        assert conn.send_command("hostname").strip() == "gpu03"
    finally:
        conn.disconnect()


def test_disconnect_after_drops_session_mid_config(mock):
    conn = session(mock, "leaf-r3")
    with pytest.raises(Exception) as exc:
        conn.send_config_set(["interface Ethernet1/11", "mtu 9216", "priority-flow-control mode on",
                              "description never-applied"])
    assert not isinstance(exc.value, AssertionError)
    assert not conn.is_alive()
    conn = session(mock, "leaf-r3")  # the fault fires once per device: the next session works
    try:
        running = conn.send_command("show running-config")
        assert "interface Ethernet1/11\n  mtu 9216" in running
        assert "priority-flow-control mode on" not in running and "never-applied" not in running
    finally:
        conn.disconnect()


def test_disconnect_after_on_linux_file_writes(mock):
    conn = session(mock, "gpu04")
    with pytest.raises(Exception):
        conn.send_command("echo 1 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/3; "
                          "echo 0 > /sys/class/net/ens1f0np0/ecn/roce_np/enable/4")
    conn = session(mock, "gpu04")
    try:
        assert conn.send_command("cat /sys/class/net/ens1f0np0/ecn/roce_np/enable/4").strip() == "1"
    finally:
        conn.disconnect()


def test_reject_regex(mock):
    conn = session(mock, "leaf-r2")
    try:
        conn.enable()
        out = conn.send_config_set(["interface Ethernet1/3", "mtu 9999", "mtu 9214"])
        assert "% Invalid input" in out
        running = conn.send_command("show running-config")
        assert "mtu 9214" in running and "mtu 9999" not in running
    finally:
        conn.disconnect()
    conn = session(mock, "leaf-r0")
    try:
        out = conn.send_command("nv set interface swp1 qos pfc-watchdog; echo rc=$?")
        assert "Invalid" in out and "rc=1" in out
    finally:
        conn.disconnect()


def test_slow_delays_each_response(mock):
    t = time.monotonic()
    conn = session(mock, "spine2")
    try:
        connect_s = time.monotonic() - t
        t = time.monotonic()
        assert conn.send_command("echo hi").strip() == "hi"
        cmd_s = time.monotonic() - t
    finally:
        conn.disconnect()
    assert connect_s >= 0.25
    assert cmd_s >= 0.25
    with pytest.raises(Exception):
        c = session(mock, "spine2")
        try:
            c.send_command("echo hi", read_timeout=0.1)
        finally:
            c.disconnect()


@pytest.mark.skipif(shutil.which("snmpget") is None, reason="net-snmp snmpget (Debian 'snmp') not installed")
def test_snmp_timeout(mock):
    def get(name: str) -> subprocess.CompletedProcess[str]:
        ep = mock.endpoints[name]
        s = ep.snmp
        assert s is not None and s.version == "3" and ep.snmp_port
        return subprocess.run(["snmpget", "-v3", "-l", "authPriv", "-u", s.user, "-a", "SHA",
                               "-A", s.auth_key,
                               "-x", "AES", "-X", s.priv_key, "-t", "0.5", "-r", "0",
                               f"127.0.0.1:{ep.snmp_port}", "1.3.6.1.2.1.1.3.0"],
                              capture_output=True, text=True, timeout=10)
    ok = get("leaf-r1")
    assert ok.returncode == 0, ok.stderr
    bad = get("spine1")
    assert bad.returncode != 0 and "Timeout" in (bad.stderr + bad.stdout)
