"""NX-OS mock (cisco_nxos): config modes, checkpoint and rollback, save."""

from __future__ import annotations

from mockssh_helpers import ROCE_LAB, mock_fixture, session
from netmiko import ConnectHandler

mock = mock_fixture(ROCE_LAB)
DEV = "leaf-r3"

QOS = ["class-map type qos match-any ROCEv2", "match dscp 26", "policy-map type qos QOS_CLASSIFICATION",
       "class ROCEv2", "set qos-group 3", "policy-map type network-qos qos_network",
       "class type network-qos c-8q-nq3", "mtu 9216", "pause pfc-cos 3", "system qos",
       "service-policy type network-qos qos_network", "interface Ethernet1/1", "mtu 9216",
       "priority-flow-control mode on", "service-policy type qos input QOS_CLASSIFICATION"]


def test_stock_connecthandler_config_save(mock):
    ep = mock.endpoints[DEV]
    conn = ConnectHandler(device_type="cisco_nxos", host=ep.host, port=ep.ssh_port, username=ep.username,
                          password=ep.password, ssh_strict=True, system_host_keys=False, alt_host_keys=True,
                          alt_key_file=ep.known_hosts, allow_agent=False)
    try:
        out = conn.send_config_set(QOS)
        assert "Invalid" not in out
        assert "Copy complete." in conn.save_config()
        running = conn.send_command("show running-config")
        nqos = "policy-map type network-qos qos_network\n  class type network-qos c-8q-nq3\n    mtu 9216"
        assert nqos in running
        assert "interface Ethernet1/1\n  mtu 9216\n  priority-flow-control mode on" in running
    finally:
        conn.disconnect()


def test_checkpoint_rollback(mock):
    conn = session(mock, DEV)
    try:
        assert "Done" in conn.send_command("checkpoint fabriccfg-1")
        before = conn.send_command("show running-config").splitlines()[3:]
        out = conn.send_config_set(["interface Ethernet1/9", "mtu 9000", "bogus command"])
        assert "% Invalid command at '^' marker." in out
        assert "Ethernet1/9" in conn.send_command("show running-config")
        out = conn.send_command("rollback running-config checkpoint fabriccfg-1")
        assert "Rollback completed successfully." in out
        assert conn.send_command("show running-config").splitlines()[3:] == before
        assert "fabriccfg-1" in conn.send_command("show checkpoint summary")
    finally:
        conn.disconnect()


def test_configuration_session_reaches_running_only_at_commit_and_outlives_the_ssh_session(mock):
    """Session Manager (Cisco N9K System Management Configuration Guide 10.5(x)): lines in a session stay out
    of the running config until ``commit``; an uncommitted session survives its SSH session; ``abort``
    discards it."""
    conn = session(mock, DEV)
    try:
        conn.send_command("configure session s1", expect_string=r"\(config-s\)#")
        conn.send_command("interface Ethernet1/7", expect_string=r"#")
        conn.send_command("mtu 9100", expect_string=r"#")
        conn.send_command("end", expect_string=r"#")
        assert "mtu 9100" not in conn.send_command("show running-config")
    finally:
        conn.disconnect()  # the client goes away with the session uncommitted
    conn = session(mock, DEV)
    try:
        assert "s1" in conn.send_command("show configuration session summary")
        assert "mtu 9100" not in conn.send_command("show running-config")
        conn.send_command("configure session s1", expect_string=r"\(config-s\)#")
        assert "Verification Successful" in conn.send_command("verify", expect_string=r"#")
        assert "Commit Successful" in conn.send_command("commit", expect_string=r"#")
        assert "interface Ethernet1/7\n  mtu 9100" in conn.send_command("show running-config")
        assert "s1" not in conn.send_command("show configuration session summary")
        conn.send_command("configure session s2", expect_string=r"\(config-s\)#")
        conn.send_command("interface Ethernet1/8", expect_string=r"#")
        conn.send_command("abort", expect_string=r"#")
        assert "Ethernet1/8" not in conn.send_command("show running-config")
        assert "s2" not in conn.send_command("show configuration session summary")
    finally:
        conn.disconnect()
