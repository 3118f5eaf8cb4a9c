"""The Bahaj et al. report section from the database: model runs, a refinement run and participants scored
alike; the tables, the figure, report.json/CSVs (``report`` command) and the API."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token

from django.urls import reverse

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.modes import Completion
from elicitation.refinement import refinement_outcome
from surveys.importers import import_items
from surveys.models import Assignment, Participant, Response, Study

pytestmark = pytest.mark.django_db

CSV = ("id,question,answer,source\nmoon,In what year did humans first land on the Moon?,1969,history\n"
       "zero,What is absolute zero in degrees Celsius?,-273.15,science\n")


@pytest.fixture
def study():
    call_command("create_study", "op", "--instrument", "interval_confidence")
    study = Study.objects.get(slug="op")
    import_items(study, io.StringIO(CSV))
    return study


def model_run(study, answer, samples=1, **fields) -> ElicitationRun:
    """A completed run whose raw answer to (item, sample) is ``answer(item, sample)``, parsed by the kind."""
    endpoint, _ = ModelEndpoint.objects.get_or_create(name="gpt", base_url="http://127.0.0.1:9/v1", model="gpt")
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status=ElicitationRun.Status.COMPLETED,
                                        samples_per_item=samples, **fields)
    rows = []
    for item in study.main_items():
        for sample in range(samples):
            raw = answer(item, sample)
            parsed = study.kind.parse_model_answer(raw, item)
            rows.append(ModelResponse(run=run, item=item, sample_index=sample, raw_output=raw, answered_at=timezone.now(),
                                      status="ok" if parsed.ok else "unparseable", parse_error=parsed.error,
                                      **(parsed.answer.columns() if parsed.ok else {})))
    ModelResponse.objects.bulk_create(rows)
    return run


def refinement_run(source, raw) -> ElicitationRun:
    """A completed self-refinement run of ``source`` whose every answer is ``raw``, read as the worker does."""
    run = ElicitationRun.objects.create(study=source.study, endpoint=source.endpoint, prompt_style="refine",
                                        refines=source, refine_shown=2, refine_setting="single", refine_seed=1,
                                        status=ElicitationRun.Status.COMPLETED)
    outcome = refinement_outcome(source.study.kind, Completion(raw, None, 10, 10, "", "stop"))
    ModelResponse.objects.bulk_create([
        ModelResponse(run=run, item=item, raw_output=raw, status=outcome.status, detail=outcome.detail,
                      lower=outcome.lower, upper=outcome.upper, answered_at=timezone.now())
        for item in source.study.main_items()])
    return run


def knows_history(item, sample):
    """Hits every history question, misses every science one; the length grows with the level."""
    c = item.extra["confidence"]
    if item.extra["source"] == "history":
        return f"[{1969 - c}, {1969 + c}]"
    return "no idea" if sample == 2 else f"[{c}, {2 * c}]"


def human(study, pid, bounds):
    participant = Participant.objects.create(study=study, prolific_pid=pid)
    for position, item in enumerate(study.main_items().order_by("id"), start=1):
        slot = Assignment.objects.create(participant=participant, item=item, position=position)
        lower, upper = bounds(item)
        Response.objects.create(assignment=slot, participant=participant, item=item, lower=lower, upper=upper)
    participant.status, participant.completed_at = Participant.Status.COMPLETED, timezone.now()
    participant.save()


def test_tables_for_models_people_and_refinement(study, tmp_path):
    assert "no answers yet" in build_report(study).skipped["bahaj"]
    source = model_run(study, knows_history, samples=3, mode="sampled", temperature=1.0)
    human(study, "P1", lambda item: (item.ground_truth - 1, item.ground_truth + 1))  # always right
    refine = refinement_run(source, '{"chosen_answer": [1900, 2000], "proposed_answer": [0, 1]}')
    report = build_report(study)
    assert list(report.sections) == ["bahaj", "generic"]
    tables = report.tables()
    assert set(report.section("bahaj").tables()) == {"overprecision", "interval_scores", "aggregation_single",
                                                     "aggregation_mixed", "self_refinement", "hit_by_scale"}
    assert set(tables) == set(report.section("bahaj").tables()) | {"generic_summary"}

    table4 = tables["overprecision"].set_index(["agent", "source"])
    model = "gpt (sampled T=1)"
    assert table4.loc[(model, "history"), "hit_avg"] == 100 and table4.loc[(model, "science"), "hit_avg"] == 0
    assert table4.loc[(model, "all"), "hit@90"] == 50 and table4.loc[(model, "all"), "hit@90_sd"] == 0
    assert table4.loc[(model, "history"), "corr"] == pytest.approx(1.0)  # lengths 2c grow with c
    assert table4.loc[("human", "all"), "hit_avg"] == 100
    assert "gpt (greedy, refine)" not in {a for a, _ in table4.index}  # refinements have their own table

    single = tables["aggregation_single"].set_index(["agent", "source", "strategy"])
    assert single.loc[(model, "history", "Union"), "hit_avg"] == 100
    assert single.loc[(model, "science", "MIA"), "hit_avg"] == 0
    mixed = tables["aggregation_mixed"].set_index(["agent", "source", "strategy"])
    assert set(mixed.index.get_level_values("strategy")) == {"MIA", "LWA", "iLWA", "CWA", "Union"}
    assert mixed.loc[(model, "all", "Union"), "hit"] == 50  # history yes, science no

    refined = tables["self_refinement"].set_index(["kind", "source"])
    assert refined.loc[("chosen", "history"), "hit_avg"] == 100 and refined.loc[("proposed", "all"), "hit_avg"] == 0
    assert refined["agent"].str.contains(f"refining run {source.pk} \\(single, e=2, seed 1\\)").all()
    assert refine.pk and refined.loc[("chosen", "all"), "n"] == 10

    scores = tables["interval_scores"].set_index(["agent", "source"])
    assert scores.loc[("human", "all"), "ds_avg"] == 0 and scores.loc[(model, "science"), "ds_avg"] > 0
    scale = tables["hit_by_scale"].set_index(["agent", "band"])
    assert scale.loc[(model, 3), "hit"] == 100  # 1969: band 3
    assert scale.loc[(model, -3), "hit"] == 0   # −273.15: band −3

    out = tmp_path / "report"
    call_command("report", "op", "--out", str(out), stdout=io.StringIO())
    data = json.loads((out / "report.json").read_text())
    assert data["meta"]["figures"] == ["hit-by-scale", "generic-all-items"] and (out / "hit-by-scale.svg").exists()
    assert data["meta"]["draws"] == 10 and "human" in data["meta"]["agents"]
    assert (out / "overprecision.csv").read_text().startswith("agent,source,hit@95,hit@95_sd")
    assert len(data["tables"]["self_refinement"]) == 6  # 2 kinds × (all + 2 sources)


def test_the_api_and_the_admin_page_serve_the_report(study, client, admin_client, django_user_model):
    model_run(study, knows_history)
    page = admin_client.get(reverse("admin:analysis_studyanalysis_report", args=[study.pk])).content.decode()
    assert 'id="table-overprecision"' in page and 'id="table-aggregation_mixed"' in page, page[:3000]
    assert "Bahaj et al. Table 4" in page and 'id="figure-hit-by-scale"' in page  # Figure 2
    user = django_user_model.objects.create_superuser("analyst", password="pw")
    token = Token.objects.create(user=user)
    response = client.get("/api/studies/op/report/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert response.status_code == 200
    body = response.json()
    assert "overprecision" in body["tables"] and body["meta"]["sections"] == ["bahaj", "generic"]
    assert body["meta"]["title"] == study.title and f"<dd>{study.title} (op, interval_confidence)</dd>" in page


def test_a_run_with_no_readable_interval_is_reported_by_its_counts(study):
    model_run(study, lambda item, sample: "I cannot say", samples=2)
    report = build_report(study)
    table = report.tables()["overprecision"].set_index(["agent", "source"])
    assert table.loc[("gpt (greedy)", "all"), "unparsed"] == 20 and table.loc[("gpt (greedy)", "history"), "unparsed"] == 10
    assert report.figures() == [] and "hit_by_scale" not in report.tables()  # generic: no readable interval either
