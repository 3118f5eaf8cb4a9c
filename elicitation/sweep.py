"""Runs heal themselves: the periodic sweep (Celery beat, ``elicitation.sweep``, every
ELICITATION_SWEEP_SECONDS) re-queues the work of running runs that no queued task will do.

A task can vanish: its worker was killed (a Redis broker hands the message back only after its visibility
timeout; the SQLite broker never does), the broker restarted without persistence and lost its queue, or the
task failed while the broker was unreachable. The rows of the database say what is left, so the sweep looks
there, each time:

1. rows of running runs whose lease ran out (their worker died, or lost the database) get their lease
   cleared and their items re-queued — once: a cleared lease is not "expired" at the next sweep;
2. when the elicitation queue is empty (so no queued task is waiting for them), every item of a running run
   that still has an unleased pending row is re-queued (runs started in the last ``min_age`` seconds are
   left to the tasks being queued for them);
3. a running run with no pending row left is finished.

Re-queueing never duplicates an answer: a task answers a row only after leasing it while it is pending, and
writes only while it is still pending (the unique (run, item, sample) key does the rest). A second task for
the same item finds nothing to do or waits for the lease of the first.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from . import conf
from .models import ElicitationRun, ModelResponse

log = logging.getLogger(__name__)
Status = ElicitationRun.Status


def queue_backlog(queue: str | None = None, connection: Any = None) -> int | None:
    """Messages waiting in the elicitation queue of the broker (not those a worker holds); None when the
    broker cannot say (it is down, or the transport does not count)."""
    queue = queue or conf.queue()
    try:
        if connection is None:
            from config.celery import app

            with app.connection_for_read() as conn:
                return _ready_messages(conn, queue)
        return _ready_messages(connection, queue)
    except Exception as exc:  # noqa: BLE001 - the broker is down or cannot count: say so, never fail the sweep
        log.warning("sweep: cannot count the messages in queue %r: %r", queue, exc)
        return None


def _ready_messages(conn: Any, queue: str) -> int:
    channel = conn.channel()
    try:
        return int(channel.queue_declare(queue=queue, passive=True).message_count)
    except Exception as exc:
        if "NOT_FOUND" in str(exc) or getattr(exc, "reply_code", None) == 404:
            return 0  # no such queue (yet): nothing waits in it
        raise
    finally:
        try:
            channel.close()
        except Exception:  # noqa: BLE001 - an AMQP channel closed by the broker's 404
            pass


def _running() -> Any:
    return ModelResponse.objects.filter(status=ModelResponse.Status.PENDING, run__status=Status.RUNNING,
                                        run__source=ElicitationRun.Source.LIVE)


def _items_by_run(rows: Any) -> dict[int, list[int | None]]:
    """Run → its items with such rows (None: its attention checks' rows, which have no item)."""
    found: dict[int, list[int | None]] = {}
    for run_id, item_id in rows.values_list("run_id", "item_id").distinct().order_by("run_id", "item_id"):
        found.setdefault(run_id, []).append(item_id)
    return found


def sweep(*, backlog: int | None = None, ask_broker: bool = True, min_age: float | None = None) -> dict[int, int]:
    """One sweep (see the module's docstring). ``backlog``: the queue's message count if already known (else
    the broker is asked, unless ``ask_broker`` is False). Returns the number of items re-queued per run."""
    from .runs import enqueue
    from .worker import finish_if_done

    now = timezone.now()
    min_age = conf.sweep_min_age_seconds() if min_age is None else min_age
    expired = _running().filter(lease_until__lt=now)
    requeue = _items_by_run(expired)
    if requeue:  # cleared, so that the next sweep does not queue them again while they wait in the queue
        expired.update(lease_owner="", lease_until=None)
    if backlog is None and ask_broker:
        backlog = queue_backlog()
    if backlog == 0:
        idle = _running().filter(lease_until__isnull=True).filter(
            Q(run__last_started_at__isnull=True) | Q(run__last_started_at__lt=now - timedelta(seconds=min_age)))
        for run_id, item_ids in _items_by_run(idle).items():
            requeue[run_id] = sorted(set(requeue.get(run_id, [])) | set(item_ids),
                                     key=lambda pk: (pk is None, pk or 0))  # None: the run's checks, last
    for run in ElicitationRun.objects.filter(pk__in=requeue):
        enqueue(run, requeue[run.pk])
    for run_id in (ElicitationRun.objects.filter(status=Status.RUNNING, source=ElicitationRun.Source.LIVE)
                   .exclude(responses__status=ModelResponse.Status.PENDING).values_list("pk", flat=True)):
        finish_if_done(run_id)
    if requeue:
        log.info("sweep: re-queued %s (queue backlog: %s)",
                 ", ".join(f"run {r}: {len(i)} item(s)" for r, i in requeue.items()), backlog)
    return {run_id: len(item_ids) for run_id, item_ids in requeue.items()}
