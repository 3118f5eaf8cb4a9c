"""The Celery tasks that answer a run's items (``elicit_items``; ``elicit_item`` for messages of earlier versions).
Thin: the work is in ``elicitation.worker``. Registered through ``elicitation.tasks``, which imports them.

Settings make every task acknowledged late (after it ran) and rejected back to the queue if its
worker dies, with one message prefetched at a time; a redelivered task is harmless because rows
are leased and written only while pending. A task that loses the database (OperationalError,
InterfaceError: a restart, a network cut) or the Redis of the limits gives back the rows it holds if it
can and is retried through the queue with a growing delay, instead of being acknowledged as failed;
whatever is lost anyway (the broker down too, a killed worker) is found again by the periodic sweep.
"""
from __future__ import annotations

import logging
import random
import time
from typing import Any

from celery import shared_task
from django.db import connections

from . import conf
from .worker import TRANSIENT_ERRORS, give_back, new_owner, process_items

log = logging.getLogger(__name__)


def drop_broken_connections() -> None:
    """Close this thread's database connections that no longer answer, so the next query opens a new one."""
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.is_usable():
            connection.close()


def database_retry_delay(retries: int) -> float:
    """Seconds before retrying a task that lost the database: 1, 2, 4 … 30, with jitter."""
    return min(30.0, 2.0 ** retries) * random.uniform(0.75, 1.25)


def answer_items(task: Any, run_id: int, item_ids: list[int]) -> None:
    """The body of the elicitation tasks: answer the pending samples of ``item_ids``; if another worker holds
    some of their rows, try again (through the queue) once its lease may have run out."""
    owner = new_owner()
    try:
        retry_in = process_items(run_id, item_ids, owner=owner)
        while retry_in is not None and task.request.is_eager:  # CELERY_TASK_ALWAYS_EAGER: no queue to retry through
            time.sleep(retry_in)
            retry_in = process_items(run_id, item_ids, owner=owner)
    except TRANSIENT_ERRORS as exc:
        drop_broken_connections()
        give_back(owner)
        if task.request.is_eager:
            raise
        delay = database_retry_delay(task.request.retries)
        log.warning("run %s items %s: database error (%r); retrying in %.0f s", run_id, item_ids, exc, delay)
        raise task.retry(countdown=delay, max_retries=None, queue=conf.queue(), exc=exc)
    if retry_in is not None:
        raise task.retry(countdown=min(max(1.0, retry_in), conf.max_countdown_seconds()), max_retries=None,
                         queue=conf.queue())


@shared_task(bind=True, name="elicitation.elicit_items", acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def elicit_items(self, run_id: int, item_ids: list[int]) -> None:
    """Answer the pending samples of a few items of a run (``runs.enqueue`` groups them)."""
    answer_items(self, run_id, list(item_ids))


@shared_task(bind=True, name="elicitation.elicit_item", acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def elicit_item(self, run_id: int, item_id: int) -> None:
    """One item: the task of earlier versions, still answered for the messages they queued."""
    answer_items(self, run_id, [item_id])
