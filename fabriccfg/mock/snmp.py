"""A fast SNMP agent for the mock fabric: hand-written BER, v2c and v3 USM authPriv, UDP loopback.

Why not pysnmp's agent: it costs 150-220 us of CPU per varbind and caps every client at ~5k
varbinds/s (``netmiko_pysnmp.md`` §6-§7), so a poller benchmark would measure the mock. This agent
decodes and encodes BER itself (GET, GETNEXT, GETBULK; Response and Report PDUs), implements USM
(RFC 3414 key localisation, HMAC-SHA-96; RFC 3826 AES-128-CFB) with ``cryptography``, and serves the
OID layout of :mod:`fabriccfg.mock.mibs` from the traffic model.

One asyncio loop can host many agents (one UDP socket each)::

    agent = await start_agent(model, "leaf-r0", community="public",
                              v3_user={"user": "fabric", "auth_key": "...", "priv_key": "..."})
    agent.port  # the bound UDP port
    agent.close()

``clock`` (default ``time.time``) gives the model time of each request, so tests advance time
explicitly. ``faults``: an iterable of fault kinds for this device; ``"snmp-timeout"`` makes the
agent drop every request (the client times out).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import logging
import os
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms

try:  # cryptography >= 44 keeps CFB in the "decrepit" package
    from cryptography.hazmat.decrepit.ciphers.modes import CFB
except ImportError:  # pragma: no cover - older cryptography
    from cryptography.hazmat.primitives.ciphers.modes import CFB

from fabriccfg.mock import mibs as M
from fabriccfg.telemetry.ber import (
    BerError,
    decode_oid,
    header,
    integer,
    octet_string,
    oid_tlv,
    read_content,
    read_integer,
    read_tlv,
    tlv,
    unsigned,
)

if TYPE_CHECKING:
    from fabriccfg.mock.traffic import TrafficModel

log = logging.getLogger(__name__)

PDU_GET = 0xA0
PDU_GETNEXT = 0xA1
PDU_RESPONSE = 0xA2
PDU_SET = 0xA3
PDU_GETBULK = 0xA5
PDU_REPORT = 0xA8

END_OF_MIB_VIEW = b"\x82\x00"
NO_SUCH_INSTANCE = b"\x81\x00"
M64 = (1 << 64) - 1
M32 = (1 << 32) - 1

USM_STATS = (1, 3, 6, 1, 6, 3, 15, 1, 1)
UNSUPPORTED_SEC_LEVELS = (*USM_STATS, 1, 0)
NOT_IN_TIME_WINDOWS = (*USM_STATS, 2, 0)
UNKNOWN_USER_NAMES = (*USM_STATS, 3, 0)
UNKNOWN_ENGINE_IDS = (*USM_STATS, 4, 0)
WRONG_DIGESTS = (*USM_STATS, 5, 0)
DECRYPTION_ERRORS = (*USM_STATS, 6, 0)

TIME_WINDOW_S = 150
MAX_UDP = 65507
ERR_NOT_WRITABLE = 17


class _Drop(BerError):
    """Malformed or unwanted datagram: no answer."""


# --------------------------------------------------------------------------- BER
# The codec is :mod:`fabriccfg.telemetry.ber` (shared with the poller); here only the agent's view of it.
def _oid(buf: bytes, s: int, e: int) -> tuple[int, ...]:
    oid = decode_oid(buf[s:e])
    if not oid:
        raise _Drop
    return oid


# --------------------------------------------------------------------------- USM keys (RFC 3414 A.2.2)
_KU: dict[str, bytes] = {}


def password_to_key_sha(password: str) -> bytes:
    """SHA-1 of 1 MiB of the repeated password (cached per password)."""
    ku = _KU.get(password)
    if ku is None:
        pw = password.encode()
        if not pw:
            raise ValueError("empty SNMPv3 password")
        data = (pw * (1048576 // len(pw) + 1))[:1048576]
        ku = _KU[password] = hashlib.sha1(data).digest()
    return ku


def localize_key_sha(password: str, engine_id: bytes) -> bytes:
    ku = password_to_key_sha(password)
    return hashlib.sha1(ku + engine_id + ku).digest()


# --------------------------------------------------------------------------- agent
class Agent(asyncio.DatagramProtocol):
    """A running agent: ``port``, ``close()``, ``faults`` (mutable set), and request statistics.

    Statistics: ``requests`` (answered), ``dropped``, ``varbinds`` (served), ``busy_s`` (wall time spent
    handling datagrams; the handler is pure CPU, so this is the agent's CPU).
    """

    def __init__(
        self,
        model: TrafficModel,
        device: str,
        *,
        community: str | None,
        v3_user: Mapping[str, str] | None,
        faults: Iterable[str],
        clock: Callable[[], float],
        engine_id: bytes | None,
        mibs: Iterable[str] | None,
        cache_s: float = 0.1,
    ) -> None:
        self.model = model
        self.device = device
        self.clock = clock
        self.faults: set[str] = {f.rpartition(":")[2] for f in faults}
        self.layout = M.build_layout(model, device, tuple(mibs) if mibs is not None else None)
        self._oids = self.layout.oids
        self._enc = self.layout.encoded
        self._get = self.layout.getters
        self._n = len(self._oids)
        self.community = community.encode() if community is not None else None
        self.engine_id = engine_id or b"\x80\x00\x1f\x88\x05" + os.urandom(8)
        self.boots = 1
        self._t_start = time.monotonic()
        self._salt = int.from_bytes(os.urandom(8), "big")
        self.user: bytes | None = None
        self._auth_key = b""
        self._priv_key = b""
        if v3_user is not None:
            auth_proto = v3_user.get("auth_protocol", "sha").lower()
            priv_proto = v3_user.get("priv_protocol", "aes").lower()
            if auth_proto not in ("sha", "sha1", "usmhmacshaauthprotocol") or priv_proto not in (
                "aes",
                "aes128",
                "usmaescfb128protocol",
            ):
                raise ValueError(f"mock agent supports SHA/AES-128 only, not {auth_proto}/{priv_proto}")
            self.user = v3_user["user"].encode()
            self._auth_key = localize_key_sha(v3_user["auth_key"], self.engine_id)
            self._priv_key = localize_key_sha(v3_user["priv_key"], self.engine_id)[:16]
        self.usm_stats: dict[tuple[int, ...], int] = {}
        self.cache_s = cache_s
        self._snap: dict[str, tuple[float, dict[str, int]]] = {}
        self.transport: asyncio.DatagramTransport | None = None
        self.port = 0
        self.requests = 0
        self.dropped = 0
        self.varbinds = 0
        self.busy_s = 0.0

    # ----- asyncio protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]
        self.port = transport.get_extra_info("sockname")[1]

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        start = time.perf_counter()
        resp: bytes | None = None
        if "snmp-timeout" in self.faults:
            self.dropped += 1
            return
        try:
            resp = self.handle(data)
        except BerError:
            resp = None
        except Exception:  # a mock must not die on a strange datagram
            log.debug("mock agent %s: bad datagram", self.device, exc_info=True)
            resp = None
        if resp is None:
            self.dropped += 1
        elif self.transport is not None:
            self.transport.sendto(resp, addr)
            self.requests += 1
        self.busy_s += time.perf_counter() - start

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None

    def set_faults(self, faults: Iterable[str]) -> None:
        """Replace the active faults (``snmp-timeout`` is the one the agent honours)."""
        self.faults = {f.rpartition(":")[2] for f in faults}

    # ----- messages
    def handle(self, data: bytes) -> bytes | None:
        """One request datagram -> the response datagram (None: drop)."""
        tag, s, e = read_tlv(data, 0)
        if tag != 0x30:
            return None
        version, ve = read_integer(data, s)
        if version == 1:
            if self.community is None:
                return None
            community, ce = read_content(data, ve)
            if community != self.community:
                return None
            pdu = self._pdu(data, ce, MAX_UDP - 64 - len(self.community))
            if pdu is None:
                return None
            body = b"\x02\x01\x01" + tlv(0x04, self.community) + pdu
            return header(0x30, len(body)) + body
        if version == 3 and self.user is not None:
            return self._v3(data, ve, e)
        return None

    def _engine_time(self) -> int:
        return int(time.monotonic() - self._t_start)

    def _v3(self, buf: bytes, pos: int, end: int) -> bytes | None:
        _, gs, ge = read_tlv(buf, pos)
        msg_id, b = read_integer(buf, gs)
        max_size, b = read_integer(buf, b)
        max_size = max(484, min(max_size, MAX_UDP))
        flag_bytes, b = read_content(buf, b)
        flags = flag_bytes[0] if flag_bytes else 0
        if read_integer(buf, b)[0] != 3:
            return None
        _, ss, se = read_tlv(buf, ge)
        _, us, _ue = read_tlv(buf, ss)
        engine_id, b = read_content(buf, us)
        boots, b = read_integer(buf, b)
        etime, b = read_integer(buf, b)
        user, b = read_content(buf, b)
        _, auth_s, auth_e = read_tlv(buf, b)
        salt = read_content(buf, auth_e)[0]
        data_pos = se
        auth, priv = flags & 1, flags & 2

        def plain_request_id() -> bytes:
            if priv:
                return b"\x02\x01\x00"
            try:
                _, ps, _pe = read_tlv(buf, data_pos)
                _, _a, b1 = read_tlv(buf, ps)
                _, _a, b2 = read_tlv(buf, b1)
                _, qs, _qe = read_tlv(buf, b2)
                _, rs, re_ = read_tlv(buf, qs)
                return buf[rs - 2 : re_] if re_ - rs < 0x80 else b"\x02\x01\x00"
            except BerError:
                return b"\x02\x01\x00"

        if engine_id != self.engine_id:
            return self._report(msg_id, plain_request_id(), UNKNOWN_ENGINE_IDS, b"", 0)
        if user != self.user:
            return self._report(msg_id, plain_request_id(), UNKNOWN_USER_NAMES, user, 0)
        if not (auth and priv):
            return self._report(msg_id, plain_request_id(), UNSUPPORTED_SEC_LEVELS, user, 0)
        digest = buf[auth_s:auth_e]
        whole = buf[:auth_s] + b"\x00" * 12 + buf[auth_e:end]
        mac = hmac.new(self._auth_key, whole, hashlib.sha1).digest()[:12]
        if len(digest) != 12 or not hmac.compare_digest(mac, digest):
            return self._report(msg_id, b"\x02\x01\x00", WRONG_DIGESTS, user, 0)
        if boots != self.boots or abs(etime - self._engine_time()) > TIME_WINDOW_S:
            return self._report(msg_id, b"\x02\x01\x00", NOT_IN_TIME_WINDOWS, user, 1)
        tag, ds, de = read_tlv(buf, data_pos)
        if tag != 0x04 or len(salt) != 8:
            return self._report(msg_id, b"\x02\x01\x00", DECRYPTION_ERRORS, user, 0)
        iv = boots.to_bytes(4, "big") + etime.to_bytes(4, "big") + salt
        dec = Cipher(algorithms.AES(self._priv_key), CFB(iv)).decryptor()
        plain = dec.update(buf[ds:de]) + dec.finalize()
        try:
            _, ps, _pe = read_tlv(plain, 0)
            _, a, b = read_tlv(plain, ps)
            _, a, b2 = read_tlv(plain, b)
            ctx_name = plain[a:b2]
        except BerError:
            return self._report(msg_id, b"\x02\x01\x00", DECRYPTION_ERRORS, user, 0)
        pdu = self._pdu(plain, b2, max_size - 160 - len(self.engine_id) * 2 - len(user) - len(ctx_name))
        if pdu is None:
            return None
        scoped = tlv(0x30, octet_string(self.engine_id) + octet_string(ctx_name) + pdu)
        return self._wrap_v3(msg_id, scoped, user, 3)

    def _report(self, msg_id: int, reqid: bytes, oid: tuple[int, ...], user: bytes, level: int) -> bytes:
        count = self.usm_stats[oid] = self.usm_stats.get(oid, 0) + 1
        vb = tlv(0x30, oid_tlv(oid) + unsigned(0x41, count))
        pdu = tlv(PDU_REPORT, reqid + b"\x02\x01\x00\x02\x01\x00" + tlv(0x30, vb))
        scoped = tlv(0x30, octet_string(self.engine_id) + octet_string(b"") + pdu)
        return self._wrap_v3(msg_id, scoped, user, level)

    def _wrap_v3(self, msg_id: int, scoped: bytes, user: bytes, level: int) -> bytes:
        """Build a v3 message; level 0 noAuthNoPriv, 1 authNoPriv, 3 authPriv."""
        boots, etime = self.boots, self._engine_time()
        if level == 3:
            self._salt = (self._salt + 1) & M64
            salt = self._salt.to_bytes(8, "big")
            iv = boots.to_bytes(4, "big") + etime.to_bytes(4, "big") + salt
            enc = Cipher(algorithms.AES(self._priv_key), CFB(iv)).encryptor()
            data = octet_string(enc.update(scoped) + enc.finalize())
        else:
            salt = b""
            data = scoped
        pre = octet_string(self.engine_id) + integer(boots) + integer(etime) + octet_string(user)
        rest = octet_string(b"\x00" * 12 if level else b"") + octet_string(salt)
        sp_seq = tlv(0x30, pre + rest)
        sp = octet_string(sp_seq)
        glob = tlv(0x30, integer(msg_id) + integer(MAX_UDP) + octet_string(bytes((level,))) + integer(3))
        body = b"\x02\x01\x03" + glob + sp + data
        msg = header(0x30, len(body)) + body
        if not level:
            return msg
        off = (
            (len(msg) - len(body))
            + 3
            + len(glob)
            + (len(sp) - len(sp_seq))
            + (len(sp_seq) - len(pre) - len(rest))
        )
        off += len(pre) + 2
        mac = hmac.new(self._auth_key, msg, hashlib.sha1).digest()[:12]
        return msg[:off] + mac + msg[off + 12 :]

    # ----- PDUs
    def _pdu(self, buf: bytes, pos: int, budget: int) -> bytes | None:
        tag, s, _e = read_tlv(buf, pos)
        b = read_tlv(buf, s)[2]
        reqid = buf[s:b]
        x, b = read_integer(buf, b)
        y, b = read_integer(buf, b)
        _, vs, ve = read_tlv(buf, b)
        req: list[tuple[int, ...]] = []
        p = vs
        while p < ve:
            _, ss, se = read_tlv(buf, p)
            _, os_, oe = read_tlv(buf, ss)
            req.append(_oid(buf, os_, oe))
            p = se
        now = self.clock()
        cache: dict[str, dict[str, int]] = {}
        status = b"\x02\x01\x00\x02\x01\x00"
        vbs: list[bytes] = []
        if tag == PDU_GET:
            for o in req:
                i = self.layout.index.get(o)
                vbs.append(
                    self._vb(i, now, cache) if i is not None else _vb_raw(oid_tlv(o), NO_SUCH_INSTANCE)
                )
        elif tag == PDU_GETNEXT:
            for o in req:
                i = bisect_right(self._oids, o)
                vbs.append(self._vb(i, now, cache) if i < self._n else _vb_raw(oid_tlv(o), END_OF_MIB_VIEW))
        elif tag == PDU_GETBULK:
            vbs = self._bulk(req, max(0, x), max(0, y), now=now, cache=cache, budget=budget)
        elif tag == PDU_SET:
            status = b"\x02\x01" + bytes((ERR_NOT_WRITABLE,)) + b"\x02\x01\x01"
            vbs = [_vb_raw(oid_tlv(o), b"\x05\x00") for o in req]
        else:
            return None
        self.varbinds += len(vbs)
        vbl = b"".join(vbs)
        body = reqid + status + header(0x30, len(vbl)) + vbl
        return header(PDU_RESPONSE, len(body)) + body

    def _bulk(
        self,
        req: list[tuple[int, ...]],
        non_rep: int,
        max_rep: int,
        *,
        now: float,
        cache: dict[str, dict[str, int]],
        budget: int,
    ) -> list[bytes]:
        out: list[bytes] = []
        size = 0
        n = self._n
        for o in req[:non_rep]:
            i = bisect_right(self._oids, o)
            vb = self._vb(i, now, cache) if i < n else _vb_raw(oid_tlv(o), END_OF_MIB_VIEW)
            out.append(vb)
            size += len(vb)
        rep = req[non_rep:]
        if not rep:
            return out
        cursors = [bisect_right(self._oids, o) for o in rep]
        ends: list[bytes | None] = [None] * len(rep)
        for _ in range(max_rep):
            row: list[bytes] = []
            row_size = 0
            live = False
            for j, i in enumerate(cursors):
                if i < n:
                    vb = self._vb(i, now, cache)
                    cursors[j] = i + 1
                    live = True
                else:
                    end = ends[j]
                    if end is None:
                        last = self._enc[n - 1] if n and i > 0 else oid_tlv(rep[j])
                        end = ends[j] = _vb_raw(last if i > 0 else oid_tlv(rep[j]), END_OF_MIB_VIEW)
                    vb = end
                row.append(vb)
                row_size += len(vb)
            if size + row_size > budget and out:
                break
            out.extend(row)
            size += row_size
            if not live:
                break
        return out

    def _vb(self, i: int, now: float, cache: dict[str, dict[str, int]]) -> bytes:
        g = self._get[i]
        kind = g[0]
        val: bytes
        if kind == M.STATIC:
            val = g[1]
        elif kind == M.UPTIME:
            val = unsigned(0x43, int(self.model.device_state(self.device, now)["sys_uptime_ticks"]))
        elif kind == M.LLDP:
            val = M.lldp_value(self.model, self.device, g[1], g[2], now)
        else:
            port: str = g[1]
            c = cache.get(port)
            if c is None:
                hit = self._snap.get(port)
                if hit is not None and 0.0 <= now - hit[0] < self.cache_s:
                    c = hit[1]
                else:
                    c = self.model.port_counters(self.device, port, now)
                    self._snap[port] = (now, c)
                cache[port] = c
            if kind == M.C64:
                val = unsigned(0x46, c[g[2]] & M64)
            elif kind == M.C32:
                val = unsigned(0x41, c[g[2]] & M32)
            elif kind == M.GAUGE:
                val = unsigned(0x42, min(c[g[2]] * g[3], M32))
            elif kind == M.INT_MAP:
                val = integer(g[3].get(c[g[2]], 0))
            else:  # SUM64
                val = unsigned(0x46, sum(c[k] for k in g[2]) & M64)
        oid = self._enc[i]
        n = len(oid) + len(val)
        return header(0x30, n) + oid + val


def _vb_raw(oid_tlv: bytes, val: bytes) -> bytes:
    return header(0x30, len(oid_tlv) + len(val)) + oid_tlv + val


async def start_agent(
    model: TrafficModel,
    device: str,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    community: str | None = "public",
    v3_user: Mapping[str, str] | None = None,
    faults: Iterable[str] = (),
    clock: Callable[[], float] = time.time,
    engine_id: bytes | None = None,
    mibs: Iterable[str] | None = None,
    cache_s: float = 0.1,
) -> Agent:
    """Bind a UDP socket on ``host:port`` (0 = ephemeral) and serve ``device``'s MIBs.

    ``v3_user``: ``{"user", "auth_key", "priv_key"}`` plus optional ``"auth_protocol"`` ("sha", the
    only one) and ``"priv_protocol"`` ("aes", AES-128). ``community=None`` disables v2c.
    ``faults``: fault kinds (``"snmp-timeout"`` or ``"DEVICE:snmp-timeout"``): drop every request.
    ``mibs``: MIB module names to serve (default: :func:`fabriccfg.mock.mibs.mibs_for` the platform).
    ``cache_s``: a port's counters are computed once and reused for requests within this many seconds
    of model time (like a real agent's counter cache; a walk sees one consistent snapshot). 0 disables.
    """
    agent = Agent(
        model,
        device,
        community=community,
        v3_user=v3_user,
        faults=faults,
        clock=clock,
        engine_id=engine_id,
        mibs=mibs,
        cache_s=cache_s,
    )
    loop = asyncio.get_running_loop()
    await loop.create_datagram_endpoint(lambda: agent, local_addr=(host, port))
    return agent
