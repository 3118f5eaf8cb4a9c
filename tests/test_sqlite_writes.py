"""The worker's writes committed in groups on SQLite (``elicitation.sqlite_writes``): each statement keeps its own
result, and one that fails does not fail the others of its group. Under a thread pool (groups of several threads'
writes) they are exercised by tests/test_elicitation_threads_pool.py on a SQLite file."""
from __future__ import annotations

import pytest
from django.db import DatabaseError

from elicitation import sqlite_writes
from elicitation.models import ModelEndpoint

UPDATE = "UPDATE elicitation_modelendpoint SET max_concurrency = %s WHERE name = %s"


@pytest.mark.django_db(transaction=True)  # outside a transaction: the grouped path
def test_a_group_keeps_each_statements_result_and_error():
    ModelEndpoint.objects.create(name="a", base_url="http://127.0.0.1:9/v1", model="m")
    ModelEndpoint.objects.create(name="b", base_url="http://127.0.0.1:9/v1", model="m")
    batch = [sqlite_writes.Write([(UPDATE, [7, "a"])]), sqlite_writes.Write([("UPDATE no_such_table SET x = 1", [])]),
             sqlite_writes.Write([(UPDATE, [9, "nobody"])]), sqlite_writes.Write([(UPDATE, [8, "b"])])]
    sqlite_writes._commit(batch)
    assert [w.rowcount for w in batch] == [1, batch[1].rowcount, 0, 1]
    assert isinstance(batch[1].error, DatabaseError) and not any(w.error for w in batch if w is not batch[1])
    assert dict(ModelEndpoint.objects.values_list("name", "max_concurrency")) == {"a": 7, "b": 8}
    assert sqlite_writes.execute(UPDATE, [3, "a"]) == (1, [])
    with pytest.raises(DatabaseError):
        sqlite_writes.execute("UPDATE no_such_table SET x = 1", [])
    assert ModelEndpoint.objects.get(name="a").max_concurrency == 3
