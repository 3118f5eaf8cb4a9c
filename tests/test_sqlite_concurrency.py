"""The embedded default holds a pilot (issue 12 point 6): the `make run` server (gunicorn, 2 workers × 4 threads)
on SQLite (WAL, IMMEDIATE transactions, busy timeout) with 50 participants entering and answering at once over
real HTTP: no request fails, nothing is logged as "database is locked", and every answer the server confirmed
is stored exactly once."""
from __future__ import annotations

import sqlite3
import tempfile
import threading
from pathlib import Path

from private_services import Participant, django_env, manage
from real_server import Gunicorn

PEOPLE, ANSWERS = 50, 4


def test_fifty_simultaneous_participants_on_sqlite():
    with tempfile.TemporaryDirectory() as var:
        db = Path(var) / "db.sqlite3"
        env = django_env(f"sqlite:///{db}", Path(var), ENTRY_MAX_PER_CLIENT="0")
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        with Gunicorn(env, workers=2, threads=4) as web:
            people = [Participant(web.base, "demo", f"PILOT{n:03d}") for n in range(PEOPLE)]
            threads = [threading.Thread(target=p.run, kwargs={"answers": ANSWERS}) for p in people]
            for t in threads:
                t.start()
            for t in threads:
                t.join(600)
            log = web.log.read_text()
        with sqlite3.connect(db) as conn:
            mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            rows = conn.execute("SELECT p.prolific_pid, a.position FROM surveys_response r "
                                "JOIN surveys_participant p ON p.id = r.participant_id "
                                "JOIN surveys_assignment a ON a.id = r.assignment_id").fetchall()
    assert "database is locked" not in log
    statuses = [s for p in people for s in p.statuses]
    assert set(statuses) <= {200, 302}, {s: statuses.count(s) for s in set(statuses)}
    assert len(rows) == len(set(rows)) == PEOPLE * ANSWERS  # each answer once
    for p in people:
        assert sorted(pos for pid, pos in rows if pid == p.pid) == sorted(p.confirmed) == list(range(1, ANSWERS + 1))
    assert mode == "wal"
