"""The Bahaj et al. report section from the database: model runs, a refinement run and participants scored
alike; the tables, the figure, report.json/CSVs (``report`` command) and the API."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.utils import timezone
from rest_framework.authtoken.models import Token

from django.urls import reverse

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.modes import Completion
from families.bahaj.refinement import refinement_outcome
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
                                                     "aggregation_mixed", "self_refinement", "hit_by_scale",
                                                     "reading_cases"}
    assert set(tables) == set(report.section("bahaj").tables()) | {"generic_summary", "exclusion_flow"}

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


def tries(item, sample):
    """Sample 0 hits, sample 1 misses (too high), sample 2 is unreadable: the draws decide the scores."""
    a, c = item.ground_truth, item.extra["confidence"]
    return [f"lower_bound: {a - c:g}\nupper_bound: {a + c:g}", f"lower_bound: {a + 1:g}\nupper_bound: {a + c + 1:g}",
            "no idea"][sample]


AGENT_TABLES = ("overprecision", "aggregation_single", "aggregation_mixed")


def agent_rows(report, agent):
    return {name: (lambda t: t[t["agent"] == agent].reset_index(drop=True))(report.tables()[name]) for name in AGENT_TABLES}


@pytest.mark.parametrize("reading", ["text", "authors"])
def test_adding_an_agent_leaves_another_agent_s_figures_as_they_were(study, reading):
    study.report_options = {"reading": reading}
    study.save()
    model_run(study, tries, samples=3, mode="sampled", temperature=1.0)
    before = agent_rows(build_report(study), "gpt (sampled T=1)")
    assert before["overprecision"].loc[0, "hit_avg_sd"] > 0  # the draws matter
    model_run(study, lambda item, sample: tries(item, 2 - sample), samples=3)  # another agent: gpt (greedy)
    report = build_report(study)
    assert {"gpt (greedy)", "gpt (sampled T=1)"} <= set(report.tables()["overprecision"]["agent"])
    after = agent_rows(report, "gpt (sampled T=1)")
    for name in AGENT_TABLES:
        pd.testing.assert_frame_equal(before[name], after[name])


def test_the_authors_reading_as_a_report_option(study, tmp_path):
    source = model_run(study, tries, samples=3, mode="sampled", temperature=1.0)
    refinement_run(source, '{"chosen_answer": [1900, 2000], "proposed_answer": "none"}')
    refinement_run(source, '{"chosen_answer": [1900, 2000], "proposed_answer": [1960, 1970]}')
    text = build_report(study)
    assert text.meta()["reading"] == "text" and "reading = \"text\"" in text.titles()["overprecision"]
    out = tmp_path / "report"
    call_command("report", "op", "--option", "reading=authors", "--out", str(out), stdout=io.StringIO())
    study.refresh_from_db()
    assert study.report_options == {"reading": "authors"}
    data = json.loads((out / "report.json").read_text())
    assert data["meta"]["reading"] == "authors" and data["meta"]["mixed_intervals"] == 15
    assert data["meta"]["figures"] == ["answer-histogram", "generic-all-items"] and (out / "answer-histogram.svg").exists()
    report = build_report(study)
    assert "the authors' code" in report.titles()["overprecision"] and "15 per question" in report.titles()["aggregation_mixed"]
    tables = report.tables()
    histogram = tables["answer_histogram"]  # 1969 and −273.15 lie outside [−20, 20]: not drawn
    assert "hit_by_scale" not in tables and len(histogram) == 49 and histogram[["hits", "misses"]].sum().sum() == 0
    table4 = tables["overprecision"].set_index(["agent", "source"]).loc[("gpt (sampled T=1)", "all")]
    text4 = text.tables()["overprecision"].set_index(["agent", "source"]).loc[("gpt (sampled T=1)", "all")]
    # each draw keeps one of the 3 tries per item, the unreadable one a miss: about 1/3 of the draws' answers hit
    # (text reading: 1/2 of the parsed ones); in every draw, hit-avg is the pooled share of hits
    assert table4["unparsed"] == text4["unparsed"] == 10
    assert 0 < table4["hit_avg"] < text4["hit_avg"] < 100
    # refinements: only answers with both intervals read count (the first run's are all dropped)
    refined = tables["self_refinement"].set_index(["agent", "kind", "source"])
    assert refined["candidates"].eq(2).all()
    dropped = refined[refined["dropped"] == 10]
    assert len(dropped) == 2 and dropped["n"].isna().all()  # chosen and proposed of the first run, nothing scored
    kept = refined[refined.index.get_level_values("agent").str.startswith(f"run {source.pk + 2}")]
    assert kept.loc[(slice(None), "proposed", "history"), "hit_avg"].iloc[0] == 100
    assert kept.loc[(slice(None), "chosen", "all"), "n"].iloc[0] == 10


def test_the_paper_s_nine_intervals_as_a_named_option(study, tmp_path):
    model_run(study, tries, samples=3, mode="sampled", temperature=1.0)
    call_command("report", "op", "--option", "mixed_intervals=9", "--no-figures", "--out", str(tmp_path),
                 stdout=io.StringIO())
    report = build_report(Study.objects.get(slug="op"))
    assert report.meta()["mixed_intervals"] == 9 and "9 answers per question" in report.titles()["aggregation_mixed"]
    from django.core.management.base import CommandError
    with pytest.raises(CommandError, match="mixed_intervals"):
        call_command("report", "op", "--option", "mixed_intervals=12", stdout=io.StringIO())


def test_refinements_under_the_authors_reading_keep_only_answers_with_both_intervals_read():
    """Two runs × two items (a 90% question with answer 5, a 60% one with answer 1); run r1's proposed intervals
    were not read, run r2's were: [4, 6] (a hit on 5, a miss on 1); every chosen interval is [0, 10]."""
    from families.bahaj.report import refinement_table

    rows = []
    for run, both in (("r1", False), ("r2", True)):
        for item, (source, c, truth) in enumerate([("h", 90, 5), ("s", 60, 1)]):
            for kind, lower, upper in (("chosen", 0, 10), ("proposed", 4 if both else None, 6 if both else None)):
                rows.append(dict(agent=run, setting="single", candidates=3, item_id=item, both_read=both, kind=kind,
                                 lower=lower, upper=upper, question=f"q{item}", truth=truth, confidence=c,
                                 source=source))
    df = pd.DataFrame(rows).astype({"lower": float, "upper": float})
    authors = refinement_table(df, "authors").set_index(["agent", "kind", "source"])
    assert authors.loc[("r1", "chosen", "all"), "dropped"] == 2 and pd.isna(authors.loc[("r1", "chosen", "all"), "hit_avg"])
    assert authors.loc[("r2", "proposed", "all"), ["hit@90", "hit@60", "hit_avg", "n"]].tolist() == [100, 0, 50, 2]
    text = refinement_table(df, "text").set_index(["agent", "kind", "source"])
    assert text.loc[("r1", "chosen", "all"), "hit_avg"] == 100  # the text reading scores r1's chosen intervals
    assert text.loc[("r1", "proposed", "all"), "unparsed"] == 2
    mixed = refinement_table(df.assign(setting="mixed"), "authors").set_index(["agent", "kind", "source"])
    assert mixed.loc[("r2", "proposed", "all"), "hit_avg"] == 50 and pd.isna(mixed.loc[("r2", "proposed", "all"), "hit@90"])
