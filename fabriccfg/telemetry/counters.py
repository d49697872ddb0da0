"""Counter maths in Python ints: wraps, saturation, resets, per-second rates.

Why ints: a 64-bit octet counter at 400G passes float64's exact range (2**53) after ~50 h, so the
delta is taken exactly and only the final per-second rate becomes a float.

Rules (``peers.md`` §0.4, ``ib.md`` §5):

- ``counter32``/``counter64`` wrap modulo 2**32/2**64. A decrease is a wrap when it is plausible: always
  for 32-bit counters (at 400G a 32-bit octet counter wraps every 86 ms), and for 64-bit ones only
  when the wrapped delta is below :data:`MAX_PLAUSIBLE_RATE` per second (a 64-bit counter never wraps
  in practice, so a decrease is almost always a clear or a restart).
- ``satN`` IB PMA counters stick at 2**N - 1: at the maximum the status is ``saturated`` and there is
  no rate; a decrease means somebody (OpenSM PerfMgr, ``perfquery -R``) cleared it: ``reset``.
- A device restart is detected from sysUpTime: it went back (and is not a 497-day TimeTicks wrap), or
  it is shorter than the time since the previous poll. Every counter of that device is ``reset``.
"""

from __future__ import annotations

from fabriccfg.telemetry.model import (
    COUNTER_KINDS,
    SATURATING_BITS,
    WRAP_BITS,
    Rate,
    Sample,
    SampleKey,
    Snapshot,
    new_rate,
)

TIMETICKS_MODULUS = 2**32
"""sysUpTime is TimeTicks (hundredths of a second, 32 bits): it wraps after ~497 days."""
MAX_PLAUSIBLE_RATE = 2**40
"""Per second; ~1.1e12 (8.8 Tb/s of octets). A 64-bit 'wrap' implying more is a reset."""
UPTIME_SLACK_S = 2.0
"""Tolerance between the device's clock and ours when judging sysUpTime."""


def counter_rate(prev: int | str, cur: int | str, kind: str, dt: float, *, restarted: bool = False,
                 max_rate: float | None = None) -> Rate:
    """The rate of one counter between two samples ``dt`` seconds apart.

    ``max_rate`` (per second), when known (e.g. link speed in bytes), makes wrap detection stricter:
    a decrease whose wrapped delta implies more than ``max_rate`` is a reset.
    """
    if kind not in COUNTER_KINDS or not isinstance(prev, int) or not isinstance(cur, int) \
            or isinstance(prev, bool) or isinstance(cur, bool) or prev < 0 or cur < 0:
        return Rate(None, "invalid")
    if dt <= 0:
        return Rate(None, "stale", interval_s=dt)
    if restarted:
        return Rate(None, "reset", interval_s=dt)
    sat_bits = SATURATING_BITS.get(kind)
    if sat_bits is not None:
        top = (1 << sat_bits) - 1
        if cur >= top:
            return Rate(None, "saturated", cur - prev if cur >= prev else None, dt)
        if cur < prev:
            return Rate(None, "reset", None, dt)
        delta = cur - prev
        return Rate(delta / dt, "ok", delta, dt)
    bits = WRAP_BITS[kind]
    modulus = 1 << bits
    if cur >= prev:
        delta = cur - prev
        if delta >= modulus:  # values outside the counter's range: not this kind
            return Rate(None, "invalid", delta, dt)
        return Rate(delta / dt, "ok", delta, dt)
    wrapped = cur + modulus - prev
    if wrapped <= 0 or wrapped >= modulus:
        return Rate(None, "reset", None, dt)
    limit = max_rate if max_rate is not None else (None if bits <= 32 else MAX_PLAUSIBLE_RATE)
    if limit is not None and wrapped > limit * dt:
        return Rate(None, "reset", None, dt)
    return Rate(wrapped / dt, "wrapped", wrapped, dt)


def restarted(prev_uptime: int | None, cur_uptime: int | None, elapsed_s: float) -> bool:
    """True when sysUpTime (hundredths) says the device restarted between two polls ``elapsed_s`` apart."""
    if prev_uptime is None or cur_uptime is None:
        return False
    if cur_uptime < prev_uptime:
        wrapped_s = (cur_uptime + TIMETICKS_MODULUS - prev_uptime) / 100.0
        tol = max(UPTIME_SLACK_S, 0.05 * elapsed_s)
        return abs(wrapped_s - elapsed_s) > tol  # a genuine TimeTicks wrap keeps pace with the clock
    # up for less time than has passed since the last poll: it restarted in between
    return cur_uptime / 100.0 + max(UPTIME_SLACK_S, 0.05 * elapsed_s) < elapsed_s


def compute_rates(prev: Snapshot | None, cur: Snapshot,
                  metrics: frozenset[str] | None = None) -> dict[SampleKey, Rate]:
    """A :class:`Rate` for every counter sample in ``cur`` (``first`` when ``prev`` lacks it); with
    ``metrics``, for the counters of those metrics only.

    A device's samples come in the same order every round (the same commands, parsed the same way), so
    the previous sample of the same key is looked for at the same position first, and in an index of the
    device's previous samples only when that one is another key. A snapshot holds one sample per key (the
    collector keeps the first)."""
    out: dict[SampleKey, Rate] = {}
    own = _metric_dts(prev, cur)
    for device, rows in cur.samples.items():
        before = prev.samples.get(device, ()) if prev is not None else ()
        dt = cur.time_of(device) - prev.time_of(device) if prev is not None else 0.0
        was_restarted = prev is not None and restarted(prev.uptime.get(device), cur.uptime.get(device), dt)
        dts = own.get(device)
        index: dict[SampleKey, Sample] | None = None
        n = len(before)
        for i, s in enumerate(rows):
            if s[5] not in COUNTER_KINDS or (metrics is not None and s[2] not in metrics):
                continue
            key = s[:4]  # == s.key
            old = before[i] if i < n else None
            if old is None or old[:4] != key:
                if index is None:
                    index = {b[:4]: b for b in before}
                old = index.get(key)
            if old is None or old[5] != s[5]:
                out[key] = Rate(None, "first")
                continue
            sdt = dts.get(s[2], dt) if dts else dt
            pv, cv = old[4], s[4]
            # the common case (a wrapping counter that went up), without a call: ~10^6 of them a round
            if type(pv) is int and type(cv) is int and 0 <= pv <= cv and sdt > 0 and not was_restarted \
                    and (bits := WRAP_BITS.get(s[5])) is not None and cv - pv < 1 << bits:
                out[key] = new_rate(((cv - pv) / sdt, "ok", cv - pv, sdt))
            else:
                out[key] = counter_rate(pv, cv, s[5], sdt, restarted=was_restarted)
    return out


def _metric_dts(prev: Snapshot | None, cur: Snapshot) -> dict[str, dict[str, float]]:
    """device -> metric -> seconds between its two reads, for the metrics read from another source than
    the device's timestamp (a CLI command after the SNMP walk): on a loaded collector the two sources
    can answer a second apart, and a rate over a short interval divided by the wrong one is far off."""
    out: dict[str, dict[str, float]] = {}
    if prev is None or not (cur.metric_ts or prev.metric_ts):
        return out
    for device, metric in set(cur.metric_ts) | set(prev.metric_ts):
        out.setdefault(device, {})[metric] = cur.time_of(device, metric) - prev.time_of(device, metric)
    return out
