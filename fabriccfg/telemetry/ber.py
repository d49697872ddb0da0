"""A lean BER codec for SNMP variable bindings (the hot path of the poller).

pyasn1 builds an object tree per varbind and dominates the poller's CPU (~200 us per varbind,
``netmiko_pysnmp.md`` §6). The poller only needs (OID, value) pairs: this module walks the bytes
with ``int.from_bytes`` and slices and keeps OIDs as their BER *content bytes*. OID encoding is a
concatenation of sub-identifier encodings, so a column's encoded OID is a byte prefix of every
instance OID in it: matching a column is ``bytes.startswith`` and the row index is the decoded
suffix. pysnmp still does transport, message processing and USM (v3 auth/priv); see
:mod:`fabriccfg.telemetry.snmp` for how the varbind list reaches this module undecoded.

It is also the mock SNMP agent's codec (:mod:`fabriccfg.mock.snmp`, :mod:`fabriccfg.mock.mibs`): one
BER implementation for both ends, so the poller and the agent cannot disagree on the encoding.
"""

from __future__ import annotations

from collections.abc import Iterable

# SNMP application / context tags (RFC 2578, RFC 3416)
TAG_INTEGER = 0x02
TAG_OCTET_STRING = 0x04
TAG_NULL = 0x05
TAG_OID = 0x06
TAG_SEQUENCE = 0x30
TAG_IPADDRESS = 0x40
TAG_COUNTER32 = 0x41
TAG_GAUGE32 = 0x42
TAG_TIMETICKS = 0x43
TAG_OPAQUE = 0x44
TAG_COUNTER64 = 0x46
TAG_NO_SUCH_OBJECT = 0x80
TAG_NO_SUCH_INSTANCE = 0x81
TAG_END_OF_MIB_VIEW = 0x82

EXCEPTION_TAGS = frozenset({TAG_NO_SUCH_OBJECT, TAG_NO_SUCH_INSTANCE, TAG_END_OF_MIB_VIEW})
UNSIGNED_TAGS = frozenset({TAG_COUNTER32, TAG_GAUGE32, TAG_TIMETICKS, TAG_COUNTER64})


class BerError(ValueError):
    """Malformed BER in a response."""


def encode_length(n: int) -> bytes:
    if n < 0x80:
        return bytes((n,))
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return bytes((0x80 | len(body),)) + body


def header(tag: int, n: int) -> bytes:
    """Tag and length octets of a TLV with ``n`` content bytes (short forms spelled out: agent hot path)."""
    if n < 0x80:
        return bytes((tag, n))
    if n < 0x100:
        return bytes((tag, 0x81, n))
    if n < 0x10000:
        return bytes((tag, 0x82, n >> 8, n & 0xFF))
    return bytes((tag,)) + encode_length(n)


def tlv(tag: int, content: bytes) -> bytes:
    return header(tag, len(content)) + content


def encode_oid(oid: Iterable[int]) -> bytes:
    """OID -> BER content bytes (no tag/length)."""
    parts = list(oid)
    if len(parts) < 2:
        raise ValueError(f"OID needs at least two arcs: {parts}")
    out = bytearray()
    first = parts[0] * 40 + parts[1]
    for arc in (first, *parts[2:]):
        if arc < 0x80:
            out.append(arc)
            continue
        chunk = []
        rest = arc
        while rest:
            chunk.append(rest & 0x7F)
            rest >>= 7
        chunk.reverse()
        out.extend(c | 0x80 for c in chunk[:-1])
        out.append(chunk[-1])
    return bytes(out)


def decode_subids(data: bytes) -> tuple[int, ...]:
    """BER OID content bytes without the first-two-arcs rule (a suffix) -> sub-identifiers."""
    out: list[int] = []
    acc = 0
    for b in data:
        acc = (acc << 7) | (b & 0x7F)
        if not b & 0x80:
            out.append(acc)
            acc = 0
    return tuple(out)


def decode_oid(data: bytes) -> tuple[int, ...]:
    """BER OID content bytes -> the full OID."""
    subs = decode_subids(data)
    if not subs:
        return ()
    first = subs[0]
    head = (first // 40, first % 40) if first < 80 else (2, first - 80)
    return head + subs[1:]


def encode_integer(value: int) -> bytes:
    """INTEGER content bytes (two's complement, minimal: -128 is one byte)."""
    return value.to_bytes(((value if value >= 0 else ~value).bit_length() + 8) // 8, "big", signed=True)


def encode_unsigned(value: int) -> bytes:
    """Counter/Gauge/TimeTicks/Counter64 content bytes (unsigned, with a 0x00 pad when needed)."""
    return value.to_bytes(value.bit_length() // 8 + 1, "big")


def integer(value: int) -> bytes:
    """An INTEGER TLV."""
    body = encode_integer(value)
    return header(TAG_INTEGER, len(body)) + body


def unsigned(tag: int, value: int) -> bytes:
    """A Counter32/Gauge32/TimeTicks/Counter64 TLV (``tag``)."""
    body = value.to_bytes(value.bit_length() // 8 + 1, "big")
    return header(tag, len(body)) + body


def octet_string(value: str | bytes) -> bytes:
    """An OCTET STRING TLV (``str`` as UTF-8)."""
    return tlv(TAG_OCTET_STRING, value.encode() if isinstance(value, str) else value)


def oid_tlv(oid: Iterable[int]) -> bytes:
    """An OBJECT IDENTIFIER TLV."""
    return tlv(TAG_OID, encode_oid(oid))


def read_tlv(buf: bytes, pos: int) -> tuple[int, int, int]:
    """The TLV at ``pos`` -> (tag, content start, content end); raises :class:`BerError` when truncated."""
    try:
        tag = buf[pos]
        n = buf[pos + 1]
    except IndexError:
        raise BerError("truncated TLV") from None
    pos += 2
    if n & 0x80:
        k = n & 0x7F
        n = int.from_bytes(buf[pos:pos + k], "big")
        pos += k
    end = pos + n
    if end > len(buf):
        raise BerError("truncated TLV")
    return tag, pos, end


def read_content(buf: bytes, pos: int) -> tuple[bytes, int]:
    """The TLV at ``pos`` -> (content bytes, end of the TLV)."""
    _, start, end = read_tlv(buf, pos)
    return buf[start:end], end


def read_integer(buf: bytes, pos: int) -> tuple[int, int]:
    """The INTEGER TLV at ``pos`` -> (value, end of the TLV)."""
    _, start, end = read_tlv(buf, pos)
    return int.from_bytes(buf[start:end], "big", signed=True), end


def encode_null_varbinds(oids: Iterable[bytes]) -> bytes:
    """A VarBindList TLV of (oid, NULL) for request PDUs; ``oids`` are BER OID content bytes."""
    body = b"".join(tlv(TAG_SEQUENCE, tlv(TAG_OID, o) + b"\x05\x00") for o in oids)
    return tlv(TAG_SEQUENCE, body)


def _length(buf: bytes, pos: int) -> tuple[int, int]:
    n = buf[pos]
    if n < 0x80:
        return n, pos + 1
    k = n & 0x7F
    if k == 0 or k > 4:
        raise BerError("unsupported BER length")
    return int.from_bytes(buf[pos + 1:pos + 1 + k], "big"), pos + 1 + k


VarBind = tuple[bytes, int, bytes]
"""(OID content bytes, value tag, value content bytes)."""


def decode_varbind_list(buf: bytes) -> list[VarBind]:
    """A VarBindList TLV -> [(oid content bytes, value tag, value content bytes)].

    Written as one flat loop over the buffer: this function is the poller's per-varbind cost.
    """
    try:
        if buf[0] != TAG_SEQUENCE:
            raise BerError("varbind list is not a SEQUENCE")
        n = buf[1]
        if n < 0x80:
            pos = 2
            end = 2 + n
        else:
            k = n & 0x7F
            pos = 2 + k
            end = pos + int.from_bytes(buf[2:pos], "big")
        if end > len(buf):
            raise BerError("truncated varbind list")
        out: list[VarBind] = []
        append = out.append
        while pos < end:
            # VarBind SEQUENCE header
            if buf[pos] != TAG_SEQUENCE:
                raise BerError("varbind is not a SEQUENCE")
            n = buf[pos + 1]
            pos += 2 if n < 0x80 else 2 + (n & 0x7F)
            # name
            if buf[pos] != TAG_OID:
                raise BerError("varbind name is not an OID")
            n = buf[pos + 1]
            if n < 0x80:
                start = pos + 2
            else:
                n, start = _length(buf, pos + 1)
            oid = buf[start:start + n]
            pos = start + n
            # value
            tag = buf[pos]
            n = buf[pos + 1]
            if n < 0x80:
                start = pos + 2
            else:
                n, start = _length(buf, pos + 1)
            pos = start + n
            append((oid, tag, buf[start:pos]))
        if pos != end:
            raise BerError("varbind list length mismatch")
        return out
    except IndexError:
        raise BerError("truncated varbind list") from None


def value_of(tag: int, content: bytes) -> int | bytes | None:
    """A varbind value as a Python value: int for numbers, bytes for strings/OIDs/addresses,
    None for NULL and the exceptions (noSuchObject, noSuchInstance, endOfMibView)."""
    if tag in UNSIGNED_TAGS:
        return int.from_bytes(content, "big")
    if tag == TAG_INTEGER:
        return int.from_bytes(content, "big", signed=True)
    if tag in (TAG_NULL, TAG_NO_SUCH_OBJECT, TAG_NO_SUCH_INSTANCE, TAG_END_OF_MIB_VIEW):
        return None
    return content


def encode_value(value: int | bytes | str | None, tag: int) -> bytes:
    """One value TLV (used by tests and simple agents)."""
    if value is None:
        return bytes((tag, 0))
    if tag == TAG_INTEGER:
        assert isinstance(value, int)
        return tlv(tag, encode_integer(value))
    if tag in UNSIGNED_TAGS:
        assert isinstance(value, int)
        return tlv(tag, encode_unsigned(value))
    if isinstance(value, str):
        value = value.encode()
    assert isinstance(value, bytes)
    return tlv(tag, value)
