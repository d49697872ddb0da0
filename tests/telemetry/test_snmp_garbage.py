"""Issue 10 §5: an agent answering garbage costs one warning line per device, never a pysnmp/pyasn1 traceback.

A real UDP responder on loopback answers every request: either with the request turned into a response
whose outer tag is not a SEQUENCE (pyasn1 raises inside pysnmp's receive callback: before the fix asyncio
printed that traceback on stderr), or with bytes that are not BER at all. ``fabriccfg verify`` runs as a
real process, so its stderr is exactly what an operator sees.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

INVENTORY = """\
fabric: {name: t, technology: roce, link_speed: 400G}
credentials:
  ssh: {username: admin, password: "env:T_SSH_PASSWORD"}
  snmp: {version: "2c", community: "env:T_SNMP_COMMUNITY"}
switches:
  - {name: leaf1, platform: sonic, role: leaf, ports: 32, asic: spectrum-4, mgmt: 192.0.2.1, rail: 0}
  - {name: leaf2, platform: cumulus-nvue, role: leaf, ports: 32, asic: spectrum-4, mgmt: 192.0.2.2, rail: 1}
"""
V2C = {"version": "2c", "community": "public"}
V3 = {"version": "3", "user": "u", "auth_protocol": "sha", "auth_key": "authpass123", "priv_protocol": "aes",
      "priv_key": "privpass123"}


def _bad_tag(request: bytes) -> bytes:
    """The request as a response (GetBulk 0xA5 -> Response 0xA2) with an outer tag that is not SEQUENCE."""
    return b"\xec" + request[1:].replace(b"\xa5", b"\xa2", 1)


def _junk(_request: bytes) -> bytes:
    return b"\x00\xffnot snmp at all\x13\x37" * 4


@pytest.fixture
def responder() -> Iterator[Callable[[Callable[[bytes], bytes]], int]]:
    """Start a UDP responder on loopback answering each datagram with ``answer(request)``; -> its port."""
    socks: list[socket.socket] = []
    stop = threading.Event()

    def start(answer: Callable[[bytes], bytes]) -> int:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        sock.settimeout(0.1)
        socks.append(sock)

        def serve() -> None:
            while not stop.is_set():
                try:
                    data, addr = sock.recvfrom(65535)
                except TimeoutError:
                    continue
                except OSError:
                    return
                sock.sendto(answer(data), addr)

        threading.Thread(target=serve, daemon=True).start()
        return int(sock.getsockname()[1])

    yield start
    stop.set()
    for sock in socks:
        sock.close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()
    return port


@pytest.mark.parametrize(("answer", "access", "why"), [
    (_bad_tag, V2C, "unreadable SNMP reply (not a valid SNMP message; the decoder raised TypeError)"),
    (_bad_tag, V3, "unreadable SNMP reply (not a valid SNMP message; the decoder raised TypeError)"),
    (_junk, V2C, "No SNMP response received before timeout"),
], ids=["bad-tag-v2c", "bad-tag-v3", "not-ber"])
def test_garbage_replies_give_one_line_per_device_and_no_traceback(
        tmp_path: Path, responder: Callable[[Callable[[bytes], bytes]], int],
        answer: Callable[[bytes], bytes], access: dict[str, str], why: str) -> None:
    port = responder(answer)
    ssh = _closed_port()
    inv = tmp_path / "inv.yaml"
    inv.write_text(INVENTORY)
    eps = tmp_path / "endpoints.json"
    eps.write_text(json.dumps([
        {"name": name, "platform": platform, "device_type": None, "host": "127.0.0.1", "ssh_port": ssh,
         "snmp_port": port, "snmp": access}
        for name, platform in (("leaf1", "sonic"), ("leaf2", "cumulus-nvue"))]))
    exe = str(Path(sys.executable).with_name("fabriccfg"))
    cmd = [exe, "verify", str(inv), "--endpoints", str(eps), "--samples", "1", "--format", "json"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False,
                         env={**os.environ, "T_SNMP_COMMUNITY": "x", "T_SSH_PASSWORD": "x"})
    assert "Traceback" not in res.stderr, res.stderr
    assert "pysnmp" not in res.stderr and "pyasn1" not in res.stderr, res.stderr
    doc = json.loads(res.stdout)
    snmp_lines = [f for f in doc["findings"] if f["check"] == "collect" and f["message"].startswith("snmp:")]
    assert sorted(f["device"] for f in snmp_lines) == ["leaf1", "leaf2"]  # one per device
    assert all(why in f["message"] for f in snmp_lines), snmp_lines
    assert res.returncode == 3  # UNKNOWN: no telemetry, never OK
