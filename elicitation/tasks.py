"""Celery tasks. Thin: the work is in ``elicitation.worker``.

Settings make every task acknowledged late (after it ran) and rejected back to the queue if its
worker dies, with one message prefetched at a time; a redelivered task is harmless because rows
are leased and written only while pending.
"""
from __future__ import annotations

import time

from celery import shared_task

from . import conf
from .worker import process_item


@shared_task(bind=True, name="elicitation.elicit_item", acks_late=True, reject_on_worker_lost=True,
             ignore_result=True, max_retries=None)
def elicit_item(self, run_id: int, item_id: int) -> None:
    """Answer the pending samples of one item; if another worker holds some of them, try again
    once its lease may have run out."""
    retry_in = process_item(run_id, item_id)
    while retry_in is not None and self.request.is_eager:  # CELERY_TASK_ALWAYS_EAGER: no queue to retry through
        time.sleep(retry_in)
        retry_in = process_item(run_id, item_id)
    if retry_in is not None:
        raise self.retry(countdown=max(1.0, retry_in), max_retries=None, queue=conf.queue())
