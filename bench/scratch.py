"""The scratch setting every bench script runs in: a temporary HEDGELAB_VAR_DIR (so the default SQLite
database is a new file) or, with ``--postgres SERVER``, a fresh database on that server, dropped afterwards."""
from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def scratch_environment(postgres: str | None = None, prefix: str = "hedgelab-bench-") -> Iterator[Path]:
    """Point Django at a scratch VAR_DIR and database (set before ``django.setup()``); yield the VAR_DIR."""
    var = Path(tempfile.mkdtemp(prefix=prefix))
    os.environ.update(HEDGELAB_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    os.environ.pop("DATABASE_URL", None)
    if not postgres:
        yield var
        return
    import psycopg

    server = postgres.rstrip("/")
    scratch = f"hedgelab_bench_{os.getpid()}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{scratch}"')
    os.environ["DATABASE_URL"] = f"{server}/{scratch}"
    try:
        yield var
    finally:
        from django.db import connections

        connections.close_all()
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE "{scratch}" WITH (FORCE)')
