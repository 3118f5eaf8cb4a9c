"""The participant path's hot statements, as SQL written once per process instead of built by the ORM per request.

Every page of a participant reads their row with the study's, and the question page (and the answer POST) the
current slot with its item and the counts for "Question n of N"; a question shown for the first time gets its
time. Building these with the ORM costs about 5 ms of CPU per request (query compilation, more than the queries
themselves); here the SQL is written once and rows become model instances through the same field converters
the ORM applies (``surveys.sql_rows``), so callers get ordinary ``Participant`` / ``Study`` / ``Assignment`` /
``Item`` objects.
"""
from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Sequence

from django.db import connection

from .models import Assignment, Item, Participant, Response, Study
from .sql_rows import Columns, assignments


@lru_cache(maxsize=None)
def _participant_sql(vendor: str, n: int) -> tuple[str, Columns, Columns]:
    p, s = Columns(Participant, "p"), Columns(Study, "s")
    marks = ", ".join(["%s"] * n)
    sql = (f"SELECT {p.sql}, {s.sql} FROM {Participant._meta.db_table} p "
           f"INNER JOIN {Study._meta.db_table} s ON p.study_id = s.id WHERE p.id IN ({marks}) AND s.slug = %s")
    return sql, p, s


def participants_with_study(pks: Sequence[int], slug: str) -> list[Participant]:
    """The participants among ``pks`` in the study at ``slug``, each with its study attached."""
    sql, p, s = _participant_sql(connection.vendor, len(pks))
    with connection.cursor() as cursor:
        cursor.execute(sql, [*pks, slug])
        rows = cursor.fetchall()
    out = []
    for row in rows:
        participant = p.build(row)
        Participant.study.field.set_cached_value(participant, s.build(row[len(p.fields):]))
        out.append(participant)
    return out


@lru_cache(maxsize=None)
def _slot_sql(vendor: str) -> tuple[str, Columns, Columns]:
    a, i = Columns(Assignment, "a"), Columns(Item, "i")
    assignments, items, responses = Assignment._meta.db_table, Item._meta.db_table, Response._meta.db_table
    sql = (f"SELECT {a.sql}, {i.sql}, "
           f"(SELECT COUNT(*) FROM {assignments} x WHERE x.participant_id = %s), "
           f"(SELECT COUNT(DISTINCT y.assignment_id) FROM {responses} y WHERE y.participant_id = %s) "
           f"FROM {assignments} a INNER JOIN {items} i ON a.item_id = i.id "
           f"LEFT OUTER JOIN {responses} r ON r.assignment_id = a.id "
           f"WHERE a.participant_id = %s AND r.id IS NULL ORDER BY a.position LIMIT 1")
    return sql, a, i


def first_unanswered(participant_id: int) -> tuple[Assignment, int, int] | None:
    """The participant's first unanswered slot (by position) with its item, their number of slots and of
    answered slots (a slot holds one answer per question it asks); None when every slot is answered."""
    sql, a, i = _slot_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [participant_id] * 3)
        row = cursor.fetchone()
    if row is None:
        return None
    slot = a.build(row)
    Assignment.item.field.set_cached_value(slot, i.build(row[len(a.fields):]))
    return slot, row[-2], row[-1]


def mark_first_shown(slot_id: int, moment: datetime) -> bool:
    """Set the slot's first-shown time to ``moment`` unless it has one; whether it was set."""
    values, params = assignments(Assignment, {"first_shown_at": moment})
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {Assignment._meta.db_table} SET {values} WHERE id = %s AND first_shown_at IS NULL",
                       [*params, slot_id])
        return cursor.rowcount > 0
