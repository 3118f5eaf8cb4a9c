"""Celery tasks (the module Celery's autodiscovery imports). Thin: the work is in ``elicitation.worker`` and
``elicitation.sweep``. The tasks that answer items live in ``elicitation.item_tasks`` (``runs.enqueue`` sends
them, and the sweep calls ``runs.enqueue``); they are imported here so that every worker registers them.
"""
from __future__ import annotations

from celery import shared_task

from .item_tasks import elicit_item, elicit_items
from .sweep import sweep

__all__ = ["elicit_item", "elicit_items", "sweep_runs"]


@shared_task(name="elicitation.sweep", ignore_result=True)
def sweep_runs() -> dict[int, int]:
    """Re-queue the stranded work of running runs (see ``elicitation.sweep``); run by Celery beat."""
    return sweep()
