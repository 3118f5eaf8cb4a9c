"""Throttles hold across the processes of one server: `make run` serves through gunicorn with several worker
processes, so the entry cap's counter (surveys.entry_counter: a database row) must be one that every process
sees — a per-process memory cache would let each process admit its own quota. Exact counting under concurrent
entries: test_counters_concurrent.py."""
from __future__ import annotations

import tempfile
from pathlib import Path

from private_services import Participant, django_env, manage
from real_server import Gunicorn

LIMIT, TRIES = 4, 16


def test_the_entry_limit_is_shared_by_every_worker_process():
    with tempfile.TemporaryDirectory() as var:
        env = django_env(f"sqlite:///{Path(var) / 'db.sqlite3'}", Path(var), ENTRY_MAX_PER_CLIENT=str(LIMIT))
        manage(env, "migrate", "--noinput")
        manage(env, "load_demo")
        with Gunicorn(env, workers=3, threads=1) as web:
            statuses = []
            for n in range(TRIES):  # a new connection each time: the requests spread over the processes
                status, _, _ = Participant(web.base, "demo", f"SPREAD{n:03d}")._request(
                    f"/s/demo/?PROLIFIC_PID=SPREAD{n:03d}")
                statuses.append(status)
            pids = {line.split("[")[2].split("]")[0] for line in web.log.read_text().splitlines()
                    if "Booting worker" in line}
    assert len(pids) == 3
    assert statuses.count(302) == LIMIT and statuses.count(429) == TRIES - LIMIT, statuses
