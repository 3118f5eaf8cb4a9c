"""The worker's write statements on SQLite, committed in groups: one synced commit for what a process's threads
wrote meanwhile (group commit).

On the embedded default every commit is synced to disk (``synchronous=FULL``: a committed answer survives a power
cut) and SQLite lets one writer at a time; the others slept in growing steps (up to 100 ms) in its busy handler.
A thread pool's threads made three such commits per answer (the row's lease, the request's count, the
settlement) and spent more time waiting for the file's lock than the endpoint took to answer. Here a thread's
write joins a queue; one thread at a time (the leader) runs every queued statement in one transaction on its own
connection and commits once, then wakes their threads with their results. Each statement is the same
conditional UPDATE or INSERT as alone, and returns only once it is committed, so what the worker does next (send
the request, take the next row) still follows a durable write. Should the group fail, each statement is run
again alone, so one statement's error never becomes another's. Elsewhere (PostgreSQL) and inside a transaction a
statement runs at once on the caller's connection.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

from django.db import connection, transaction


@dataclass
class Write:
    sql: str
    params: Sequence[Any]
    done: threading.Event = field(default_factory=threading.Event)
    rowcount: int = 0
    rows: list = field(default_factory=list)
    error: BaseException | None = None


_queue: list[Write] = []
_queue_lock = threading.Lock()
_leader = threading.Lock()  # held by the thread committing a group


def _run(cursor: Any, write: Write) -> None:
    cursor.execute(write.sql, write.params)
    write.rowcount, write.rows = cursor.rowcount, cursor.fetchall() if cursor.description else []


def _commit(batch: list[Write]) -> None:
    """Run ``batch`` in one transaction on this thread's connection; if that fails, each statement alone."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for write in batch:
                _run(cursor, write)
        return
    except Exception:  # noqa: BLE001 - retried one by one below, each keeping its own error
        if len(batch) == 1:
            raise
    for write in batch:
        try:
            with connection.cursor() as cursor:
                _run(cursor, write)
        except Exception as exc:  # noqa: BLE001 - handed to the statement's own thread
            write.error = exc


def execute(sql: str, params: Sequence[Any]) -> tuple[int, list]:
    """Run one write statement; its row count and returned rows once it is committed."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.rowcount, cursor.fetchall() if cursor.description else []
    write = Write(sql, list(params))
    with _queue_lock:
        _queue.append(write)
    with _leader:
        if not write.done.is_set():  # not committed by an earlier leader: lead the group queued since
            with _queue_lock:
                batch = _queue[:]
                _queue.clear()
            try:
                _commit(batch)
            except BaseException as exc:
                for other in batch:
                    other.error = other.error or exc
                raise
            finally:
                for other in batch:
                    other.done.set()
    if write.error is not None:
        raise write.error
    return write.rowcount, write.rows
