"""Mock SNMP agent benchmark: agent CPU microseconds per varbind, v2c and v3 authPriv, against pysnmp's agent.

Why: a poller benchmark must measure the poller, not the mock (``netmiko_pysnmp.md`` §6-§7: pysnmp's
own agent costs 150-220 us per varbind and caps clients at ~5k varbinds/s).

Two measurements on one leaf of a ``gen``-ed fabric (64 cabled ports, ~6k OIDs):

1. *handler*: the request datagrams of a real pysnmp multi-column GETBULK walk (10 columns, 25
   repetitions) are captured once, then replayed into ``Agent.handle`` in a loop: pure agent CPU
   (BER decode, USM, model evaluation, BER encode), no sockets.
2. *end to end*: net-snmp ``snmpbulkwalk`` (a separate process, so this process's CPU is the
   agent's) walks the ifXTable over UDP loopback; agent CPU = this process's CPU time / varbinds.
   The same walk against pysnmp 7.1's agent with the "fast" controller of ``netmiko_pysnmp.md`` §4
   serving the same OIDs and values, for the ratio.

    .venv/bin/python benchmarks/bench_snmp_agent.py [--gpus 512] [--rounds 20]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from bisect import bisect_right
from pathlib import Path
from typing import Any

from fabriccfg.inventory.gen import dump_yaml, generate
from fabriccfg.inventory.load import load_fabric
from fabriccfg.mock.snmp import Agent, start_agent
from fabriccfg.mock.traffic import TrafficModel
from fabriccfg.telemetry import oids as O

V3 = {"user": "fabric", "auth_key": "authpass123", "priv_key": "privpass123"}
COLUMNS = (
    O.IF_NAME,
    O.IF_HC_IN_OCTETS,
    O.IF_HC_OUT_OCTETS,
    O.IF_HC_IN_UCAST_PKTS,
    O.IF_HC_OUT_UCAST_PKTS,
    O.IF_HIGH_SPEED,
    O.IF_IN_ERRORS,
    O.IF_OUT_ERRORS,
    O.IF_IN_DISCARDS,
    O.IF_OUT_DISCARDS,
)


def make_model(gpus: int) -> tuple[TrafficModel, str]:
    text = dump_yaml(generate(gpus, "roce"))
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as fh:
        fh.write(text)
    fabric = load_fabric(fh.name)
    Path(fh.name).unlink()
    model = TrafficModel(fabric, seed=1)
    leaf = max((s.name for s in fabric.switches), key=lambda n: len(model.ports(n)))
    return model, leaf


async def pysnmp_walk(port: int, version: str) -> int:
    from pysnmp.hlapi.v3arch.asyncio import (
        USM_AUTH_HMAC96_SHA,
        USM_PRIV_CFB128_AES,
        CommunityData,
        ContextData,
        ObjectIdentity,
        ObjectType,
        SnmpEngine,
        UdpTransportTarget,
        UsmUserData,
        bulk_cmd,
    )

    eng = SnmpEngine()
    tgt = await UdpTransportTarget.create(("127.0.0.1", port), timeout=2, retries=1)
    auth: Any = (
        CommunityData("public")
        if version == "2c"
        else UsmUserData(
            "fabric",
            authKey="authpass123",
            privKey="privpass123",
            authProtocol=USM_AUTH_HMAC96_SHA,
            privProtocol=USM_PRIV_CFB128_AES,
        )
    )
    cursors = list(COLUMNS)
    got = 0
    live = list(range(len(COLUMNS)))
    while live:
        _ei, _es, _ix, vbs = await bulk_cmd(
            eng,
            auth,
            tgt,
            ContextData(),
            0,
            25,
            *[ObjectType(ObjectIdentity(cursors[i])) for i in live],
            lookupMib=False,
        )
        still = []
        for j, i in enumerate(live):
            col = COLUMNS[i]
            ok = True
            for oid, _val in vbs[j :: len(live)]:
                o = tuple(oid)
                if o[: len(col)] != col:
                    ok = False
                    break
                cursors[i] = o
                got += 1
            if ok:
                still.append(i)
        live = still
    eng.close_dispatcher()
    return got


async def capture(agent: Agent, version: str) -> tuple[list[bytes], int]:
    seen: list[bytes] = []
    orig = agent.handle

    def spy(data: bytes) -> bytes | None:
        seen.append(data)
        return orig(data)

    agent.handle = spy  # type: ignore[method-assign]
    try:
        n = await pysnmp_walk(agent.port, version)
    finally:
        agent.handle = orig  # type: ignore[method-assign]
    return seen, n


def handler_us_per_vb(agent: Agent, requests: list[bytes], rounds: int) -> float:
    before = agent.varbinds
    t = time.process_time()
    for _ in range(rounds):
        for d in requests:
            agent.handle(d)
    cpu = time.process_time() - t
    return cpu / max(1, agent.varbinds - before) * 1e6


async def netsnmp_walk(port: int, version: str) -> tuple[int, float]:
    auth = (
        ["-v2c", "-c", "public"]
        if version == "2c"
        else [
            "-v3",
            "-l",
            "authPriv",
            "-u",
            "fabric",
            "-a",
            "SHA",
            "-A",
            "authpass123",
            "-x",
            "AES",
            "-X",
            "privpass123",
        ]
    )
    t = time.process_time()
    proc = await asyncio.create_subprocess_exec(
        "snmpbulkwalk",
        *auth,
        "-On",
        "-Oq",
        "-Cr25",
        f"127.0.0.1:{port}",
        "1.3.6.1.2.1.31.1.1.1",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, _err = await proc.communicate()
    return out.count(b"\n"), time.process_time() - t


# --------------------------------------------------------------------------- pysnmp's agent, same OIDs
def _to_pysnmp(val: bytes) -> Any:
    from pysnmp.proto.api import v2c

    tag, body = val[0], val[2:] if val[1] < 0x80 else val[2 + (val[1] & 0x7F) :]
    if tag == 0x04:
        return v2c.OctetString(body)
    if tag == 0x06:
        return v2c.ObjectIdentifier(_oid_tuple(body))
    n = int.from_bytes(body, "big", signed=tag == 0x02)
    cls = {
        0x02: v2c.Integer,
        0x41: v2c.Counter32,
        0x42: v2c.Gauge32,
        0x43: v2c.TimeTicks,
        0x46: v2c.Counter64,
    }[tag]
    return cls(n)


def _oid_tuple(body: bytes) -> tuple[int, ...]:
    out, v = [], 0
    for b in body:
        v = (v << 7) | (b & 0x7F)
        if not b & 0x80:
            out.append(v)
            v = 0
    first = out[0]
    return (min(first // 40, 2), first - 40 * min(first // 40, 2), *out[1:])


async def start_pysnmp_agent(model: TrafficModel, device: str) -> tuple[Any, int]:
    """pysnmp 7.1 command responder with the "fast" controller (no VACM), v2c + v3 SHA/AES."""
    import socket

    from pysnmp.carrier.asyncio.dgram import udp
    from pysnmp.entity import config, engine
    from pysnmp.entity.rfc3413 import cmdrsp, context
    from pysnmp.proto.rfc1902 import ObjectName
    from pysnmp.smi import exval, instrum

    helper = Agent(
        model, device, community="public", v3_user=None, faults=(), clock=time.time, engine_id=None, mibs=None
    )
    layout = helper.layout

    def value(i: int, cache: dict[str, dict[str, int]]) -> Any:
        vb = helper._vb(i, time.time(), cache)
        head = 2 if vb[1] < 0x80 else 2 + (vb[1] & 0x7F)
        return _to_pysnmp(vb[head + len(layout.encoded[i]) :])

    class Fast(instrum.AbstractMibInstrumController):  # type: ignore[misc]
        def read_variables(self, *var_binds: Any, **ctx: Any) -> list[Any]:
            cache: dict[str, dict[str, int]] = {}
            out = []
            for oid, _v in var_binds:
                i = layout.index.get(tuple(oid))
                out.append((oid, value(i, cache) if i is not None else exval.noSuchInstance))
            return out

        def read_next_variables(self, *var_binds: Any, **ctx: Any) -> list[Any]:
            cache: dict[str, dict[str, int]] = {}
            out = []
            for oid, _v in var_binds:
                i = bisect_right(layout.oids, tuple(oid))
                if i >= len(layout.oids):
                    out.append((oid, exval.endOfMibView))
                else:
                    out.append((ObjectName(layout.oids[i]), value(i, cache)))
            return out

    eng = engine.SnmpEngine()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config.add_transport(eng, udp.DOMAIN_NAME, udp.UdpAsyncioTransport().open_server_mode(sock=sock))
    config.add_v1_system(eng, "ro-area", "public")
    config.add_vacm_user(eng, 2, "ro-area", "noAuthNoPriv", (1, 3))
    config.add_v3_user(
        eng, "fabric", config.USM_AUTH_HMAC96_SHA, "authpass123", config.USM_PRIV_CFB128_AES, "privpass123"
    )
    config.add_vacm_user(eng, 3, "fabric", "authPriv", (1, 3))
    ctx = context.SnmpContext(eng)
    ctx.context_names[b""] = Fast()
    cmdrsp.GetCommandResponder(eng, ctx)
    cmdrsp.NextCommandResponder(eng, ctx)
    cmdrsp.BulkCommandResponder(eng, ctx).max_varbinds = 64
    return eng, port


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=20)
    args = ap.parse_args()
    model, leaf = make_model(args.gpus)
    agent = await start_agent(model, leaf, community="public", v3_user=V3)
    nocache = await start_agent(model, leaf, community="public", v3_user=V3, cache_s=0.0)
    print(f"device {leaf}: {len(model.ports(leaf))} ports, {len(agent.layout.oids)} OIDs served")
    rows: list[tuple[str, str, float, float | None]] = []
    for version in ("2c", "3"):
        reqs, n = await capture(agent, version)
        us = handler_us_per_vb(agent, reqs, args.rounds)
        print(f"  captured v{version} walk: {len(reqs)} requests, {n} varbinds")
        rows.append(("fabriccfg agent, handler only", version, us, None))
    have_netsnmp = shutil.which("snmpbulkwalk") is not None
    pysnmp_eng = None
    try:
        pysnmp_eng, pysnmp_port = await start_pysnmp_agent(model, leaf)
    except Exception as exc:
        print(f"  pysnmp agent not available: {exc}")
    for version in ("2c", "3"):
        if not have_netsnmp:
            print("  net-snmp snmpbulkwalk not installed: end-to-end rows skipped (apt-get install -y snmp)")
            break
        for label, port in (
            ("fabriccfg agent, UDP + snmpbulkwalk", agent.port),
            ("fabriccfg agent, counter cache off", nocache.port),
            ("pysnmp 7.1 agent (fast), UDP + snmpbulkwalk", pysnmp_port if pysnmp_eng else None),
        ):
            if port is None:
                continue
            total_vb, total_cpu, wall = 0, 0.0, time.perf_counter()
            for _ in range(max(1, args.rounds // 5)):
                vb, cpu = await netsnmp_walk(port, version)
                total_vb += vb
                total_cpu += cpu
            wall = time.perf_counter() - wall
            rows.append((label, version, total_cpu / max(1, total_vb) * 1e6, total_vb / wall))
    if pysnmp_eng is not None:
        pysnmp_eng.close_dispatcher()
    agent.close()
    nocache.close()
    print()
    print(f"{'agent':48} {'ver':>4} {'agent CPU us/varbind':>21} {'varbinds/s':>11}")
    for label, version, us, vbs in rows:
        print(f"{label:48} {version:>4} {us:>21.1f} {f'{vbs:.0f}' if vbs else '-':>11}")
    ours = {v: us for label, v, us, _ in rows if label.startswith("fabriccfg agent, UDP")}
    theirs = {v: us for label, v, us, _ in rows if label.startswith("pysnmp")}
    for v in ours:
        if v in theirs:
            print(f"ratio pysnmp / fabriccfg agent CPU per varbind, v{v}: {theirs[v] / ours[v]:.1f}x")
    print(
        "(end-to-end agent CPU includes the event loop and kernel UDP work of this process;"
        " snmpbulkwalk walks one column at a time, so requests carry 25 varbinds)"
    )


if __name__ == "__main__":
    asyncio.run(main())
