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

A write may be a unit of several statements (``execute_all``): they are committed together, in one transaction,
and retried together. The worker writes an answer's settlement with the next answer's claim that way
(``worker.RunContext.commit``): one synced commit per answer instead of two.
"""
from __future__ import annotations

import threading
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any, Sequence

from django.db import connection, transaction


Statement = tuple[str, Sequence[Any]]  # SQL with %s placeholders, and its parameters
Result = tuple[int, list]  # a statement's row count and returned rows


@dataclass
class Write:
    """One thread's write: its statements, committed in one transaction (with the other threads' of its group)."""

    statements: list[Statement]
    done: threading.Event = field(default_factory=threading.Event)
    results: list[Result] = field(default_factory=list)
    error: BaseException | None = None

    @property
    def rowcount(self) -> int:
        """The row count of the write's last statement."""
        return self.results[-1][0] if self.results else 0


_queue: list[Write] = []
_queue_lock = threading.Lock()
_leader = threading.Lock()  # held by the thread committing a group


def _run(cursor: Any, write: Write) -> None:
    results = []
    for sql, params in write.statements:
        cursor.execute(sql, params)
        results.append((cursor.rowcount, cursor.fetchall() if cursor.description else []))
    write.results = results


def _commit(batch: list[Write]) -> None:
    """Run ``batch`` in one transaction on this thread's connection; if that fails, each write alone (a write of
    several statements in a transaction of its own)."""
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            for write in batch:
                _run(cursor, write)
        return
    except Exception:  # noqa: BLE001 - retried one by one below, each keeping its own error
        if len(batch) == 1:
            raise
    for write in batch:
        write.results = []
        try:
            with transaction.atomic(), connection.cursor() as cursor:
                _run(cursor, write)
        except Exception as exc:  # noqa: BLE001 - handed to the statement's own thread
            write.error = exc


def execute(sql: str, params: Sequence[Any]) -> Result:
    """Run one write statement; its row count and returned rows once it is committed."""
    return execute_all([(sql, params)])[0]


def execute_all(statements: Sequence[Statement]) -> list[Result]:
    """Run write statements in one transaction; each one's row count and returned rows once they are committed."""
    if not statements:
        return []
    if connection.vendor != "sqlite" or connection.in_atomic_block:  # the caller's transaction, else one of its own
        write = Write([(sql, list(params)) for sql, params in statements])
        with transaction.atomic() if len(statements) > 1 and not connection.in_atomic_block else nullcontext():
            with connection.cursor() as cursor:
                _run(cursor, write)
        return write.results
    write = Write([(sql, list(params)) for sql, params in statements])
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
    return write.results
