"""Insert a human answer once: ``INSERT … ON CONFLICT DO NOTHING RETURNING id`` (SQLite ≥ 3.35 and PostgreSQL).

A second answer for the same slot (or the same participant and item) is not an error to recover from but
the normal outcome of a double click that got past the row lock (e.g. a writer that does not take it): the
unique constraints of ``surveys.models.Response`` decide, in the same statement, without the savepoint that
catching an ``IntegrityError`` inside a transaction would need. The integrity triggers
(``surveys/migrations/0003_*``) still run and still raise.
"""
from __future__ import annotations

from django.db import connection

from .models import Response


def insert_once(response: Response) -> bool:
    """Insert ``response`` (unsaved); True with ``response.pk`` set, False when the slot was already answered."""
    meta = Response._meta
    fields = [f for f in meta.concrete_fields if f is not meta.pk]
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in fields)
    marks = ", ".join(["%s"] * len(fields))
    params = [f.get_db_prep_save(f.pre_save(response, add=True), connection) for f in fields]
    sql = (f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({marks}) "
           f"ON CONFLICT DO NOTHING RETURNING {quote(meta.pk.column)}")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        return False
    response.pk = row[0]
    response._state.adding = False
    response._state.db = connection.alias
    return True
