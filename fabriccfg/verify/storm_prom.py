"""Storm-origin tracing over every shard's data, read back from Prometheus.

Each ``watch --shard I/N`` exports its devices' per-port PFC counters
(``fabriccfg_pfc_rx_pause_frames_total``, ``fabriccfg_pfc_rx_pause_duration_seconds_total``,
``fabriccfg_pfc_tx_pause_frames_total``, labels ``device``, ``port``, ``priority``). A shard alone
cannot follow a pause path into a switch another shard polls (:mod:`fabriccfg.verify.storm`);
Prometheus holds all of them. This module asks Prometheus for those counters' ``rate()`` over a recent
window (``query_range``, one point per step), turns each step into an evaluation point and runs the
same tracer (:func:`fabriccfg.verify.storm.pfc_storm_origin`) on the whole fabric: same thresholds,
same onset rule, same tie-breaking as an unsharded round.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from fabriccfg.inventory.models import Fabric
from fabriccfg.telemetry.model import Rate, Sample, Snapshot, label
from fabriccfg.verify.engine import Check, Context, Finding, Point
from fabriccfg.verify.output import exported
from fabriccfg.verify.storm import pfc_storm_origin

STORM_COUNTERS = ("pfc_rx_pause", "pfc_rx_pause_duration", "pfc_tx_pause")
"""What the tracer reads: each shard exports them as raw counters (:func:`fabriccfg.verify.output.
exported`: ``fabriccfg_pfc_rx_pause_frames_total``, ``..._duration_seconds_total`` in base units, label
``priority``); Prometheus computes the per-second rates the tracer works on."""


def rate_query(metric: str, window_s: float) -> tuple[str, float]:
    """(PromQL, factor back to the collected unit per second) for one storm counter."""
    exp = exported(metric, "counter64")
    return f"rate({exp.name}[{max(1, round(window_s))}s])", 1.0 / exp.scale


MAX_POINTS = 60
"""Evaluation points asked for at most (onset needs a few, not hours)."""
MAX_BODY = 64 * 1024 * 1024
"""A Prometheus answer larger than this is refused (bounded input)."""

Fetch = Callable[[str], bytes]


class PrometheusError(RuntimeError):
    """Prometheus could not be asked or said no (one line, for the CLI)."""


def http_get(url: str, timeout: float = 30.0) -> bytes:
    """GET ``url``; the body, at most :data:`MAX_BODY` bytes."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (the user's Prometheus URL)
            body: bytes = resp.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        raise PrometheusError(f"{url.split('?', 1)[0]}: HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise PrometheusError(f"{url.split('?', 1)[0]}: {reason}") from None
    if len(body) > MAX_BODY:
        raise PrometheusError(f"{url.split('?', 1)[0]}: answer larger than {MAX_BODY} bytes")
    return body


def query_range(base: str, query: str, start: float, end: float, step: float, *, fetch: Fetch = http_get,
                ) -> list[dict[str, Any]]:
    """``/api/v1/query_range`` result (a list of series with ``metric`` and ``values``)."""
    qs = urllib.parse.urlencode({"query": query, "start": f"{start:.3f}", "end": f"{end:.3f}",
                                 "step": f"{step:g}"})
    raw = fetch(f"{base.rstrip('/')}/api/v1/query_range?{qs}")
    try:
        doc = json.loads(raw)
    except ValueError:
        raise PrometheusError(f"{base}: the answer is not JSON") from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        err = doc.get("error") if isinstance(doc, dict) else None
        raise PrometheusError(f"{base}: query failed: {str(err or 'no status')[:200]}")
    data = doc.get("data")
    result = data.get("result") if isinstance(data, dict) else None
    if not isinstance(result, list):
        raise PrometheusError(f"{base}: query answer has no result list")
    return [r for r in result if isinstance(r, dict)]


def points_from_series(series: dict[str, list[dict[str, Any]]], step: float,
                       factors: dict[str, float] | None = None) -> list[Point]:
    """One evaluation point per timestamp seen; each holds the per-second rates at that time (times
    ``factors[metric]``: base units back to the collected unit, e.g. seconds to microseconds)."""
    by_ts: dict[float, dict[tuple[str, str | None, str, tuple[tuple[str, str], ...]], float]] = {}
    for metric, rows in series.items():
        for row in rows:
            lab = row.get("metric") or {}
            device, port = lab.get("device"), lab.get("port") or None
            prio = lab.get("priority", lab.get("prio"))
            factor = (factors or {}).get(metric, 1.0)
            if not isinstance(device, str) or not device:
                continue
            lset = label("prio", prio) if prio is not None else ()
            for pair in row.get("values") or []:
                try:
                    ts, value = float(pair[0]), float(pair[1]) * factor
                except (TypeError, ValueError, IndexError):
                    continue
                if math.isfinite(value):
                    by_ts.setdefault(ts, {})[(device, port, metric, lset)] = value
    points: list[Point] = []
    for ts in sorted(by_ts)[-MAX_POINTS:]:
        snap = Snapshot(ts=ts)
        rates: dict[Any, Rate] = {}
        by_port: dict[tuple[str, str | None, str], list[Sample]] = {}
        for (device, port, metric, lset), value in by_ts[ts].items():
            s = Sample(device, port, metric, lset, 0, "counter64")
            snap.add(s)
            rates[s.key] = Rate(value, "ok", interval_s=step)
            by_port.setdefault((device, port, metric), []).append(s)
        points.append(Point(snap, rates, by_port, step))
    return points


def trace(fabric: Fabric, check: Check, base: str, *, window: float = 300.0, step: float = 30.0,
          now: float | None = None, fetch: Fetch = http_get) -> list[Finding]:
    """Storm origins over the whole fabric from Prometheus: the findings an unsharded round would give."""
    end = time.time() if now is None else now
    start = end - min(window, step * (MAX_POINTS - 1))
    # rate() over at least 4 scrapes (a round's step) and 20 s: fewer samples leave gaps under load
    queries = {m: rate_query(m, max(4 * step, 20.0)) for m in STORM_COUNTERS}
    series = {m: query_range(base, q, start, end, step, fetch=fetch) for m, (q, _) in queries.items()}
    points = points_from_series(series, step, {m: f for m, (_, f) in queries.items()})
    if not points:
        return []
    ctx = Context(fabric, [p.snapshot for p in points], points=points)
    out = pfc_storm_origin(check, ctx)
    return out if isinstance(out, list) else out.findings
