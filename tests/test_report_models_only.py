"""A models-only pilot (a Chinese Tang RQ1 study asked by a model, no people yet) gets a report everywhere —
CLI, API, admin page and report.json — showing what exists and saying, once per reason, what is missing
(issue 23, point 3)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.designs import generate_items
from surveys.models import Study

pytestmark = pytest.mark.django_db


@pytest.fixture
def tang_zh(stub):  # noqa: F811
    study = Study.objects.create(slug="tang-zh", title="Tang zh", instrument="wep_probability", language="zh-hans")
    generate_items(study, "tang-rq1", settings="CNC", language="zh")
    stub.default = Reply.answer("70")
    run = create_run(study, make_endpoint(stub), items=list(study.main_items().order_by("id")[:5]), max_tokens=16)
    start_run(run, queue=False)
    assert run_sync(run).status == "completed"
    assert study.attention_filter is None and not study.applies_attention_filter  # the kind's default: off
    return study


def test_models_only_study_has_a_report_everywhere(tang_zh, tmp_path, admin_client, admin_user, client):
    out = io.StringIO()
    call_command("report", "tang-zh", "--out", str(tmp_path), stdout=out)
    text = out.getvalue()
    assert "Not built yet:" in text and text.count("has no completed human participants yet") == 1
    run = ElicitationRun.objects.get(study=tang_zh)  # its number: PostgreSQL does not reuse ids between tests
    assert f"run {run.pk}: stub (greedy)" in text and "no completed human participant yet" in text
    assert "rank the labels" not in text  # the attention filter is off for this kind: it is not the reason
    saved = json.loads((tmp_path / "report.json").read_text())
    assert set(saved["meta"]["sections_not_built"]) == {"belem", "tang_rq1"} and saved["meta"]["sections"] == ["generic"]
    assert "no human answers yet" in text and "no human answers yet" in " ".join(saved["meta"]["notes"])
    assert saved["tables"]["generic_summary"][0]["agent"] == "stub (greedy)" and (tmp_path / "generic-all-items.png").exists()
    assert saved["tables"]["available"][1]["answers_ok"] == 5 and (tmp_path / "available.csv").exists()

    page = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[tang_zh.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Tang zh (tang-zh, wep_probability)" in html and 'id="table-available"' in html
    assert html.count("has no completed human participants yet") == 1
    assert admin_client.get(reverse("admin:analysis_studyanalysis_report_json", args=[tang_zh.pk])).status_code == 200

    token = Token.objects.create(user=admin_user)
    data = client.get("/api/studies/tang-zh/report/", HTTP_AUTHORIZATION=f"Token {token.key}").json()
    assert data["meta"]["title"] == "Tang zh" and len(data["meta"]["missing"]) == 2
    assert data["tables"]["available"][0]["detail"] == "no completed human participant yet"


def test_people_all_left_out_by_the_attention_filter_are_not_called_missing(imported_nv, stub, tmp_path):  # noqa: F811
    """Two participants who answered 50 to everything (as a researcher clicking through a pilot): the report
    says the attention filter excluded them, not that no human answered (the walk of issue 23 read "no human
    answers yet" beside "2 completed, 60 answers")."""
    from surveys import flow

    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    assert imported_nv.applies_attention_filter
    for pid in ("5f1a2b3c4d5e6f7a8b9c0d1e", "60aa2b3c4d5e6f7a8b9c0d99"):
        participant = flow.enter(imported_nv, {"PROLIFIC_PID": pid})
        flow.record_consent(participant, True)
        flow.record_instructions(participant)
        flow.record_pledge(participant)
        while (progress := flow.current_step(participant)).step == flow.Step.ITEM:
            flow.submit_answer(participant, progress.slot.position, progress.slot.item_id, {"value": "50"}, None)
    stub.default = Reply.answer("70")
    run = create_run(imported_nv, make_endpoint(stub), items=list(imported_nv.main_items().order_by("id")[:5]))
    start_run(run, queue=False)
    run_sync(run)
    out = io.StringIO()
    call_command("report", imported_nv.slug, "--out", str(tmp_path), stdout=out)
    text = out.getvalue()
    assert "no human answers yet" not in text, text
    assert "the exclusion rules excluded all 2 completed participant(s)" in text, text
    assert text.count("no human answers to build the reference distribution from: the attention filter excluded "
                      "all 2 completed participant(s)") == 1, text
