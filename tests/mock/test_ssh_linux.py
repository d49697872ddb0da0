"""Linux mocks (linux): SM host files, opensm pre-check, systemctl; GPU host sysfs, mlnx_qos, scripts."""

from __future__ import annotations

import base64
import logging
import socket
import struct
import threading

import pytest
from mockssh_helpers import IB_8790, ROCE_LAB, session, start_mock, wait_for


@pytest.fixture(scope="module")
def ib(tmp_path_factory):
    mock = start_mock(tmp_path_factory.mktemp("ib"), IB_8790)
    yield mock
    mock.stop()


@pytest.fixture(scope="module")
def roce(tmp_path_factory):
    mock = start_mock(tmp_path_factory.mktemp("roce"), ROCE_LAB)
    yield mock
    mock.stop()


CONF = "guid 0x1070fd0300aa0001\nsm_priority 15\nrouting_engine ftree\nqos FALSE\nsharp_enabled 2\n"


def test_sm_host_upload_precheck_restart(ib):
    assert ib.endpoints["sm1"].device_type == "linux" and ib.endpoints["sm1"].snmp_port is None
    assert all(ep.platform != "unmanaged-ib" for ep in ib.endpoints.values())
    conn = session(ib, "sm1")
    try:
        assert conn.send_command("systemctl is-active opensmd").strip() == "active"
        assert conn.send_command("systemctl is-active sharp_am").strip() == "active"
        conn.send_command("sudo cp /etc/opensm/opensm.conf /etc/opensm/opensm.conf.bak")
        b64 = base64.b64encode(CONF.encode()).decode()
        out = conn.send_command(f"printf '%s' '{b64}' | base64 -d > /etc/opensm/opensm.conf.new"
                                " && sha256sum /etc/opensm/opensm.conf.new")
        assert len(out.split()[0]) == 64
        check = conn.send_command("opensm -F /etc/opensm/opensm.conf.new -c /tmp/opensm.out")
        assert "Unrecognized token" not in check  # mlnx flavour knows sharp_enabled
        conn.send_command("sudo mv /etc/opensm/opensm.conf.new /etc/opensm/opensm.conf")
        assert conn.send_command("sudo systemctl restart opensmd; echo rc=$?").strip().endswith("rc=0")
        assert conn.send_command("cat /etc/opensm/opensm.conf") == CONF.rstrip("\n")
        # a broken file makes the restart fail, the backup brings it back
        conn.send_command("echo 'qos yes' | sudo tee -a /etc/opensm/opensm.conf")
        out = conn.send_command("sudo systemctl restart opensmd")
        assert "failed" in out
        assert conn.send_command("systemctl is-active opensmd").strip() == "failed"
        conn.send_command("sudo cp /etc/opensm/opensm.conf.bak /etc/opensm/opensm.conf")
        conn.send_command("sudo systemctl restart opensmd")
        assert conn.send_command("systemctl is-active opensmd").strip() == "active"
        assert "opensm.conf" in conn.send_command("ls /etc/opensm").split()
    finally:
        conn.disconnect()


def test_opensm_precheck_flags_unknown_keys_like_upstream(ib):
    conn = session(ib, "sm2")
    try:
        conn.send_command_timing("cat > /tmp/o.conf <<'EOF'\nsm_priority 3\nfoo_bar 1\nEOF", last_read=0.3)
        out = conn.send_command("opensm -F /tmp/o.conf -c /tmp/out.conf; echo rc=$?")
        assert ' Unrecognized token: "foo_bar"' in out and "rc=0" in out
        assert "command not found" in conn.send_command("frobnicate")
    finally:
        conn.disconnect()


SCRIPT = """#!/bin/bash
set -e
# rendered by fabriccfg
IF=ens1f0np0
mlnx_qos -i $IF --trust dscp
mlnx_qos -i $IF --pfc 0,0,0,1,0,0,0,0
echo 1 > /sys/class/net/$IF/ecn/roce_np/enable/3
echo 1 > /sys/class/net/${IF}/ecn/roce_rp/enable/3
echo 300 > /sys/class/net/$IF/ecn/roce_rp/rpg_time_reset
cma_roce_tos -d mlx5_0 -t 106
"""


def test_gpu_host_sysfs_mlnx_qos_and_script(roce):
    conn = session(roce, "gpu01")
    try:
        base = "/sys/class/net/ens1f0np0/ecn"
        assert conn.send_command(f"cat {base}/roce_np/cnp_dscp").strip() == "48"
        out = conn.send_command(f"echo 70000 | sudo tee {base}/roce_rp/dce_tcp_g")
        assert "Invalid argument" in out
        assert conn.send_command(f"cat {base}/roce_rp/dce_tcp_g").strip() == "1019"
        b64 = base64.b64encode(SCRIPT.encode()).decode()
        conn.send_command(f"printf '%s' '{b64}' | base64 -d > /tmp/roce-setup.sh")
        out = conn.send_command("sudo bash /tmp/roce-setup.sh; echo rc=$?")
        assert out.strip().endswith("rc=0"), out
        qos = conn.send_command("mlnx_qos -i ens1f0np0")
        assert "Priority trust state: dscp" in qos
        assert "enabled     0   0   0   1   0   0   0   0" in qos
        assert conn.send_command(f"cat {base}/roce_np/enable/3").strip() == "1"
        assert conn.send_command("cma_roce_tos -d mlx5_0").strip() == "106"
        assert "No such device" in conn.send_command("mlnx_qos -i nosuch0")
    finally:
        conn.disconnect()


def test_rendered_roce_scripts_converge(roce):
    from fabriccfg.render.engine import render_device

    rendered = render_device(roce.fabric, "gpu02")
    conn = session(roce, "gpu02")
    try:
        for name, text in rendered.files.items():
            b64 = base64.b64encode(text.encode()).decode()
            conn.send_command(f"printf '%s' '{b64}' | base64 -d > /etc/fabriccfg/{name}")
        before = conn.send_command("bash /etc/fabriccfg/roce-readback.sh")
        assert before.strip() != rendered.files["roce-expected.txt"].strip()
        out = conn.send_command("sudo bash /etc/fabriccfg/roce-setup.sh; echo rc=$?")
        assert "changed=1 failed=0" in out and out.strip().endswith("rc=0")
        after = conn.send_command("bash /etc/fabriccfg/roce-readback.sh")
        assert after.strip() == rendered.files["roce-expected.txt"].strip()
        again = conn.send_command("sudo bash /etc/fabriccfg/roce-setup.sh")
        assert "changed=0 failed=0" in again
    finally:
        conn.disconnect()


def test_a_client_that_vanishes_mid_burst_leaves_no_asyncio_warning(ib, caplog):
    """A client that sends lines and resets the connection before the mock answers them (netmiko's
    ``disconnect``: ``exit``, then close) must not make asyncio log ``socket.send() raised exception.``:
    the mock stops writing once the client is gone."""
    import paramiko

    ep = ib.endpoints["sm1"]
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        for _ in range(3):
            gate, held = threading.Event(), threading.Event()
            sock = socket.create_connection((ep.host, ep.ssh_port), timeout=10)
            transport = paramiko.Transport(sock)
            try:
                transport.start_client(timeout=10)
                transport.auth_password(ep.username, ep.password)
                chan = transport.open_session()
                chan.get_pty()
                chan.invoke_shell()
                chan.settimeout(10)
                seen = b""
                while not seen.rstrip().endswith((b"$", b"#")):
                    seen += chan.recv(4096)
                # hold the mock's loop so the lines and the reset arrive before it answers any of them
                holder = threading.Thread(target=ib.call, args=(lambda: (held.set(), gate.wait(10)),),
                                          daemon=True)
                holder.start()
                assert held.wait(10)
                chan.sendall(b"cat /etc/opensm/opensm.conf\n" * 20 + b"exit\n")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()  # linger 0: the client resets the connection instead of closing it cleanly
                gate.set()
                holder.join(10)
                assert wait_for(lambda: ib.ssh_connections("sm1") == 0), "the mock kept the dead session"
            finally:
                gate.set()
                transport.close()
    assert [r for r in caplog.records if "socket.send() raised exception" in r.getMessage()] == []
