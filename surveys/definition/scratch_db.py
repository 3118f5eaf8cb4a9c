"""A throwaway database for checking a definition file where the project's database is not set up yet
(``check_study`` on a fresh clone before ``migrate``, or with the database server down).

Checking a file loads it inside a transaction that is rolled back (surveys/definition/loader.py), so it needs
tables; when the project's database has none (or misses migrations) the check runs against a new in-memory
SQLite database with every migration applied, and the project's database is left untouched (not even created).
Only a check that reads other studies (``[study] reference``) needs the real one.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from django.db import DatabaseError, connections

ALIAS = "default"


def database_ready(alias: str = ALIAS) -> bool:
    """Whether ``alias``'s database exists, answers and has every migration applied (a SQLite file that does
    not exist is not created to find out)."""
    from django.db.migrations.executor import MigrationExecutor

    connection = connections[alias]
    name = str(connection.settings_dict.get("NAME") or "")
    if connection.vendor == "sqlite" and name and not name.startswith(("file:", ":memory:")) \
            and "mode=memory" not in name and not Path(name).exists():
        return False
    try:
        executor = MigrationExecutor(connection)
        return not executor.migration_plan(executor.loader.graph.leaf_nodes())
    except DatabaseError:
        connection.close()
        return False


@contextmanager
def scratch_database(alias: str = ALIAS) -> Iterator[None]:
    """Point ``alias`` at a new in-memory SQLite database with every migration applied for the block, then
    back at the project's database."""
    from django.core.management import call_command

    original = connections.settings[alias]
    connections[alias].close()
    connections.settings[alias] = connections.configure_settings(
        {alias: {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}})[alias]
    del connections[alias]
    try:
        call_command("migrate", database=alias, verbosity=0, interactive=False)
        yield
    finally:
        connections[alias].close()
        connections.settings[alias] = original
        del connections[alias]
