"""Probe results in the telemetry sample store (same SQLite file, its own table).

One row per run (the JSON document, zlib-compressed like the snapshots) plus one row per pair and
metric so a history can be queried with plain SQL. Retention: the newest ``keep`` runs per scope.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from fabriccfg.telemetry.store import SampleStore

SCHEMA = """
CREATE TABLE IF NOT EXISTS probe_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, scope TEXT NOT NULL, ts REAL NOT NULL, doc BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS probe_results (
    run_id INTEGER NOT NULL REFERENCES probe_runs(id) ON DELETE CASCADE,
    pair TEXT NOT NULL, kind TEXT NOT NULL, rail INTEGER NOT NULL, metric TEXT NOT NULL, value REAL NOT NULL);
CREATE INDEX IF NOT EXISTS probe_runs_scope ON probe_runs(scope, ts);
"""
METRICS = (
    ("latency_us", "typical"),
    ("latency_us", "p99"),
    ("latency_us", "p999"),
    ("latency_us", "stdev"),
    ("latency_us", "max"),
)


def save(state_dir: str | Path | None, doc: dict[str, Any], scope: str | None = None, keep: int = 100) -> int:
    """Store ``doc``; returns the run id. Opens the sample store first (WAL, busy timeout)."""
    with SampleStore(state_dir) as store:
        path = store.path
    db = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    try:
        db.execute("PRAGMA foreign_keys=ON")
        db.executescript(SCHEMA)
        sc = scope or f"probe:{doc['fabric']}"
        db.execute("BEGIN IMMEDIATE")
        cur = db.execute(
            "INSERT INTO probe_runs(scope, ts, doc) VALUES (?, ?, ?)",
            (sc, float(doc["ts"]), zlib.compress(json.dumps(doc).encode())),
        )
        run_id = int(cur.lastrowid or 0)
        rows = []
        for r in doc["results"]:
            for group, key in METRICS:
                v = (r.get(group) or {}).get(key)
                if isinstance(v, int | float):
                    rows.append((run_id, r["pair"], r["kind"], r["rail"], f"{group}.{key}", float(v)))
            for key in ("write_bw_gbps", "busbw_gbytes"):
                if isinstance(r.get(key), int | float):
                    rows.append((run_id, r["pair"], r["kind"], r["rail"], key, float(r[key])))
        db.executemany("INSERT INTO probe_results VALUES (?, ?, ?, ?, ?, ?)", rows)
        old = [
            row[0]
            for row in db.execute(
                "SELECT id FROM probe_runs WHERE scope = ? ORDER BY ts DESC, id DESC LIMIT -1 OFFSET ?",
                (sc, keep),
            )
        ]
        for rid in old:
            db.execute("DELETE FROM probe_results WHERE run_id = ?", (rid,))
            db.execute("DELETE FROM probe_runs WHERE id = ?", (rid,))
        db.execute("COMMIT")
        return run_id
    finally:
        db.close()


def latest(state_dir: str | Path | None, fabric: str, scope: str | None = None) -> dict[str, Any] | None:
    with SampleStore(state_dir) as store:
        path = store.path
    db = sqlite3.connect(path, timeout=10.0)
    try:
        db.executescript(SCHEMA)
        row = db.execute(
            "SELECT doc FROM probe_runs WHERE scope = ? ORDER BY ts DESC, id DESC LIMIT 1",
            (scope or f"probe:{fabric}",),
        ).fetchone()
        return None if row is None else dict(json.loads(zlib.decompress(row[0])))
    finally:
        db.close()
