"""Endpoint slots beside a SQLite database: the same leases as ``elicitation.throttle``'s slot rows, in a file of
their own next to the database file (``<database>-limits``), which every worker of the machine shares.

On the embedded default every write to the main SQLite file waits for its write lock and is synced to disk
(``synchronous=FULL``: a committed answer survives a power cut). Taking and giving back a slot were two of an
answer's five write transactions there, and a thread pool's threads queued for that one lock. A slot lease needs
no such durability (after a crash its holders are gone and the lease runs out), so here it is one statement on
another file (its own write lock) in WAL mode with ``synchronous=NORMAL``: nothing is synced per lease, and the
file stays consistent after a crash or power cut. Leases expire as the database's do (the request timeout plus
the grace period), so a hung worker's slot is freed as before. Rate buckets stay in the database
(``DatabaseLimits``). Times are this machine's clock, shared by all its workers.
"""
from __future__ import annotations

import random
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from .models import ModelEndpoint

SCHEMA = """CREATE TABLE IF NOT EXISTS slot (
    endpoint TEXT NOT NULL, idx INTEGER NOT NULL, holder TEXT NOT NULL DEFAULT '', expires REAL,
    PRIMARY KEY (endpoint, idx))"""


def endpoint_key(endpoint: ModelEndpoint) -> str:
    """The endpoint's id and creation time: a new endpoint never inherits a deleted one's leases (SQLite reuses
    ids)."""
    return f"{endpoint.pk}:{endpoint.created_at.timestamp() if endpoint.created_at else ''}"


class SQLiteLimits:
    """Slot leases in a SQLite file of their own; rate buckets delegated to ``rates`` (the database's)."""

    def __init__(self, path: Path, rates: Any) -> None:
        self.path, self.rates = Path(path), rates
        self._local = threading.local()
        self._known: set[tuple[str, int]] = set()  # (endpoint, count) whose slot rows this process created

    def _db(self) -> sqlite3.Connection:
        """This thread's connection (autocommit; each statement is its own transaction)."""
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(SCHEMA)
            self._local.db = db
        return db

    def try_acquire_slot(self, endpoint: ModelEndpoint, owner: str, lease_seconds: float) -> int | None:
        """Lease a free (or expired) slot, from a random start; its index, or None if all are taken."""
        key, count = endpoint_key(endpoint), max(1, endpoint.max_concurrency)
        db = self._db()
        if (key, count) not in self._known:
            db.executemany("INSERT OR IGNORE INTO slot (endpoint, idx) VALUES (?, ?)", [(key, i) for i in range(count)])
            self._known.add((key, count))
        now, start = time.time(), random.randrange(count)
        row = db.execute(
            "UPDATE slot SET holder = ?, expires = ? WHERE endpoint = ? AND idx = ("
            " SELECT idx FROM slot WHERE endpoint = ? AND idx < ? AND (holder = '' OR expires IS NULL OR expires < ?)"
            " ORDER BY (idx - ? + ?) % ? LIMIT 1) RETURNING idx",
            (owner, now + lease_seconds, key, key, count, now, start, count, count)).fetchone()
        return None if row is None else int(row[0])

    def renew_slot(self, endpoint: ModelEndpoint, index: int, owner: str, lease_seconds: float) -> None:
        self._db().execute("UPDATE slot SET expires = ? WHERE endpoint = ? AND idx = ? AND holder = ?",
                           (time.time() + lease_seconds, endpoint_key(endpoint), index, owner))

    def release_slot(self, endpoint: ModelEndpoint, index: int, owner: str) -> None:
        self._db().execute("UPDATE slot SET holder = '', expires = NULL WHERE endpoint = ? AND idx = ? AND holder = ?",
                           (endpoint_key(endpoint), index, owner))

    def holders(self, endpoint: ModelEndpoint) -> set[str]:
        """Who holds a live slot lease."""
        rows = self._db().execute("SELECT holder FROM slot WHERE endpoint = ? AND holder != '' AND expires >= ?",
                                  (endpoint_key(endpoint), time.time()))
        return {holder for (holder,) in rows}

    def release_all(self, owner: str) -> None:
        self._db().execute("UPDATE slot SET holder = '', expires = NULL WHERE holder = ?", (owner,))

    def try_take(self, endpoint: ModelEndpoint, kind: str, amount: float, per_minute: float) -> float:
        return self.rates.try_take(endpoint, kind, amount, per_minute)
