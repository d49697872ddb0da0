"""Async SNMP poller: pysnmp 7.1 for transport, retries, timeouts and v3 USM; a lean BER path for varbinds.

Design:

- One ``SnmpEngine`` per event loop (building one costs ~100 ms; an engine is bound to its loop),
  one UDP socket for all agents, many agents walked concurrently (``asyncio.gather``).
- Numeric OIDs only, no MIB lookups (``resolve_with_mib`` never runs: we bypass pysnmp's varbind
  layer altogether).
- A multi-column GETBULK loop per device (or one per table, concurrently: :meth:`walk_groups`), with
  sysUpTime as a non-repeater in the first request, max-repetitions = ``max_varbinds // columns`` and,
  from the second poll on, trimmed to the row count seen last time (+1 to see the end).
- The hot path: request PDUs carry a pre-encoded varbind list (a pyasn1 ``Any``), and the engine's
  message-processing models decode responses with a spec whose varbind list is an ``Any`` too. So
  pyasn1 only handles the message/PDU header (and USM for v3); :mod:`fabriccfg.telemetry.ber` walks
  the varbinds with ``int.from_bytes`` and byte slices, matching columns by OID byte prefix.
- The engine's receive buffer is raised to 4 MB and in-flight requests are capped: without that,
  replies from many agents at once overflowed the default ~200 KB buffer and each drop cost a
  timeout (seen as 2-10x wall time in the benchmark).

Measured (``benchmarks/bench_poller.py``, 2-vCPU VM shared with other jobs at load 4-6, 12 mock
agents of a 256-GPU RoCE fabric in another process, 24 columns = 4,224 varbinds per device, CPU of
the poller process per useful varbind; medians of 3 runs, +-20 %):

==============================================  ==========  ==========
client                                          CPU us/vb   varbinds/s
==============================================  ==========  ==========
pysnmp ``bulk_walk_cmd`` per column (naive)     275-330     1-2k
pysnmp multi-column ``bulk_cmd``, lookupMib=F   130-170     2-5k
this poller, v2c, 64 varbinds per request       11-13       35-45k
this poller, v2c, 256 varbinds per request      3.7-5.7     33-120k
this poller, v3 SHA/AES, 256 per request        6.6-9.4     23-96k
... plus building Sample objects                5.6-7.8     30-70k
net-snmp snmpbulkwalk -Cr25 (process/column)    27-34       13-52k
prometheus-snmp-exporter 0.21 (Go), 4 scrapes   8-10.5      27-84k
==============================================  ==========  ==========

So ~60x less CPU than naive pysnmp, about half the Go exporter's CPU per varbind; throughput is
at or above the exporter's in the same run (wall numbers swing with the host's load; compare
ratios within one run).

What limits it now (cProfile): per request, pysnmp's pyasn1 encode of the message header and
decode of the response header plus the message-processing/dispatcher layers cost ~0.3-0.4 ms
(~1.5 us per varbind at 256 per request; at 64 per request this fixed cost dominates, hence the
11 us). Per varbind: BER walk ~0.5-0.8 us, the column loop ~0.5 us, turning rows into ``Sample``
objects ~1.5-2 us. v3 adds HMAC-SHA and AES per message (~+2-3 us per varbind at 256). Wall time
is then round-trip latency (a walk is a chain of requests) and, on a busy host, scheduling: one
process uses one core, so beyond ~150-250k varbinds/s, shard devices over processes (``watch
--shard``).
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from fabriccfg.targets import Endpoint, SnmpAccess
from fabriccfg.telemetry import ber
from fabriccfg.telemetry.oids import SYS_UPTIME, Oid

SYS_UPTIME_ENC = ber.encode_oid(SYS_UPTIME)
SYS_UPTIME_0_ENC = ber.encode_oid((*SYS_UPTIME, 0))
DEFAULT_MAX_VARBINDS = 256
"""Varbinds asked for per GETBULK (max-repetitions = this // columns; the Go exporter asks 25 per
column, i.e. more). Agents that cap replies (pysnmp's responder: 64) truncate, and the loop simply
continues from the last OID it got."""
MAX_REQUESTS_PER_WALK = 10_000
RCVBUF_BYTES = 4 * 1024 * 1024

_AUTH_PROTOCOLS = {
    "MD5": "USM_AUTH_HMAC96_MD5", "SHA": "USM_AUTH_HMAC96_SHA", "SHA1": "USM_AUTH_HMAC96_SHA",
    "SHA224": "USM_AUTH_HMAC128_SHA224", "SHA256": "USM_AUTH_HMAC192_SHA256",
    "SHA384": "USM_AUTH_HMAC256_SHA384", "SHA512": "USM_AUTH_HMAC384_SHA512",
}
_PRIV_PROTOCOLS = {
    "DES": "USM_PRIV_CBC56_DES", "3DES": "USM_PRIV_CBC168_3DES", "AES": "USM_PRIV_CFB128_AES",
    "AES128": "USM_PRIV_CFB128_AES", "AES192": "USM_PRIV_CFB192_AES", "AES256": "USM_PRIV_CFB256_AES",
}


class SnmpConfigError(ValueError):
    """The SNMP access settings cannot be used (message is safe to print)."""


@dataclass(frozen=True)
class SnmpTarget:
    """One agent to poll (built from an :class:`Endpoint`)."""

    name: str
    host: str
    port: int
    access: SnmpAccess = field(repr=False)
    timeout: float = 1.0
    retries: int = 2
    context: str = ""

    @classmethod
    def from_endpoint(cls, ep: Endpoint, *, timeout: float = 1.0, retries: int = 2) -> SnmpTarget:
        if ep.snmp is None:
            raise SnmpConfigError(f"{ep.name}: no SNMP access configured")
        return cls(ep.name, ep.host, ep.snmp_port or 161, ep.snmp, timeout, retries)

    def cache_key(self) -> tuple[object, ...]:
        a = self.access
        return (self.name, self.host, self.port, self.timeout, self.retries, self.context, a.version,
                a.community, a.user, a.auth_protocol, a.auth_key, a.priv_protocol, a.priv_key)


Row = tuple[bytes, int | bytes | None]
"""(index suffix as BER sub-identifier bytes, value)."""


@dataclass
class WalkResult:
    target: str
    columns: dict[Oid, list[Row]]
    uptime: int | None = None
    error: str | None = None
    started: float = 0.0
    finished: float = 0.0
    requests: int = 0
    varbinds: int = 0
    """Varbinds decoded (including the ones past a column's end that GETBULK returns)."""

    @property
    def useful_varbinds(self) -> int:
        return sum(len(r) for r in self.columns.values())


_INDEX_CACHE: dict[bytes, tuple[int, ...]] = {}


def index_of(suffix: bytes) -> tuple[int, ...]:
    """Decoded row index of a suffix (cached: the same few hundred indexes repeat every poll)."""
    idx = _INDEX_CACHE.get(suffix)
    if idx is None:
        idx = ber.decode_subids(suffix)
        if len(_INDEX_CACHE) < 200_000:
            _INDEX_CACHE[suffix] = idx
    return idx


class _LeanSpecs:
    """pyasn1 specs whose varbind list is an opaque ``Any``: pysnmp decodes message header, USM and
    PDU header, and hands us the varbind list as bytes for :func:`ber.decode_varbind_list`."""

    def __init__(self) -> None:
        from pyasn1.type import namedtype, univ
        from pysnmp.proto import rfc1901, rfc1902, rfc1905
        from pysnmp.proto.mpmod import rfc3412

        class LeanVarBinds(univ.Any):  # type: ignore[misc]
            """Raw VarBindList bytes. ``clear()`` is what USM engine-ID discovery calls on a
            cloned request PDU (rfc3414 service.py): make it an empty list in place."""

            def clear(self) -> LeanVarBinds:
                self._value = b"\x30\x00"
                return self

        def lean_pdu(name: str, tag_set: Any, middle: tuple[str, str]) -> Any:
            """An RFC 3416 PDU (request-id, two INTEGERs, varbinds) whose varbinds stay raw bytes."""

            class LeanPDU(univ.Sequence):  # type: ignore[misc]
                tagSet = tag_set
                componentType = namedtype.NamedTypes(
                    namedtype.NamedType("request-id", rfc1902.Integer32()),
                    *(namedtype.NamedType(n, univ.Integer()) for n in middle),
                    namedtype.NamedType("variable-bindings", LeanVarBinds()),
                )

            LeanPDU.__name__ = LeanPDU.__qualname__ = name
            return LeanPDU

        errors = ("error-status", "error-index")
        LeanResponsePDU = lean_pdu("LeanResponsePDU", rfc1905.ResponsePDU.tagSet, errors)
        LeanBulkPDU = lean_pdu(
            "LeanBulkPDU", rfc1905.GetBulkRequestPDU.tagSet, ("non-repeaters", "max-repetitions")
        )
        LeanGetPDU = lean_pdu("LeanGetPDU", rfc1905.GetRequestPDU.tagSet, errors)

        pdus = [nt if nt.name != "response" else namedtype.NamedType("response", LeanResponsePDU())
                for nt in rfc1905.PDUs.componentType.namedTypes]

        class LeanPDUs(univ.Choice):  # type: ignore[misc]
            componentType = namedtype.NamedTypes(*pdus)

        class LeanV2cMessage(univ.Sequence):  # type: ignore[misc]
            componentType = namedtype.NamedTypes(
                namedtype.NamedType("version", rfc1901.version),
                namedtype.NamedType("community", univ.OctetString()),
                namedtype.NamedType("data", LeanPDUs()),
            )

        class LeanScopedPDU(univ.Sequence):  # type: ignore[misc]
            componentType = namedtype.NamedTypes(
                namedtype.NamedType("contextEngineId", univ.OctetString()),
                namedtype.NamedType("contextName", univ.OctetString()),
                namedtype.NamedType("data", LeanPDUs()),
            )

        class LeanScopedPduData(univ.Choice):  # type: ignore[misc]
            componentType = namedtype.NamedTypes(
                namedtype.NamedType("plaintext", LeanScopedPDU()),
                namedtype.NamedType("encryptedPDU", univ.OctetString()),
            )

        v3 = rfc3412.SNMPv3Message.componentType

        class LeanV3Message(univ.Sequence):  # type: ignore[misc]
            componentType = namedtype.NamedTypes(
                v3.namedTypes[0], v3.namedTypes[1], v3.namedTypes[2],
                namedtype.NamedType("msgData", LeanScopedPduData()),
            )

        self.bulk_pdu = LeanBulkPDU
        self.get_pdu = LeanGetPDU
        self.v2c_message = LeanV2cMessage
        self.v3_message = LeanV3Message
        self.any = LeanVarBinds


_SPECS: _LeanSpecs | None = None


def _specs() -> _LeanSpecs:
    global _SPECS
    if _SPECS is None:
        _SPECS = _LeanSpecs()
    return _SPECS


_request_ids = itertools.count(1)


def _raised_in_snmp_stack(exc: BaseException) -> bool:
    """True when ``exc`` came out of pysnmp or pyasn1 code (a reply they could not decode)."""
    tb = exc.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if "/pysnmp/" in name or "/pyasn1/" in name:
            return True
        tb = tb.tb_next
    return False


class _EngineSlot:
    """One pysnmp engine with the lean specs installed, its command generator and LCD."""

    def __init__(self) -> None:
        from pysnmp.entity.engine import SnmpEngine
        from pysnmp.entity.rfc3413 import cmdgen
        from pysnmp.hlapi.v3arch.asyncio.lcd import CommandGeneratorLcdConfigurator

        specs = _specs()
        self.engine: Any = SnmpEngine()
        for model, mp in self.engine.message_processing_subsystems.items():
            if int(model) == 1:
                mp._snmpMsgSpec = specs.v2c_message()
            elif int(model) == 3:
                mp._snmpMsgSpec = specs.v3_message()
        self.cmdgen: Any = cmdgen.CommandGenerator()
        self.lcd: Any = CommandGeneratorLcdConfigurator()
        self.users: dict[str, tuple[object, ...]] = {}
        self.tuned = False

    def close(self) -> None:
        if self.engine.transport_dispatcher is not None:
            self.engine.close_dispatcher()

    async def tune_socket(self) -> None:
        """A large receive buffer on the engine's one UDP socket: replies of many agents arrive at
        once (up to ``max_inflight`` x ~12 KB); the default ~200 KB overflows, and a dropped reply
        costs a whole timeout."""
        from pysnmp.carrier.asyncio.dgram import udp

        try:
            tr = self.engine.transport_dispatcher.get_transport(udp.DOMAIN_NAME)
        except Exception:
            return
        lport = getattr(tr, "_lport", None)
        if isinstance(lport, asyncio.Future):
            await asyncio.shield(lport)
        sock = tr.transport.get_extra_info("socket") if getattr(tr, "transport", None) is not None else None
        if sock is not None:
            for opt in ("SO_RCVBUFFORCE", "SO_RCVBUF"):  # FORCE works for root beyond rmem_max
                try:
                    sock.setsockopt(socket.SOL_SOCKET, getattr(socket, opt), RCVBUF_BYTES)
                    break
                except (OSError, AttributeError):
                    continue
            self.tuned = True


class SnmpPoller:
    """One pysnmp ``SnmpEngine`` per event loop, polling many agents concurrently.

    Use as ``async with SnmpPoller() as p: await p.walk(target, columns)``; the engine is built
    in the running loop (engines are bound to their loop) and ``close()`` closes its dispatcher.
    """

    def __init__(self, *, max_varbinds: int = DEFAULT_MAX_VARBINDS, concurrency: int = 64,
                 max_inflight: int = 128) -> None:
        self.max_varbinds = max(1, max_varbinds)
        self.concurrency = max(1, concurrency)
        self.max_inflight = max(1, max_inflight)
        self._slots: list[_EngineSlot] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._targets: dict[tuple[object, ...], tuple[_EngineSlot, str]] = {}
        self._rows_hint: dict[tuple[str, bytes], int] = {}
        self._sem: asyncio.Semaphore | None = None
        self._inflight: asyncio.Semaphore | None = None
        self._addresses: dict[str, tuple[str, int]] = {}
        """Target name -> the (ip, port) pysnmp sends to (replies come from there)."""
        self._garbage: dict[tuple[str, int] | None, tuple[int, str, float]] = {}
        """Source address -> (replies pysnmp could not decode, the last decoder error, when)."""
        self._prev_handler: Any = None

    @property
    def _engine(self) -> Any:
        """The (first) engine; None when closed."""
        return self._slots[0].engine if self._slots else None

    # --- lifecycle -------------------------------------------------------------------------
    async def __aenter__(self) -> SnmpPoller:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    def open(self) -> None:
        """Build the engine in the running loop (idempotent)."""
        loop = asyncio.get_running_loop()
        if self._slots:
            if self._loop is not loop:
                raise RuntimeError("SnmpPoller is bound to another event loop")
            return
        self._loop = loop
        self._slots.append(_EngineSlot())
        self._sem = asyncio.Semaphore(self.concurrency)
        self._inflight = asyncio.Semaphore(self.max_inflight)
        self._prev_handler = loop.get_exception_handler()
        loop.set_exception_handler(self._on_loop_error)

    def close(self) -> None:
        for slot in self._slots:
            slot.close()
        self._slots.clear()
        self._targets.clear()
        if self._loop is not None and self._loop.get_exception_handler() == self._on_loop_error:
            self._loop.set_exception_handler(self._prev_handler)

    def _on_loop_error(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """pysnmp decodes each datagram in a loop callback; a malformed reply raises there, and asyncio would
        print the pyasn1 traceback on stderr. Count it against the sender instead: the walk that then
        times out reports one line saying why. Anything else goes to the previous handler."""
        exc = context.get("exception")
        if exc is None or not _raised_in_snmp_stack(exc):
            if self._prev_handler is not None:
                self._prev_handler(loop, context)
            else:
                loop.default_exception_handler(context)
            return
        args = getattr(context.get("handle"), "_args", None) or ()
        source = next((a for a in args if isinstance(a, tuple) and len(a) >= 2 and isinstance(a[0], str)),
                      None)
        key = (str(source[0]), int(source[1])) if source is not None else None
        count = self._garbage.get(key, (0, "", 0.0))[0]
        self._garbage[key] = (count + 1, type(exc).__name__, time.monotonic())

    def _explain(self, target: SnmpTarget, error: str, since: float) -> str:
        """``error``, or why the agent's replies were unreadable when pysnmp could not decode them."""
        key = self._addresses.get(target.name, (target.host, target.port))
        got = self._garbage.get(key) or self._garbage.get(None)
        if got is None or got[2] < since:
            return error
        return f"unreadable SNMP reply (not a valid SNMP message; the decoder raised {got[1]}); {error}"

    # --- target configuration --------------------------------------------------------------
    def _slot_for(self, user: str | None, creds: tuple[object, ...]) -> _EngineSlot:
        """The engine to use for a v3 ``user`` with ``creds``: pysnmp keeps one key set per user name
        per engine (re-adding the user drops the keys localized for every agent), so the same user
        name with different keys (another fabric, per-device keys) gets its own engine."""
        if user is None:
            return self._slots[0]
        for slot in self._slots:
            if slot.users.get(user, creds) == creds:
                slot.users[user] = creds
                return slot
        slot = _EngineSlot()
        slot.users[user] = creds
        self._slots.append(slot)
        return slot

    async def _configure(self, target: SnmpTarget) -> tuple[_EngineSlot, str]:
        key = target.cache_key()
        cached = self._targets.get(key)
        if cached is not None:
            return cached
        from pysnmp.hlapi.v3arch.asyncio import CommunityData, UdpTransportTarget, UsmUserData
        from pysnmp.hlapi.v3arch.asyncio import auth as hauth

        acc = target.access
        auth: Any
        if acc.version == "2c":
            if not acc.community:
                raise SnmpConfigError(f"{target.name}: SNMP v2c needs a community")
            auth = CommunityData(acc.community, mpModel=1)  # noqa: S508 (v2c is the user's choice)
            slot = self._slot_for(None, ())
        else:
            if not acc.user:
                raise SnmpConfigError(f"{target.name}: SNMP v3 needs a user")
            kwargs: dict[str, Any] = {}
            if acc.auth_key:
                name = _AUTH_PROTOCOLS.get((acc.auth_protocol or "SHA").upper().replace("-", ""))
                if name is None:
                    raise SnmpConfigError(f"{target.name}: unknown SNMP auth protocol {acc.auth_protocol!r}")
                kwargs.update(authKey=acc.auth_key, authProtocol=getattr(hauth, name))
                if acc.priv_key:
                    pname = _PRIV_PROTOCOLS.get((acc.priv_protocol or "AES").upper().replace("-", ""))
                    if pname is None:
                        raise SnmpConfigError(
                            f"{target.name}: unknown SNMP priv protocol {acc.priv_protocol!r}")
                    kwargs.update(privKey=acc.priv_key, privProtocol=getattr(hauth, pname))
            auth = UsmUserData(acc.user, **kwargs)  # noqa: S509 (authPriv unless the user chose less)
            creds = (acc.auth_protocol, acc.auth_key, acc.priv_protocol, acc.priv_key)
            slot = self._slot_for(acc.user, creds)
        transport = await UdpTransportTarget.create((target.host, target.port), timeout=target.timeout,
                                                    retries=target.retries)
        sent_to = getattr(transport, "transport_address", None) or (target.host, target.port)
        self._addresses[target.name] = (str(sent_to[0]), int(sent_to[1]))
        addr_name, _params = slot.lcd.configure(slot.engine, auth, transport, target.context)
        if not slot.tuned:
            await slot.tune_socket()
        entry = (slot, addr_name)
        self._targets[key] = entry
        return entry

    # --- one request -----------------------------------------------------------------------
    async def _request(self, target: SnmpTarget, pdu: Any) -> tuple[str | None, int, int, bytes]:
        """Send ``pdu``; -> (error indication, error-status, error-index, raw varbind list)."""
        slot, addr_name = await self._configure(target)
        assert self._loop is not None
        fut: asyncio.Future[tuple[Any, Any]] = self._loop.create_future()

        def done(_engine: Any, _handle: Any, error_indication: Any, response: Any, _ctx: Any) -> None:
            if not fut.done():
                fut.set_result((error_indication, response))

        from pysnmp.error import PySnmpError

        assert self._inflight is not None
        sent = time.monotonic()
        async with self._inflight:
            try:
                slot.cmdgen.send_pdu(slot.engine, addr_name, None, target.context, pdu, done, None)
            except PySnmpError as exc:
                return f"send failed: {exc}", 0, 0, b""
            error_indication, response = await fut
        if error_indication:
            return self._explain(target, str(error_indication), sent), 0, 0, b""
        try:
            status = int(response.getComponentByPosition(1))
            index = int(response.getComponentByPosition(2))
            raw = response.getComponentByPosition(3).asOctets()
        except Exception as exc:  # any pyasn1 decoding failure of a hostile reply
            return f"malformed SNMP response: {type(exc).__name__}", 0, 0, b""
        return None, status, index, raw

    def _bulk_pdu(self, non_repeaters: int, max_repetitions: int, varbinds: bytes) -> Any:
        specs = _specs()
        pdu = specs.bulk_pdu()
        pdu.setComponentByPosition(0, next(_request_ids) & 0x7FFFFFFF, verifyConstraints=False)
        pdu.setComponentByPosition(1, non_repeaters, verifyConstraints=False)
        pdu.setComponentByPosition(2, max_repetitions, verifyConstraints=False)
        pdu.setComponentByPosition(3, specs.any(varbinds), verifyConstraints=False)
        return pdu

    def _get_pdu(self, varbinds: bytes) -> Any:
        specs = _specs()
        pdu = specs.get_pdu()
        pdu.setComponentByPosition(0, next(_request_ids) & 0x7FFFFFFF, verifyConstraints=False)
        pdu.setComponentByPosition(1, 0, verifyConstraints=False)
        pdu.setComponentByPosition(2, 0, verifyConstraints=False)
        pdu.setComponentByPosition(3, specs.any(varbinds), verifyConstraints=False)
        return pdu

    # --- public API ------------------------------------------------------------------------
    async def get(self, target: SnmpTarget,
                  oids: Sequence[Oid]) -> tuple[str | None, list[int | bytes | None]]:
        """GET scalars; -> (error, values in order)."""
        if not self._slots:
            self.open()
        encoded = [ber.encode_oid(o) for o in oids]
        pdu = self._get_pdu(ber.encode_null_varbinds(encoded))
        err, status, index, raw = await self._request(target, pdu)
        if err:
            return err, []
        if status:
            return f"error-status {status} at varbind {index}", []
        try:
            vbs = ber.decode_varbind_list(raw)
        except ber.BerError as exc:
            return f"malformed response: {exc}", []
        return None, [ber.value_of(tag, val) for _oid, tag, val in vbs]

    async def walk(self, target: SnmpTarget, columns: Sequence[Oid], *, uptime: bool = True) -> WalkResult:
        """All rows of ``columns`` (any tables) in one multi-column GETBULK loop.

        ``uptime`` adds sysUpTime as a non-repeater to the first request (no extra round trip).
        Rows of each column are in agent order; a column that errors or times out ends the walk with
        ``error`` set and the rows gathered so far.
        """
        if not self._slots:
            self.open()
        assert self._sem is not None
        async with self._sem:
            return await self._walk(target, columns, uptime)

    async def walk_groups(self, target: SnmpTarget, groups: Sequence[Sequence[Oid]]) -> WalkResult:
        """Walk each group of columns (e.g. one per table) as its own GETBULK loop, concurrently, and
        merge the results. Same requests and varbinds as one loop, but several in flight per agent:
        a walk is a chain of round trips, so on a busy host its wall time is scheduling latency."""
        if not self._slots:
            self.open()
        assert self._sem is not None
        groups = [g for g in groups if g]
        if len(groups) <= 1:
            return await self.walk(target, groups[0] if groups else [])
        async with self._sem:
            parts = await asyncio.gather(*(self._walk(target, g, i == 0) for i, g in enumerate(groups)))
        merged = WalkResult(target.name, {}, uptime=parts[0].uptime, started=min(p.started for p in parts),
                            finished=max(p.finished for p in parts))
        for part in parts:
            merged.columns.update(part.columns)
            merged.requests += part.requests
            merged.varbinds += part.varbinds
            if part.error and merged.error is None:
                merged.error = part.error
        return merged

    async def _walk(self, target: SnmpTarget, columns: Sequence[Oid], want_uptime: bool) -> WalkResult:
        result = WalkResult(target.name, {c: [] for c in columns}, started=time.time())
        prefixes = [ber.encode_oid(c) for c in columns]
        plens = [len(p) for p in prefixes]
        rows: list[list[Row]] = [result.columns[c] for c in columns]
        last = list(prefixes)
        active = list(range(len(columns)))
        hint_key = (target.name, b"".join(prefixes))
        expected = self._rows_hint.get(hint_key)
        first = want_uptime
        uptime_tag = ber.TAG_TIMETICKS
        end_tag = ber.TAG_END_OF_MIB_VIEW
        decode = ber.decode_varbind_list
        from_bytes = int.from_bytes
        unsigned = ber.UNSIGNED_TAGS
        budget = self.max_varbinds
        try:
            while active or first:
                if result.requests >= MAX_REQUESTS_PER_WALK:
                    result.error = "too many requests (agent returns non-increasing OIDs?)"
                    break
                k = len(active)
                reps = max(1, budget // k) if k else 0
                if expected is not None and k:
                    done_rows = max((len(rows[i]) for i in active), default=0)
                    reps = max(1, min(reps, expected - done_rows + 1))
                nonrep = [SYS_UPTIME_ENC] if first else []
                varbinds = ber.encode_null_varbinds(nonrep + [last[i] for i in active])
                pdu = self._bulk_pdu(len(nonrep), reps, varbinds)
                err, status, eindex, raw = await self._request(target, pdu)
                result.requests += 1
                if err:
                    result.error = err
                    break
                if status:
                    result.error = f"error-status {status} at varbind {eindex}"
                    break
                vbs = decode(raw)
                result.varbinds += len(vbs)
                if first:
                    first = False
                    if vbs:
                        oid, tag, val = vbs[0]
                        if tag == uptime_tag and oid == SYS_UPTIME_0_ENC:
                            result.uptime = from_bytes(val, "big")
                        vbs = vbs[1:]
                if not k:
                    break
                if not vbs:
                    result.error = "empty GETBULK response"
                    break
                ended = [False] * len(columns)
                pos = 0
                for oid, tag, val in vbs:
                    ci = active[pos]
                    pos += 1
                    if pos == k:
                        pos = 0
                    if ended[ci]:
                        continue
                    plen = plens[ci]
                    if (tag == end_tag or len(oid) <= plen or not oid.startswith(prefixes[ci])
                            or oid == last[ci]):
                        ended[ci] = True
                        continue
                    last[ci] = oid
                    if tag in unsigned:
                        value: int | bytes | None = from_bytes(val, "big")
                    elif tag == 2:
                        value = from_bytes(val, "big", signed=True)
                    elif tag >= 0x80 or tag == 5:
                        value = None
                    else:
                        value = val
                    rows[ci].append((oid[plen:], value))
                active = [ci for ci in active if not ended[ci]]
        except ber.BerError as exc:
            result.error = f"malformed response: {exc}"
        except asyncio.CancelledError:
            raise
        if result.error is None:
            self._rows_hint[hint_key] = max((len(r) for r in rows), default=0)
        result.finished = time.time()
        return result

    async def walk_many(self, jobs: Iterable[tuple[SnmpTarget, Sequence[Oid]]]) -> list[WalkResult]:
        """Walk several agents concurrently (bounded by ``concurrency``); results in job order."""
        return list(await asyncio.gather(*(self.walk(t, cols) for t, cols in jobs)))

    async def walk_many_groups(
            self, jobs: Iterable[tuple[SnmpTarget, Sequence[Sequence[Oid]]]]) -> list[WalkResult]:
        """:meth:`walk_groups` on several agents concurrently; results in job order."""
        return list(await asyncio.gather(*(self.walk_groups(t, groups) for t, groups in jobs)))
