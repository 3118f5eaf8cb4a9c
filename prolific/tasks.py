"""Celery task of the Prolific integration; celery beat runs it every PROLIFIC_SYNC_SECONDS
(settings.CELERY_BEAT_SCHEDULE["prolific-sync"])."""
from __future__ import annotations

from celery import shared_task

from .review import sync_all


@shared_task(name="prolific.sync_all", ignore_result=True)
def sync_all_task() -> list[dict]:
    """Read every published study's status and submissions, free the slots of returns, time-outs and
    screen-outs, decide (and follow up unanswered return requests) and, under the automatic policy, send
    approvals, rejections and return requests."""
    return [r.as_dict() for r in sync_all()]
