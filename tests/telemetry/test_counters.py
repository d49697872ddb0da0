"""Counter maths: wraps, saturation, resets and rates, with property tests (hypothesis)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from fabriccfg.telemetry.counters import MAX_PLAUSIBLE_RATE, compute_rates, counter_rate, restarted
from fabriccfg.telemetry.model import Rate, Sample, Snapshot, labels

U32 = 2**32
U64 = 2**64


@given(prev=st.integers(0, U32 - 1), delta=st.integers(0, U32 - 1), dt=st.floats(0.01, 3600))
def test_counter32_delta_is_exact_modulo_2_32(prev: int, delta: int, dt: float) -> None:
    cur = (prev + delta) % U32
    r = counter_rate(prev, cur, "counter32", dt)
    assert r.delta == delta
    assert r.status == ("wrapped" if prev + delta >= U32 else "ok")
    assert r.value_per_s is not None and abs(r.value_per_s - delta / dt) <= 1e-9 * max(1.0, delta / dt)


@given(prev=st.integers(0, U64 - 1), delta=st.integers(0, 10**12), dt=st.floats(1, 600))
def test_counter64_plausible_wrap_is_exact(prev: int, delta: int, dt: float) -> None:
    cur = (prev + delta) % U64
    r = counter_rate(prev, cur, "counter64", dt)
    assert r.delta == delta  # exact int arithmetic, no float rounding even above 2**53
    assert r.status == ("wrapped" if prev + delta >= U64 else "ok")


@given(prev=st.integers(2**50, U64 - 1), cur=st.integers(0, 2**40), dt=st.floats(1, 60))
def test_counter64_decrease_that_is_no_plausible_wrap_is_a_reset(prev: int, cur: int, dt: float) -> None:
    wrapped = cur + U64 - prev
    r = counter_rate(prev, cur, "counter64", dt)
    if wrapped > MAX_PLAUSIBLE_RATE * dt:
        assert r.status == "reset" and r.value_per_s is None and r.delta is None
    else:
        assert r.status == "wrapped" and r.delta == wrapped


@given(bits=st.sampled_from([4, 8, 16, 32, 64]), prev=st.integers(0, 2**64), step=st.integers(0, 2**64),
       dt=st.floats(0.5, 600))
def test_saturating_counters_never_give_a_rate_at_max(bits: int, prev: int, step: int, dt: float) -> None:
    top = 2**bits - 1
    prev = min(prev, top)
    cur = min(prev + step, top)
    r = counter_rate(prev, cur, f"sat{bits}", dt)
    if cur == top:
        assert r.status == "saturated" and r.value_per_s is None
    else:
        assert r.status == "ok" and r.delta == cur - prev
    assert r.status not in ("wrapped",)  # IB PMA counters stick, they never wrap


@given(bits=st.sampled_from([8, 16, 32, 64]), prev=st.integers(1, 2**8 - 2), dt=st.floats(0.5, 600))
def test_saturating_counter_decrease_is_a_clear(bits: int, prev: int, dt: float) -> None:
    r = counter_rate(prev, prev - 1, f"sat{bits}", dt)
    assert r.status == "reset" and r.value_per_s is None


def test_invalid_and_stale() -> None:
    assert counter_rate("up", 3, "counter64", 1).status == "invalid"
    assert counter_rate(1, 2, "gauge", 1).status == "invalid"
    assert counter_rate(1, 2, "counter64", 0).status == "stale"
    assert counter_rate(-1, 2, "counter64", 1).status == "invalid"
    assert counter_rate(0, U32, "counter32", 1).status == "invalid"  # not a 32-bit value


@given(up0=st.integers(0, U32 - 1), elapsed=st.floats(1, 86400))
def test_uptime_keeping_pace_is_no_restart_even_across_the_timeticks_wrap(up0: int, elapsed: float) -> None:
    up1 = (up0 + round(elapsed * 100)) % U32
    assert not restarted(up0, up1, elapsed)


@given(up0=st.integers(10_000, U32 - 1), up_after=st.integers(0, 5_000), elapsed=st.floats(100, 86400))
def test_uptime_going_back_is_a_restart(up0: int, up_after: int, elapsed: float) -> None:
    assert restarted(up0, up_after, elapsed)


def _snap(ts: float, value: int, uptime: int | None, kind: str = "counter64") -> Snapshot:
    s = Snapshot(ts=ts)
    s.add(Sample("sw1", "swp1", "if_in_octets", (), value, kind))  # type: ignore[arg-type]
    s.add(Sample("sw1", "swp1", "pfc_rx_pause", labels(prio=3), value // 10, kind))  # type: ignore[arg-type]
    s.add(Sample("sw1", "swp1", "oper_status", (), "up", "state"))
    if uptime is not None:
        s.uptime["sw1"] = uptime
    return s


def test_compute_rates_first_ok_and_reboot() -> None:
    a = _snap(1000.0, 10_000, 500_000)
    assert {r.status for r in compute_rates(None, a).values()} == {"first"}
    b = _snap(1010.0, 60_000, 501_000)
    rates = compute_rates(a, b)
    assert len(rates) == 2  # states are not rated
    r = rates[("sw1", "swp1", "if_in_octets", ())]
    assert r.status == "ok" and r.delta == 50_000 and r.value_per_s == 5_000.0
    assert rates[("sw1", "swp1", "pfc_rx_pause", (("prio", "3"),))].delta == 5_000
    # reboot: uptime went back; counters restarted low; no rate, no huge bogus wrap
    c = _snap(1020.0, 1_000, 300)
    assert {r.status for r in compute_rates(b, c).values()} == {"reset"}
    # a reboot between polls that left counters higher than before is still a reset
    d = _snap(2000.0, 90_000, 3_000)
    assert {r.status for r in compute_rates(b, d).values()} == {"reset"}


def test_compute_rates_counter32_wrap_and_kind_change() -> None:
    a = _snap(0.0, U32 - 100, 100, "counter32")
    b = _snap(1.0, 900, 200, "counter32")
    r = compute_rates(a, b)[("sw1", "swp1", "if_in_octets", ())]
    assert r.status == "wrapped" and r.delta == 1000
    c = _snap(2.0, 1900, 300, "counter64")
    assert compute_rates(b, c)[("sw1", "swp1", "if_in_octets", ())].status == "first"


@settings(max_examples=50)
@given(values=st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=6))
def test_compute_rates_never_raises_and_never_negative(values: list[int]) -> None:
    snaps = [_snap(float(i), v, None) for i, v in enumerate(values)]
    for prev, cur in itertools.pairwise(snaps):
        for rate in compute_rates(prev, cur).values():
            assert rate.value_per_s is None or rate.value_per_s >= 0
            assert rate.delta is None or rate.delta >= 0


_ODD = st.sampled_from([0, 5, 2**32 - 1, 2**32 + 5, 2**64 - 1, -1, True, "x", 10**30])


@settings(max_examples=200)
@given(pairs=st.lists(st.tuples(st.sampled_from(["counter32", "counter64", "sat32", "sat4", "gauge"]),
                                st.one_of(st.integers(0, 2**64 - 1), _ODD),
                                st.one_of(st.integers(0, 2**64 - 1), _ODD)),
                      min_size=1, max_size=8),
       dt=st.sampled_from([-1.0, 0.0, 0.5, 30.0]), up=st.sampled_from([(1000, 4000), (5000, 100)]))
def test_compute_rates_gives_counter_rate_for_every_counter(pairs: list[tuple[str, object, object]],
                                                           dt: float, up: tuple[int, int]) -> None:
    """``compute_rates`` builds the common case (a wrapping counter that went up) inline; every counter's
    rate must still be what :func:`counter_rate` says for its two values."""
    prev, cur = Snapshot(ts=100.0, uptime={"d": up[0]}), Snapshot(ts=100.0 + dt, uptime={"d": up[1]})
    for i, (kind, a, b) in enumerate(pairs):
        prev.add(Sample("d", f"p{i}", "m", (), a, kind))  # type: ignore[arg-type]
        cur.add(Sample("d", f"p{i}", "m", (), b, kind))  # type: ignore[arg-type]
    rates = compute_rates(prev, cur)
    reboot = restarted(up[0], up[1], dt)
    for i, (kind, a, b) in enumerate(pairs):
        if kind != "gauge":
            assert rates[("d", f"p{i}", "m", ())] == counter_rate(a, b, kind, dt, restarted=reboot)  # type: ignore[arg-type]


def test_a_metric_read_by_another_source_is_divided_by_its_own_interval() -> None:
    """SNMP answered at 100.0 and 100.2, the CLI command at 100.9 and 101.1 (a loaded collector):
    the CLI counter moved 2,000 in 0.2 s of its own reads, not in the SNMP reads' 0.2 s plus skew."""
    def snap(ts: float, snmp_at: float, cli_at: float, octets: int, pauses: int) -> Snapshot:
        s = Snapshot(ts=ts, device_ts={"leaf": snmp_at}, metric_ts={("leaf", "pfc_rx_pause"): cli_at})
        s.add(Sample("leaf", "swp1", "if_in_octets", (), octets, "counter64"))
        s.add(Sample("leaf", "swp1", "pfc_rx_pause", labels(prio=3), pauses, "counter64"))
        return s

    a = snap(100.0, 100.0, 100.9, 0, 0)
    b = snap(100.2, 100.2, 101.1, 1_000, 2_000)
    rates = compute_rates(a, b)
    octets = rates[("leaf", "swp1", "if_in_octets", ())].value_per_s
    pauses = rates[("leaf", "swp1", "pfc_rx_pause", labels(prio=3))].value_per_s
    assert octets is not None and abs(octets - 5_000.0) < 1e-6
    assert pauses is not None and abs(pauses - 10_000.0) < 1e-6
    # a snapshot without the CLI time (older JSON) falls back to the device's time
    back = Snapshot.from_json(b.to_json())
    assert back.metric_ts == b.metric_ts
    assert b.time_of("leaf", "if_in_octets") == 100.2 and b.time_of("leaf") == 100.2


@settings(max_examples=300)
@given(keys=st.lists(st.tuples(st.sampled_from(["d", "e"]), st.sampled_from(["p1", "p2", None]),
                               st.sampled_from(["m", "n"]), st.sampled_from([(), (("prio", "3"),)])),
                     min_size=1, max_size=10, unique=True),
       data=st.data())
def test_compute_rates_pairs_each_counter_with_the_previous_sample_of_its_key(
        keys: list[tuple[str, str | None, str, tuple[tuple[str, str], ...]]], data: st.DataObject) -> None:
    """The previous sample is found by position when the order is kept and by key when not: either way each
    counter of ``cur`` gets ``counter_rate`` of the previous sample with its key (judged against a plain
    index of the whole previous snapshot), ``first`` without one or when its kind changed, and with
    ``metrics`` only the counters of those metrics get a rate."""
    kinds = st.sampled_from(["counter64", "counter32", "gauge"])
    values = st.integers(0, 2**40)
    prev, cur = Snapshot(ts=100.0), Snapshot(ts=130.0)
    for k in data.draw(st.permutations(keys)):
        if data.draw(st.booleans()) or len(keys) == 1:
            prev.add(Sample(*k, data.draw(values), data.draw(kinds)))
    for k in keys:
        if data.draw(st.integers(0, 4)) > 0:
            cur.add(Sample(*k, data.draw(values), data.draw(kinds)))
    old = {s.key: s for s in prev}
    metrics = data.draw(st.sampled_from([None, frozenset({"m"})]))
    want = {}
    for s in cur:
        if s.kind == "gauge" or (metrics is not None and s.metric not in metrics):
            continue
        p = old.get(s.key)
        want[s.key] = Rate(None, "first") if p is None or p.kind != s.kind else \
            counter_rate(p.value, s.value, s.kind, 30.0)
    assert compute_rates(prev, cur, metrics) == want
