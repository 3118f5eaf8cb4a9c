"""Counters that several web processes update at once count every event exactly: the entry cap
(surveys.entry_counter: a database row with F(), or Redis when CACHE_URL is set) and the admin login lockout
(django-axes' database counts). The file cache's add-then-incr is read-then-write and lost updates here
(6 processes × 50 failed logins were counted as 58)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

from private_services import django_env, manage

ROOT = Path(__file__).resolve().parent.parent
PROCESSES, THREADS, EACH = 3, 3, 8
TOTAL = PROCESSES * THREADS * EACH
REDIS_URL = os.environ.get("TEST_REDIS_URL", "")

CHILD = """
import json, sys, threading
import django
django.setup()
from django.contrib.auth import authenticate
from django.db import connection
from django.test import RequestFactory
from surveys.entry_counter import count_entry

kind, threads, each = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
counts, errors = [], []

def work():
    try:
        for _ in range(each):
            if kind == "entry":
                counts.append(count_entry(1, "203.0.113.9", 600))
            else:
                request = RequestFactory().post("/admin/login/", {"username": "boss", "password": "wrong"},
                                                REMOTE_ADDR="203.0.113.9")
                assert authenticate(request=request, username="boss", password="wrong") is None
    except Exception as exc:
        errors.append(repr(exc))
    finally:
        connection.close()

pool = [threading.Thread(target=work) for _ in range(threads)]
for t in pool: t.start()
for t in pool: t.join()
print(json.dumps({"counts": counts, "errors": errors}))
"""


def run_children(env: dict[str, str], kind: str) -> list[int]:
    children = [subprocess.Popen([sys.executable, "-c", CHILD, kind, str(THREADS), str(EACH)], cwd=ROOT, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                for _ in range(PROCESSES)]
    counts: list[int] = []
    for child in children:
        out, err = child.communicate(timeout=300)
        assert child.returncode == 0, err
        result = json.loads(out.strip().splitlines()[-1])
        assert result["errors"] == [], result["errors"]
        counts += result["counts"]
    return counts


def own_postgres_database(url: str, create: bool = True) -> str:
    """A fresh database of this test's own on the server of ``url`` (DATABASE_URL); dropped with create=False."""
    import psycopg

    server, name = url.rsplit("/", 1)
    own = f"{name.split('?')[0] or 'postgres'}_counters"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{own}" WITH (FORCE)')
        if create:
            conn.execute(f'CREATE DATABASE "{own}"')
    return f"{server}/{own}"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def database(request, tmp_path_factory) -> Iterator[tuple[str, Path | None]]:
    """A migrated database with a study and a user, made once per module: a SQLite file each test copies, or
    (with DATABASE_URL=postgres://…) a PostgreSQL database of this module's own, emptied of counts by each test."""
    var = tmp_path_factory.mktemp("counters")
    if request.param == "sqlite":
        url, template = f"sqlite:///{var / 'db.sqlite3'}", var / "db.sqlite3"
    else:
        if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
            pytest.skip("set DATABASE_URL=postgres://… to count on PostgreSQL too")
        url, template = own_postgres_database(os.environ["DATABASE_URL"]), None
    env = django_env(url, var)
    manage(env, "migrate", "--noinput")
    manage(env, "shell", "-c", "from surveys.models import Study; Study.objects.create(pk=1, slug='s', title='S');"
                               "from django.contrib.auth.models import User; User.objects.create_user('boss')")
    yield url, template
    if template is None:
        own_postgres_database(os.environ["DATABASE_URL"], create=False)


def prepared_env(var: Path, database: tuple[str, Path | None], **extra: str) -> dict[str, str]:
    url, template = database
    if template is not None:
        shutil.copy(template, var / "db.sqlite3")
        url = f"sqlite:///{var / 'db.sqlite3'}"
    env = django_env(url, var, LOG_LEVEL="ERROR", LOGIN_MAX_FAILURES="100000", **extra)
    if template is None:
        manage(env, "shell", "-c", "from surveys.models import EntryCount; from axes.models import AccessAttempt;"
                                   "EntryCount.objects.all().delete(); AccessAttempt.objects.all().delete()")
    return env


@pytest.mark.parametrize("store", ["database", "redis"])
def test_the_entry_counter_counts_every_entry_once(store, database):
    extra = {}
    if store == "redis":
        if not REDIS_URL:
            pytest.skip("set TEST_REDIS_URL to count in Redis")
        import redis

        redis.Redis.from_url(REDIS_URL).flushdb()
        extra["CACHE_URL"] = REDIS_URL
    with tempfile.TemporaryDirectory() as var:
        env = prepared_env(Path(var), database, **extra)
        counts = run_children(env, "entry")
        # every entry saw its own number: none counted twice, none lost
        assert sorted(counts) == list(range(1, TOTAL + 1))
        if store == "database":
            stored = manage(env, "shell", "-c", "from surveys.models import EntryCount; "
                                                "print(EntryCount.objects.get().count)")
            assert int(stored.strip().splitlines()[-1]) == TOTAL


def test_the_login_lockout_counts_every_failure_once(database):
    with tempfile.TemporaryDirectory() as var:
        env = prepared_env(Path(var), database)
        run_children(env, "login")
        stored = manage(env, "shell", "-c", "from django.db.models import Sum; from axes.models import AccessAttempt;"
                                            "print(AccessAttempt.objects.aggregate(n=Sum('failures_since_start'))['n'])")
    assert int(stored.strip().splitlines()[-1]) == TOTAL
