"""The elicitation worker's hot statements, as SQL written once per process (``surveys.sql_rows``).

Built by the ORM, each of these cost 1–5 ms of CPU per answer (compiling the query, more than running it), and
an answer needs several: with the endpoint answering at once, that — not the endpoint — bounded a worker
process. The statements, and what they guarantee, are those of the ORM versions they replace:

- ``pending_rows``: the pending rows of a task's items in a run, each with its run (and the run's endpoint and
  study) and its item, in one query;
- ``claim_statement``: lease a row while it is pending, unleased (or its lease ran out) and its run is running (and, for
  the worker, count its first request in the same statement);
- ``charge``: count one request on the row before it is sent, with its estimated tokens and cost, renewing the
  lease of the worker that holds it;
- ``update_pending_statement``: write fields to a row only while it is still pending and matches the given columns
  exactly (the settlement's check that nobody else touched its counters);
- ``has_pending``: whether a run has a pending row;
- ``demonstrations``: a study's worked examples (``Study.demonstrations``), once per task;
- ``stored_prompts``, ``insert_stored_prompts_statement``: a task's stored prompts by hash, in one query; the new ones
  stored in one statement.

``claim_statement`` and ``update_pending_statement`` give the statement without running it: the worker commits
an answer's settlement together with the next answer's claim (``sqlite_writes.execute_all``).

The writes go through ``sqlite_writes.execute``: on SQLite, a process's threads' writes are committed in groups.
"""
from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from functools import lru_cache
from typing import Any, Sequence

from django.db import connection
from django.utils import timezone

from surveys.models import Item, Study
from surveys.sql_rows import Columns, assignments

from . import sqlite_writes
from .models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
from .sqlite_writes import Statement

PENDING, RUNNING = ModelResponse.Status.PENDING.value, ElicitationRun.Status.RUNNING.value


def _table(model: type) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _column(name: str) -> str:
    return connection.ops.quote_name(ModelResponse._meta.get_field(name).column)


def _when(moment: datetime) -> Any:
    """A moment as the database compares it with a DateTimeField."""
    return ModelResponse._meta.get_field("lease_until").get_db_prep_value(moment, connection)


@lru_cache(maxsize=64)
def _pending_sql(vendor: str, n_items: int, checks: bool) -> tuple[str, Columns, Columns, Columns, Columns, Columns]:
    r, u, e, s, i = (Columns(ModelResponse, "r"), Columns(ElicitationRun, "u"), Columns(ModelEndpoint, "e"),
                     Columns(Study, "s"), Columns(Item, "i"))
    asked = [f"r.item_id IN ({', '.join(['%s'] * n_items)})"] if n_items else []
    if checks:
        asked.append("r.item_id IS NULL")
    sql = (f"SELECT {r.sql}, {u.sql}, {e.sql}, {s.sql}, {i.sql} FROM {_table(ModelResponse)} r "
           f"INNER JOIN {_table(ElicitationRun)} u ON r.run_id = u.id "
           f"INNER JOIN {_table(ModelEndpoint)} e ON u.endpoint_id = e.id "
           f"INNER JOIN {_table(Study)} s ON u.study_id = s.id "
           f"LEFT JOIN {_table(Item)} i ON r.item_id = i.id "
           f"WHERE r.run_id = %s AND ({' OR '.join(asked)}) AND r.status = %s "
           f"ORDER BY r.item_id, r.check_key, r.sample_index, r.question")
    return sql, r, u, e, s, i


def pending_rows(run_id: int, item_ids: Sequence[int | None]) -> list[ModelResponse]:
    """The pending rows of a run's ``item_ids`` by item and sample index (None among them: the run's attention
    checks, rows without an item); all share one run object (with its endpoint and study attached), and the rows of
    an item one item object."""
    if not item_ids:
        return []
    items = [pk for pk in item_ids if pk is not None]
    sql, r, u, e, s, i = _pending_sql(connection.vendor, len(items), len(items) < len(item_ids))
    with connection.cursor() as cursor:
        cursor.execute(sql, [run_id, *items, PENDING])
        found = cursor.fetchall()
    if not found:
        return []
    widths = [len(c.fields) for c in (r, u, e, s)]
    starts = [sum(widths[:k]) for k in range(5)]
    first = found[0]
    run = u.build(first[starts[1]:])
    ElicitationRun.endpoint.field.set_cached_value(run, e.build(first[starts[2]:]))
    ElicitationRun.study.field.set_cached_value(run, s.build(first[starts[3]:]))
    items: dict[int, Item] = {}
    rows = []
    for values in found:
        row = r.build(values)
        if row.item_id is not None and row.item_id not in items:
            items[row.item_id] = i.build(values[starts[4]:])
        ModelResponse.run.field.set_cached_value(row, run)
        ModelResponse.item.field.set_cached_value(row, items.get(row.item_id) if row.item_id is not None else None)
        rows.append(row)
    return rows


def claim_statement(row: ModelResponse, owner: str, seconds: float, charge: tuple[int, int, Decimal] | None = None,
                    **fields: Any) -> Statement:
    """The UPDATE that leases a pending row of a running run for ``owner`` unless another live worker holds it
    (setting ``fields`` too; a ``prompt`` not saved yet is named by its hash, stored by an earlier statement of the
    same transaction); with ``charge`` (prompt tokens, completion tokens, cost) it also counts the first request
    (``charge``'s statement), in the same statement."""
    now = timezone.now()
    prompt = fields.get("prompt")
    if prompt is not None and prompt.pk is None:  # stored in the same transaction (``prompts.stored_or_new``)
        fields = {name: value for name, value in fields.items() if name != "prompt"}
    values, params = assignments(ModelResponse, {"lease_owner": owner, "lease_until": now + timedelta(seconds=seconds),
                                                 **fields})
    if prompt is not None and prompt.pk is None:
        values = f"{values}, {_column('prompt')} = (SELECT id FROM {_table(StoredPrompt)} WHERE sha256 = %s)"
        params = [*params, prompt.sha256]
    if charge is not None:
        values = f"{values}, {_COUNT_SQL}"
        params = [*params, *_count_params(*charge)]
    sql = (f"UPDATE {_table(ModelResponse)} SET {values} WHERE id = %s AND status = %s "
           f"AND (lease_until IS NULL OR lease_until < %s) "
           f"AND EXISTS (SELECT 1 FROM {_table(ElicitationRun)} u WHERE u.id = %s AND u.status = %s)")
    return sql, [*params, row.pk, PENDING, _when(now), row.run_id, RUNNING]


# one request more on a row, with its estimated tokens and cost (the parameters of ``_count_params``)
_COUNT_SQL = ("requests = requests + 1, prompt_tokens = prompt_tokens + %s, "
              "completion_tokens = completion_tokens + %s, "
              "cost_usd = CAST((cost_usd + CAST(%s AS NUMERIC)) AS NUMERIC)")


def _count_params(prompt_tokens: int, completion_tokens: int, cost: Decimal) -> list[Any]:
    cost_field = ModelResponse._meta.get_field("cost_usd")
    return [prompt_tokens, completion_tokens, cost_field.get_db_prep_save(cost, connection)]


@lru_cache(maxsize=None)
def _charge_sql(vendor: str) -> str:
    return (f"UPDATE {_table(ModelResponse)} SET {_COUNT_SQL}, "
            f"lease_until = CASE WHEN lease_owner = %s THEN %s ELSE lease_until END WHERE id = %s")


def charge(row_pk: int, owner: str, until: datetime, prompt_tokens: int, completion_tokens: int,
           cost: Decimal) -> None:
    """One request more on the row, with its tokens and cost; ``owner``'s lease renewed to ``until``."""
    sqlite_writes.execute(_charge_sql(connection.vendor), [
        *_count_params(prompt_tokens, completion_tokens, cost), owner, _when(until), row_pk])


def update_pending_statement(row_pk: int, fields: dict[str, Any], **exactly: Any) -> Statement:
    """The UPDATE that writes ``fields`` to the row if it is still pending and each column of ``exactly`` has that
    value."""
    values, params = assignments(ModelResponse, fields)
    checks = "".join(f" AND {connection.ops.quote_name(ModelResponse._meta.get_field(name).column)} = %s"
                     for name in exactly)
    checked = [ModelResponse._meta.get_field(name).get_db_prep_value(value, connection)
               for name, value in exactly.items()]
    return (f"UPDATE {_table(ModelResponse)} SET {values} WHERE id = %s AND status = %s{checks}",
            [*params, row_pk, PENDING, *checked])


def has_pending(run_id: int) -> bool:
    """Whether the run has a pending row."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT 1 FROM {_table(ModelResponse)} WHERE run_id = %s AND status = %s LIMIT 1",
                       [run_id, PENDING])
        return cursor.fetchone() is not None


@lru_cache(maxsize=None)
def _demonstrations_sql(vendor: str) -> tuple[str, Columns]:
    i = Columns(Item, "i")
    return (f"SELECT {i.sql} FROM {_table(Item)} i WHERE i.study_id = %s AND i.is_demonstration "
            f"ORDER BY i.demo_order, i.id"), i


def demonstrations(study: Study) -> list[Item]:
    """The study's worked examples in order, as ``Study.demonstrations`` gives them."""
    sql, i = _demonstrations_sql(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [study.pk])
        return [i.build(values) for values in cursor.fetchall()]


@lru_cache(maxsize=64)
def _stored_prompts_sql(vendor: str, n: int) -> tuple[str, Columns]:
    p = Columns(StoredPrompt, "p")
    return f"SELECT {p.sql} FROM {_table(StoredPrompt)} p WHERE p.sha256 IN ({', '.join(['%s'] * n)})", p


def stored_prompts(shas: Sequence[str]) -> dict[str, StoredPrompt]:
    """The stored prompts among the hashes ``shas``, by hash."""
    if not shas:
        return {}
    sql, p = _stored_prompts_sql(connection.vendor, len(shas))
    with connection.cursor() as cursor:
        cursor.execute(sql, list(shas))
        return {prompt.sha256: prompt for prompt in map(p.build, cursor.fetchall())}


def insert_stored_prompts_statement(prompts: Sequence[StoredPrompt]) -> Statement:
    """The INSERT of ``prompts`` in one statement, skipping each whose hash is stored already (``ON CONFLICT DO
    NOTHING``), returning (id, hash) of those inserted."""
    columns = ["sha256", "api_style", "content", "created_at"]
    fields = [StoredPrompt._meta.get_field(c) for c in columns]
    values = [f.get_db_prep_save(getattr(prompt, f.attname), connection) for prompt in prompts for f in fields]
    row = f"({', '.join(['%s'] * len(columns))})"
    return (f"INSERT INTO {_table(StoredPrompt)} ({', '.join(columns)}) "
            f"VALUES {', '.join([row] * len(prompts))} ON CONFLICT (sha256) DO NOTHING RETURNING id, sha256", values)
