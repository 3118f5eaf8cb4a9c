"""Deleting a model run with its answers (``python manage.py delete_run``), refused while it has live work.

A run has live work while it is *running* (workers may be asking for its rows) or while a worker holds one of
its rows (an unexpired lease). A run that another run refines (self-refinement shows its answers) cannot be
deleted before that run. Deleting removes the run and every response of it (parsed, unparseable, failed and
pending), in one transaction; the items, the endpoint and the stored prompts stay.
"""
from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from .models import ElicitationRun


class RunBusy(ValueError):
    """The run cannot be deleted now; the message says why."""


@dataclass(frozen=True)
class Deleted:
    run_id: int
    name: str
    study: str
    responses: int


def delete_run(run_id: int) -> Deleted:
    """Delete the run ``run_id`` and its responses; RunBusy when it has live work or is refined by another run,
    ElicitationRun.DoesNotExist when there is no such run."""
    with transaction.atomic():
        run = ElicitationRun.objects.select_for_update().select_related("study").get(pk=run_id)
        if run.status == ElicitationRun.Status.RUNNING:
            raise RunBusy(f"run {run.pk} is running: cancel it first (its workers may still be asking), then delete it")
        held = run.responses.filter(lease_until__gt=timezone.now()).count()
        if held:
            raise RunBusy(f"a worker still holds {held} of run {run.pk}'s requests; wait until they finish, then "
                          "delete it")
        refining = list(run.refinements.values_list("pk", flat=True))
        if refining:
            raise RunBusy(f"run {run.pk}'s answers are shown by the self-refinement run(s) "
                          f"{', '.join(map(str, refining))}: delete those first")
        out = Deleted(run_id=run.pk, name=str(run), study=run.study.slug, responses=run.responses.count())
        run.responses.all().delete()
        run.delete()
    return out
