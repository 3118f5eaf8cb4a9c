"""A private PostgreSQL restarted under a running web server (real processes, DEBUG on as with `make run`):
participants who keep answering through a 0.5 s restart and a 4 s outage see no HTTP 500 and no
traceback — a blip is retried inside the request, a longer outage gives the calm page (503) until the
database is back — and every answer the server confirmed is stored exactly once."""
from __future__ import annotations

import tempfile
import threading
import time
from pathlib import Path

import psycopg
import pytest

from private_services import Participant, PrivatePostgres, WebServer, django_env, manage, postgres_available

pytestmark = pytest.mark.skipif(not postgres_available(), reason="needs PostgreSQL's initdb and pg_ctl")


def stored(url: str) -> dict[str, list[int]]:
    """Positions answered per PROLIFIC_PID, straight from the database."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT p.prolific_pid, a.position FROM surveys_response r "
                            "JOIN surveys_participant p ON p.id = r.participant_id "
                            "JOIN surveys_assignment a ON a.id = r.assignment_id").fetchall()
    out: dict[str, list[int]] = {}
    for pid, position in rows:
        out.setdefault(pid, []).append(position)
    return out


def answered_at_least(people: list[Participant], threads: list[threading.Thread], n: int, timeout: float = 240) -> None:
    """Wait until every participant has had ``n`` answers confirmed (or has stopped)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if all(len(p.confirmed) >= n or not t.is_alive() for p, t in zip(people, threads)):
            return
        time.sleep(0.05)
    raise AssertionError(f"participants did not reach {n} answers: {[len(p.confirmed) for p in people]}")


def test_postgres_restarts_under_participants_show_no_error_page():
    with PrivatePostgres() as pg, tempfile.TemporaryDirectory() as var:
        env = django_env(pg.url(), Path(var), OUTAGE_REFRESH_SECONDS="1")
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        with WebServer(env) as web:
            people = [Participant(web.base, "demo", f"OUTAGE{n:03d}", pause=0.05) for n in range(3)]
            threads = [threading.Thread(target=p.run) for p in people]
            for t in threads:
                t.start()
            # the restarts follow the participants' progress, not the clock (on a loaded machine the fixed sleeps
            # let them finish all 30 answers before the outage began: nobody met it)
            answered_at_least(people, threads, 3)
            pg.restart(down=0.5)  # a blip
            answered_at_least(people, threads, 8)
            still_answering = [p.pid for p, t in zip(people, threads) if t.is_alive() and len(p.confirmed) < 30]
            pg.restart(down=4.0)  # an outage
            for t in threads:
                t.join(300)
            log = web.log.read_text()
        answers = stored(pg.url())
    statuses = [s for p in people for s in p.statuses]
    assert 500 not in statuses, people[0].bodies_500[:1]
    assert "Traceback" not in "".join(b for p in people for b in p.bodies_500)
    assert still_answering == [p.pid for p in people]  # all of them were still answering when the outage began
    assert 503 in statuses or "retrying once" in log  # the outage really reached the participants
    for p in people:
        assert sorted(answers[p.pid]) == list(range(1, 31)), p.pid  # all 30, each once
        assert set(p.confirmed) <= set(answers[p.pid])  # nothing confirmed was lost
