"""EOS mock (arista_eos): configure sessions, commit timer, abort, no session left behind."""

from __future__ import annotations

from mockssh_helpers import ROCE_LAB, mock_fixture, session, wait_for
from netmiko import ConnectHandler

mock = mock_fixture(ROCE_LAB)
DEV = "leaf-r2"

LINES = ["qos map dscp 26 to traffic-class 3", "interface Ethernet1/1", "mtu 9214", "qos trust dscp",
         "priority-flow-control on", "priority-flow-control priority 3 no-drop", "tx-queue 3", "no priority",
         "bandwidth percent 50",
         "random-detect ecn minimum-threshold 150000 bytes maximum-threshold 1500000 bytes "
         "max-mark-probability 100 weight 0"]


def _sessions(conn) -> str:
    """The session rows of 'show configuration sessions' (the header mentions 'pending' too)."""
    text = conn.send_command("show configuration sessions")
    return text.split("--------\n", 1)[1] if "--------\n" in text else ""


def test_stock_connecthandler_config_and_save(mock):
    ep = mock.endpoints[DEV]
    conn = ConnectHandler(device_type="arista_eos", host=ep.host, port=ep.ssh_port, username=ep.username,
                          password=ep.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=ep.known_hosts, allow_agent=False)
    try:
        conn.enable()
        out = conn.send_config_set(LINES)
        assert "% Invalid" not in out
        assert "Copy completed successfully." in conn.save_config()
        running = conn.send_command("show running-config")
        assert "interface Ethernet1/1\n   mtu 9214" in running
        assert "      random-detect ecn minimum-threshold 150000 bytes" in running
        assert "      no priority" in running
        assert conn.send_command("show startup-config").splitlines()[3:] == running.splitlines()[3:]
    finally:
        conn.disconnect()


def test_invalid_line(mock):
    conn = session(mock, DEV)
    try:
        conn.enable()
        out = conn.send_config_set(["interface Ethernet1/2", "mtu banana"])
        assert "% Invalid input" in out
    finally:
        conn.disconnect()


def test_session_diff_commit_timer_reverts(mock):
    conn = session(mock, DEV)
    try:
        conn.enable()
        conn.send_command("configure session t1", expect_string=r"\)#")
        conn.send_command("interface Ethernet1/5", expect_string=r"\)#")
        conn.send_command("mtu 9100", expect_string=r"\)#")
        diffs = conn.send_command("show session-config diffs", expect_string=r"\)#")
        assert "+interface Ethernet1/5" in diffs and "+   mtu 9100" in diffs
        conn.send_command("commit timer 00:00:01", expect_string=r"#")
        assert "interface Ethernet1/5" in conn.send_command("show running-config")
        assert "pendingCommitTimer" in _sessions(conn)
        assert wait_for(lambda: "interface Ethernet1/5" not in conn.send_command("show running-config"), 10)
        assert "t1" not in _sessions(conn)
    finally:
        conn.disconnect()


def test_session_commit_confirmed_stays(mock):
    conn = session(mock, DEV)
    try:
        conn.enable()
        conn.send_command("configure session t2", expect_string=r"\)#")
        conn.send_command("interface Ethernet1/6", expect_string=r"\)#")
        conn.send_command("commit timer 00:00:01", expect_string=r"#")
        conn.send_command("configure session t2 commit")
        assert "t2" not in _sessions(conn)
        dev = mock.device(DEV)
        # the timer was cancelled: nothing is scheduled to revert it
        assert wait_for(lambda: "interface Ethernet1/6" in dev.running.flat(), 1)
        assert mock.call(lambda: "interface Ethernet1/6" in dev.running.flat())
    finally:
        conn.disconnect()


def test_abort_and_pending_session_survives_disconnect(mock):
    conn = session(mock, DEV)
    conn.enable()
    conn.send_command("configure session t3", expect_string=r"\)#")
    conn.send_command("interface Ethernet1/7", expect_string=r"\)#")
    conn.disconnect()
    conn = session(mock, DEV)
    try:
        conn.enable()
        assert "t3" in _sessions(conn)  # as on EOS: a stale session stays behind
        conn.send_command("configure session t3 abort")
        assert "t3" not in _sessions(conn)
        conn.send_command("configure session t4", expect_string=r"\)#")
        conn.send_command("abort", expect_string=r"#")
        sessions = _sessions(conn)
        assert "t4" not in sessions and "pending" not in sessions
        assert "Ethernet1/7" not in conn.send_command("show running-config")
    finally:
        conn.disconnect()
