"""Bahaj et al. end to end with the bundled Gemma 3 270M: a handful of interval items asked 5 times (sampled),
a self-refinement of that run, and the report. Skipped unless the ``local`` extra is installed."""
from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from analysis.reports import build_report
from elicitation import local_model
from elicitation.models import ElicitationRun, ModelResponse
from families.bahaj.demo import QUESTIONS_FILE
from local_model_server import needs_model

pytestmark = [pytest.mark.local_model, needs_model, pytest.mark.django_db]


def test_sampled_intervals_then_self_refinement_then_report(server):
    local_model.register_endpoint(server["base_url"], server["model"])
    out = io.StringIO()
    call_command("create_study", "op", "--instrument", "interval_confidence", stdout=out)
    call_command("import_items", "op", str(QUESTIONS_FILE), stdout=out)
    keys = "everest|60,everest|95"
    call_command("elicit", "op", "--endpoint", "gemma3-270m-local", "--mode", "sampled", "--samples", "5",
                 "--seed", "1", "--max-tokens", "24", "--items", keys, "--sync", stdout=out, stderr=io.StringIO())
    source = ElicitationRun.objects.get()
    rows = ModelResponse.objects.filter(run=source)
    assert source.status == "completed" and rows.count() == 10
    assert not rows.filter(status="failed").exists() and all(r.raw_output for r in rows)
    for row in rows:  # every answer kept: an interval in order, or the reason there is none
        assert (row.status == "ok" and row.lower <= row.upper and row.value is None) or \
            (row.status == "unparseable" and row.parse_error and row.lower is None)

    if not rows.filter(status="ok").exists():  # a 270M model may give no interval at all: said clearly
        with pytest.raises(CommandError, match=f"run {source.pk} has no parsed interval to refine"):
            call_command("refine", str(source.pk), "--sync", stdout=out)
        return
    call_command("refine", str(source.pk), "--shown", "3", "--draw-seed", "1", "--max-tokens", "64", "--sync",
                 stdout=out, stderr=io.StringIO())
    refinement = ElicitationRun.objects.get(refines=source)
    answers = ModelResponse.objects.filter(run=refinement).select_related("prompt")
    assert refinement.status == "completed" and answers.count() == refinement.items.count() > 0
    assert all("Possible Answers:" in r.prompt.content for r in answers)  # completions endpoint: the text
    tables = build_report(source.study).tables()
    assert "gemma3-270m-local (sampled T=1)" in set(tables["overprecision"]["agent"])
    assert set(tables["self_refinement"]["kind"]) == {"chosen", "proposed"}
