"""What a study holds so far (human participants and answers, model runs and their answers): the table a report
shows beside the sections it could not build yet, so that a models-only pilot still gets a report."""
from __future__ import annotations

from typing import Any

import pandas as pd
from django.db.models import Count

from analysis.agents import agent_names
from elicitation.models import ElicitationRun, ModelResponse
from surveys.models import Participant, Response

COLUMNS = ["source", "study", "status", "answers_ok", "answers_other", "detail"]


def available_table(study: Any) -> pd.DataFrame:
    """One row for the completed human participants of ``study`` (and of its reference study) and one per model
    run: its agent, its status, its readable answers and the others (pending, failed, unparseable)."""
    rows = []
    for source in (s for s in (study.reference_study, study) if s is not None):
        completed = Participant.objects.filter(study=source, is_test=False, status=Participant.Status.COMPLETED)
        answers = Response.objects.filter(participant__in=completed).count()
        rows.append(("human participants (completed)", source.slug, f"{completed.count()} completed", answers, 0,
                     "" if answers else "no completed human participant yet"))
    runs = list(ElicitationRun.objects.filter(study=study).select_related("endpoint").order_by("pk"))
    names = agent_names(runs)
    counts: dict[int, dict[str, int]] = {}
    for run_id, status, n in (ModelResponse.objects.filter(run__in=runs).values_list("run_id", "status")
                              .annotate(n=Count("id")).order_by()):
        counts.setdefault(run_id, {})[status] = n
    for run in runs:
        by_status = counts.get(run.pk, {})
        ok = by_status.get(ModelResponse.Status.OK, 0)
        other = sum(by_status.values()) - ok
        detail = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()) if s != ModelResponse.Status.OK)
        rows.append((f"run {run.pk}: {names.get(run.pk, run.endpoint.model)}", study.slug, run.status, ok, other,
                     detail))
    return pd.DataFrame(rows, columns=COLUMNS)
