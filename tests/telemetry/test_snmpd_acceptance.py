"""Acceptance: the poller against a real net-snmp ``snmpd`` on loopback reads this machine's interface
counters consistently with /proc/net/dev (v2c and v3 SHA/AES).

The test starts its own snmpd (temp config, its own UDP port, persistent dir in tmp_path) and skips
with a reason when snmpd is not installed (``apt-get install snmpd snmp``; CI's setup script does).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fabriccfg.targets import SnmpAccess
from fabriccfg.telemetry import oids, tables
from fabriccfg.telemetry.snmp import SnmpPoller, SnmpTarget, index_of

SNMPD = shutil.which("snmpd") or ("/usr/sbin/snmpd" if Path("/usr/sbin/snmpd").exists() else None)
pytestmark = pytest.mark.skipif(SNMPD is None,
                                reason="net-snmp snmpd is not installed (apt-get install snmpd)")

V2C = SnmpAccess(version="2c", community="fabtest")
V3 = SnmpAccess(version="3", user="fabric", auth_protocol="sha", auth_key="authpass123", priv_protocol="aes",
                priv_key="privpass123")


def proc_net_dev() -> dict[str, tuple[int, int]]:
    """interface -> (rx bytes, tx bytes)."""
    out: dict[str, tuple[int, int]] = {}
    for line in Path("/proc/net/dev").read_text().splitlines()[2:]:
        name, _, rest = line.partition(":")
        f = rest.split()
        out[name.strip()] = (int(f[0]), int(f[8]))
    return out


def _free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _wait_ready(target: SnmpTarget, proc: subprocess.Popen[bytes], deadline: float) -> None:
    async with SnmpPoller() as p:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError("snmpd exited")
            err, _ = await p.get(target, [(*oids.SYS_UPTIME, 0)])
            if err is None:
                return
        raise TimeoutError("snmpd did not answer")


@pytest.fixture
def snmpd(tmp_path: Path) -> Iterator[tuple[int, dict[str, tuple[int, int]]]]:
    assert SNMPD is not None
    before = proc_net_dev()  # before snmpd exists, so its first (cached) read is newer than this
    persist = tmp_path / "persist"
    persist.mkdir()
    for attempt in range(5):
        port = _free_udp_port()
        conf = tmp_path / "snmpd.conf"
        conf.write_text(
            f"agentAddress udp:127.0.0.1:{port}\n"
            f"rocommunity {V2C.community} 127.0.0.1\n"
            f'createUser {V3.user} SHA "{V3.auth_key}" AES "{V3.priv_key}"\n'
            f"rouser {V3.user} priv\n"
        )
        env = dict(os.environ, SNMP_PERSISTENT_DIR=str(persist), MIBS="", MIBDIRS=str(tmp_path))
        log = (tmp_path / f"snmpd{attempt}.log").open("wb")
        proc = subprocess.Popen([SNMPD, "-f", "-Lo", "-C", "-c", str(conf), "-p", str(tmp_path / "pid")],
                                stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            asyncio.run(_wait_ready(SnmpTarget("snmpd", "127.0.0.1", port, V2C, timeout=0.3, retries=0), proc,
                                    time.monotonic() + 15))
        except (RuntimeError, TimeoutError):
            proc.terminate()
            proc.wait(10)
            log.close()
            continue
        try:
            yield port, before
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
            log.close()
        return
    text = "\n".join(p.read_text(errors="replace")[-500:] for p in tmp_path.glob("snmpd*.log"))
    pytest.fail(f"snmpd did not start:\n{text}")


@pytest.mark.parametrize("access", [V2C, V3], ids=["v2c", "v3-sha-aes"])
def test_interface_octets_match_proc_net_dev(snmpd: tuple[int, dict[str, tuple[int, int]]],
                                             access: SnmpAccess) -> None:
    port, before = snmpd

    async def poll() -> tuple[dict[str, int], dict[str, int], int | None]:
        async with SnmpPoller() as p:
            r = await p.walk(SnmpTarget("localhost", "127.0.0.1", port, access, timeout=2, retries=2),
                             [oids.IF_NAME, oids.IF_HC_IN_OCTETS, oids.IF_HC_OUT_OCTETS])
            assert r.error is None, r.error
            names = tables.port_map(r.columns[oids.IF_NAME])
            rx = {names[index_of(s)[0]]: int(v) for s, v in r.columns[oids.IF_HC_IN_OCTETS]
                  if isinstance(v, int)}
            tx = {names[index_of(s)[0]]: int(v) for s, v in r.columns[oids.IF_HC_OUT_OCTETS]
                  if isinstance(v, int)}
            return rx, tx, r.uptime

    rx, tx, uptime = asyncio.run(poll())
    after = proc_net_dev()
    assert uptime is not None and uptime >= 0
    common = sorted(set(rx) & set(before) & set(after))
    assert "lo" in common, f"snmpd interfaces {sorted(rx)} vs /proc/net/dev {sorted(after)}"
    for name in common:
        assert before[name][0] <= rx[name] <= after[name][0], (name, before[name], rx[name], after[name])
        assert before[name][1] <= tx[name] <= after[name][1], (name, before[name], tx[name], after[name])
    # loopback carried our own SNMP traffic: its counters moved between the two /proc reads
    assert after["lo"][0] > before["lo"][0]
