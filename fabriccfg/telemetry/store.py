"""SQLite sample store: single cron-style runs compute rates against the previous run.

One file (``<state dir>/samples.sqlite``), WAL mode so a ``watch`` loop and a manual ``verify`` can
read and write at once, a busy timeout instead of failures when two runs overlap. A snapshot is one
row (zlib-compressed JSON: counters stay exact ints); ``scope`` separates fabrics or shards that
share a state dir. Retention keeps the newest ``keep_count`` snapshots per scope and drops any
older than ``keep_seconds``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
import zlib
from pathlib import Path

from fabriccfg.telemetry.counters import compute_rates
from fabriccfg.telemetry.model import Rate, SampleKey, Snapshot

DB_NAME = "samples.sqlite"
SCHEMA_VERSION = 1


def default_state_dir() -> Path:
    """``$FABRICCFG_STATE_DIR``, else ``$XDG_STATE_HOME/fabriccfg``, else ``~/.local/state/fabriccfg``."""
    env = os.environ.get("FABRICCFG_STATE_DIR")
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "fabriccfg"


class SampleStore:
    """``SampleStore(state_dir)``; ``save(snapshot)``, ``latest()``, ``save_and_rate(snapshot)``."""

    def __init__(self, state_dir: str | Path | None = None, *, keep_count: int = 100,
                 keep_seconds: float = 7 * 86400.0, timeout_s: float = 10.0) -> None:
        d = Path(state_dir) if state_dir is not None else default_state_dir()
        if d.suffix in (".sqlite", ".db"):
            self.path = d
        else:
            self.path = d / DB_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.keep_count = max(1, keep_count)
        self.keep_seconds = keep_seconds
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        self._db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS snapshots (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                scope TEXT NOT NULL,
                ts REAL NOT NULL,
                devices INTEGER NOT NULL,
                samples INTEGER NOT NULL,
                data BLOB NOT NULL
            );
            CREATE INDEX IF NOT EXISTS snapshots_scope_ts ON snapshots (scope, ts);
            """
        )
        self._db.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
        with contextlib.suppress(OSError):
            self.path.chmod(0o600)

    def __enter__(self) -> SampleStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    # --- write -----------------------------------------------------------------------------
    def save(self, snap: Snapshot, scope: str = "default") -> int:
        blob = zlib.compress(json.dumps(snap.to_json(), separators=(",", ":")).encode(), 6)
        n = sum(len(v) for v in snap.samples.values())
        with self._tx():
            cur = self._db.execute(
                "INSERT INTO snapshots (scope, ts, devices, samples, data) VALUES (?, ?, ?, ?, ?)",
                (scope, snap.ts, len(snap.samples), n, blob),
            )
            self._prune(scope)
        rowid = cur.lastrowid
        assert rowid is not None
        return rowid

    def _prune(self, scope: str) -> None:
        self._db.execute(
            "DELETE FROM snapshots WHERE scope = ? AND id NOT IN "
            "(SELECT id FROM snapshots WHERE scope = ? ORDER BY ts DESC, id DESC LIMIT ?)",
            (scope, scope, self.keep_count),
        )
        if self.keep_seconds > 0:
            self._db.execute("DELETE FROM snapshots WHERE scope = ? AND ts < ?",
                             (scope, time.time() - self.keep_seconds))

    def prune(self, scope: str = "default") -> None:
        with self._tx():
            self._prune(scope)

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")

        def __exit__(self, exc_type: object, *rest: object) -> None:
            self.db.execute("ROLLBACK" if exc_type else "COMMIT")

    def _tx(self) -> SampleStore._Tx:
        return SampleStore._Tx(self._db)

    # --- read ------------------------------------------------------------------------------
    @staticmethod
    def _load(blob: bytes) -> Snapshot:
        return Snapshot.from_json(json.loads(zlib.decompress(blob)))

    def latest(self, scope: str = "default", before: float | None = None) -> Snapshot | None:
        """The newest snapshot of ``scope`` (strictly older than ``before`` when given)."""
        if before is None:
            row = self._db.execute(
                "SELECT data FROM snapshots WHERE scope = ? ORDER BY ts DESC, id DESC LIMIT 1", (scope,)
            ).fetchone()
        else:
            row = self._db.execute(
                "SELECT data FROM snapshots WHERE scope = ? AND ts < ? ORDER BY ts DESC, id DESC LIMIT 1",
                (scope, before),
            ).fetchone()
        return self._load(row[0]) if row else None

    def history(self, scope: str = "default", limit: int = 10) -> list[Snapshot]:
        """Up to ``limit`` newest snapshots, oldest first."""
        rows = self._db.execute(
            "SELECT data FROM snapshots WHERE scope = ? ORDER BY ts DESC, id DESC LIMIT ?", (scope, limit)
        ).fetchall()
        return [self._load(r[0]) for r in reversed(rows)]

    def count(self, scope: str = "default") -> int:
        row = self._db.execute("SELECT COUNT(*) FROM snapshots WHERE scope = ?", (scope,)).fetchone()
        return int(row[0])

    def save_and_rate(self, snap: Snapshot,
                      scope: str = "default") -> tuple[Snapshot | None, dict[SampleKey, Rate]]:
        """Rates of ``snap`` against the previous stored snapshot, then store ``snap``."""
        prev = self.latest(scope, before=snap.ts)
        rates = compute_rates(prev, snap)
        self.save(snap, scope)
        return prev, rates


def open_store(state_dir: str | Path | None = None, **options: float) -> SampleStore:
    """The store in ``state_dir`` (default :func:`default_state_dir`)."""
    return SampleStore(state_dir, **options)  # type: ignore[arg-type]
