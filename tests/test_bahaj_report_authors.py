"""The Bahaj et al. report under the authors' reading, with hand-made answers: model answers re-read with the
authors' cleaner (and the cases it touched counted), tables per hint condition (never pooled across conditions),
the authors' refinement runs scored from ``detail["chosen"]``/``detail["proposed"]``; and the whole pipeline
once against the loopback stub (bahaj-hints items, an authors-vanilla run, an authors-refine run, ``report``
under both readings)."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.management import call_command
from django.utils import timezone

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.modes import Completion
from elicitation.refinement import create_refinement
from families.bahaj.refinement import Asked, authors_outcome
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.designs import generate_items
from families.bahaj import authors as bahaj
from surveys.importers import import_items
from surveys.models import Study

pytestmark = pytest.mark.django_db

CSV = "id,question,answer,source\nsperm,How many chromosomes are in a human sperm cell?,23,biology\n"
MODEL = "gpt (greedy, authors-vanilla)"


@pytest.fixture
def study(db):
    call_command("create_study", "op", "--instrument", "interval_confidence", stdout=io.StringIO())
    study = Study.objects.get(slug="op")
    import_items(study, io.StringIO(CSV))
    return study


def endpoint() -> ModelEndpoint:
    return ModelEndpoint.objects.get_or_create(name="gpt", base_url="http://127.0.0.1:9/v1", model="gpt")[0]


def model_run(study, answer, samples=1, items=None, **fields) -> ElicitationRun:
    """A completed authors-vanilla run whose raw answer to (item, sample) is ``answer(item, sample)``, parsed and
    stored by the kind as a live answer is (the platform's reading)."""
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint(), status=ElicitationRun.Status.COMPLETED,
                                        samples_per_item=samples, prompt_style="authors-vanilla", **fields)
    rows = []
    for item in items if items is not None else study.main_items():
        for sample in range(samples):
            raw = answer(item, sample)
            parsed = study.kind.parse_model_answer(raw, item)
            rows.append(ModelResponse(run=run, item=item, sample_index=sample, raw_output=raw,
                                      answered_at=timezone.now(), status="ok" if parsed.ok else "unparseable",
                                      parse_error=parsed.error, **(parsed.answer.columns() if parsed.ok else {})))
    ModelResponse.objects.bulk_create(rows)
    return run


def authors_refinement(source, replies, setting="single") -> ElicitationRun:
    """A completed authors' refinement of ``source``: the reply to each item is ``replies[item key]``, read and
    stored as the worker does (families.bahaj.refinement.authors_outcome; a reply that is no literal: 5 asks)."""
    run = ElicitationRun.objects.create(study=source.study, endpoint=source.endpoint, prompt_style="authors-refine",
                                        refines=source, refine_shown=3, refine_setting=setting, refine_seed=1,
                                        status=ElicitationRun.Status.COMPLETED)
    rows = []
    for item in source.study.main_items().filter(key__in=replies):
        raw = replies[item.key]
        try:
            asked = Asked(Completion(raw, None, 1, 1, "", "stop"), 1, [], bahaj.literal_reply(raw))
        except ValueError as exc:
            asked = Asked(Completion(raw, None, 1, 1, "", "stop"), 5, [str(exc)] * 5, None)
        outcome = authors_outcome(asked)
        rows.append(ModelResponse(run=run, item=item, raw_output=raw, status=outcome.status, detail=outcome.detail,
                                  lower=outcome.lower, upper=outcome.upper, parse_error=outcome.parse_error,
                                  answered_at=timezone.now()))
    ModelResponse.objects.bulk_create(rows)
    return run


# One answer per level (truth 23). Platform reading: 95 hit, 90 unparsed (reversed), 80 hit (point), 70 hit
# ("$21" read as 21), 60 miss ([1200, 2500000]). Authors' cleaner: 95 hit, 90 [30, 20] a miss, 80 [23, 23] a hit,
# 70 lower bound erased ("$21" → missing: unparsed, a miss), 60 [1200, 2.56] a miss (comma removed, exponent
# mangled).
BY_LEVEL = {95: "lower_bound: 20\nupper_bound: 26", 90: "lower_bound: 30\nupper_bound: 20",
            80: "lower_bound: 23\nupper_bound: 23", 70: "lower_bound: $21\nupper_bound: 25",
            60: "lower_bound: 1,200\nupper_bound: 2.5e6"}


def by_level(item, sample):
    return BY_LEVEL[item.extra["confidence"]]


def table4(report) -> pd.Series:
    return report.tables()["overprecision"].set_index(["agent", "source"]).loc[(MODEL, "all")]


def test_the_authors_reading_reads_model_answers_with_the_authors_cleaner(study):
    model_run(study, by_level)
    stored = dict(ModelResponse.objects.values_list("item__extra__confidence", "lower"))
    assert stored[90] is None and stored[70] == 21  # the platform's parse, as stored
    text = build_report(study)
    row = table4(text)
    assert [row[f"hit@{c}"] for c in (95, 80, 70, 60)] == [100, 100, 100, 0] and pd.isna(row["hit@90"])
    assert (row["hit_avg"], row["unparsed"]) == (75, 1)  # mean of the hit@c over the 4 parsed answers

    study.report_options = {"reading": "authors"}
    study.save()
    report = build_report(Study.objects.get(pk=study.pk))
    row = table4(report)
    assert [row[f"hit@{c}"] for c in (95, 90, 80, 70, 60)] == [100, 0, 100, 0, 0]
    assert (row["hit_avg"], row["unparsed"], row["n_per_draw"]) == (40, 1, 4)  # "$21": unparsed, a miss
    cases = report.tables()["reading_cases"].set_index("case")["answers"]
    assert list(cases.index) == list(bahaj.CASES)
    assert cases.to_dict() == {**dict.fromkeys(bahaj.CASES, 0), "leading_text_erased": 1, "comma_removed": 1,
                               "exponent_mangled": 1}
    assert report.meta()["reading"] == "authors" and report.meta()["reading_cases"]["comma_removed"] == 1
    assert "applied: model answers were read with it" in report.titles()["reading_cases"]
    summary = report.sections["bahaj"].summary_text()
    assert "Bahaj reading: authors" in summary and "leading_text_erased: 1" in summary
    assert "not applied under the text reading" in text.titles()["reading_cases"]  # counted under text too
    assert text.tables()["reading_cases"]["answers"].sum() == 3


def test_hint_conditions_are_a_grouping_and_never_pooled(study):
    generate_items(study, "bahaj-hints", hints=["hint1"])
    # every hint0 try hits, every hint1 try misses: pooled draws would mix them
    model_run(study, lambda item, sample: ("lower_bound: 100\nupper_bound: 200" if item.extra.get("hint")
                                           else "lower_bound: 20\nupper_bound: 26"), samples=3)
    report = build_report(study)
    tables = report.tables()
    table = tables["overprecision"].set_index(["agent", "hint", "source"])
    assert table.loc[(MODEL, "hint0", "all"), "hit_avg"] == 100 and table.loc[(MODEL, "hint1", "all"), "hit_avg"] == 0
    assert table.loc[(MODEL, "hint0", "all"), "n_per_draw"] == 5  # one try per item of the condition
    for name in ("aggregation_single", "aggregation_mixed"):
        agg = tables[name].set_index(["agent", "hint", "source", "strategy"])
        score = "hit_avg" if name == "aggregation_single" else "hit"
        assert (agg.xs("hint0", level="hint")[score] == 100).all() and (agg.xs("hint1", level="hint")[score] == 0).all()
        assert (agg[f"{score}_sd"] == 0).all()
    scores = tables["interval_scores"]
    assert set(scores["hint"]) == {"hint0", "hint1"}
    assert set(tables["answer_histogram"]["hint"]) == {"hint0", "hint1"}  # the design's reading: authors
    assert "hint condition" in report.titles()["overprecision"] and report.meta()["hint_conditions"] == ["hint0", "hint1"]
    assert [name for name, _ in report.section("bahaj").figures()] == ["answer-histogram"]
    study.report_options = {"reading": "text"}
    study.save()
    text = build_report(study)
    assert set(text.tables()["hit_by_scale"]["hint"]) == {"hint0", "hint1"}
    assert [name for name, _ in text.section("bahaj").figures()] == ["hit-by-scale"]


def test_authors_refinement_runs_are_scored_from_chosen_and_proposed(study):
    source = model_run(study, by_level)
    authors_refinement(source, {
        "sperm|95": "{'chosen_answer': [22, 24], 'proposed_answer': [25, 21]}",   # proposed reversed: a miss
        "sperm|90": "{'chosen_answer': ['a', 24], 'proposed_answer': [20, 30]}",  # chosen not a number: a miss
        "sperm|80": "I think [20, 30]",                                             # no literal in 5 asks: dropped
        "sperm|70": "{'chosen_answer': [1, 2], 'proposed_answer': 7}",             # not two lists: dropped
        "sperm|60": "{'chosen_answer': [22, 24], 'proposed_answer': [23, 23]}"})
    study.report_options = {"reading": "authors"}
    study.save()
    refined = build_report(study).tables()["self_refinement"]
    refined = refined[refined["source"] == "all"].set_index("kind")
    assert refined.loc["chosen", "dropped"] == refined.loc["proposed", "dropped"] == 2
    assert refined.loc["chosen", "hit_avg"] == pytest.approx(200 / 3)  # 95 and 60 hit, 90 a miss
    assert refined.loc["proposed", "hit_avg"] == pytest.approx(200 / 3)  # 90 and 60 hit, 95 reversed
    assert [refined.loc["proposed", f"hit@{c}"] for c in (95, 90, 60)] == [0, 100, 100]
    assert pd.isna(refined.loc["proposed", "hit@80"])

    study.report_options = {"reading": "text"}
    study.save()
    text = build_report(study).tables()["self_refinement"]
    text = text[text["source"] == "all"].set_index("kind")
    assert text.loc["proposed", "hit_avg"] == 100 and text.loc["proposed", "unparsed"] == 3  # reversed: unread
    assert text.loc["chosen", "unparsed"] == 3 and text.loc["chosen", "hit_avg"] == 100


def test_the_authors_mixed_refinement_is_scored_per_question_and_hint(study):
    generate_items(study, "bahaj-hints", hints=["hint1"])
    source = model_run(study, by_level)
    authors_refinement(source, {"sperm|60": "{'chosen_answer': [0, 1], 'proposed_answer': [20, 30]}",
                                "sperm|60|hint1": "{'chosen_answer': [0, 1], 'proposed_answer': [0, 1]}"}, "mixed")
    for reading in ("authors", "text"):
        study.report_options = {"reading": reading}
        study.save()
        table = build_report(study).tables()["self_refinement"]
        table = table[table["source"] == "all"].set_index(["hint", "kind"])
        assert table.loc[("hint0", "proposed"), "hit_avg"] == 100 and table.loc[("hint1", "proposed"), "hit_avg"] == 0
        assert table.loc[("hint0", "chosen"), "hit_avg"] == 0
        assert table[[f"hit@{c}" for c in (95, 90, 80, 70, 60)] + ["corr"]].isna().all().all()  # hit-avg only


def test_the_whole_pipeline_against_the_stub(stub, study, tmp_path):
    generate_items(study, "bahaj-hints")
    assert study.main_items().count() == 20
    make_endpoint(stub)

    def responder(request):
        text = request.prompt_text
        if "Possible Answers" in text:
            return Reply.answer("{'chosen_answer': [20, 26], 'chosen_reason': 'a', 'proposed_answer': [22, 24], "
                                "'proposed_reason': 'b'}")
        if "the lower bound is:" in text:  # a hinted prompt: "$21" (the platform reads 21; the authors: missing)
            return Reply.answer("```\nlower_bound: $21\nupper_bound: 25\n```")
        return Reply.answer("```\nlower_bound: 20\nupper_bound: 26\n```")

    stub.responder = responder
    run = create_run(study, ModelEndpoint.objects.get(name="stub"), ElicitationRun.Mode.SAMPLED, samples=2, seed=3,
                     max_tokens=64, prompt_style="authors-vanilla")
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == "completed" and ModelResponse.objects.filter(run=run).count() == 40
    refine = create_refinement(run, run.endpoint, shown=2, setting="single", draw_seed=1)
    start_run(refine, queue=False)
    refine = run_sync(refine)
    assert refine.status == "completed" and ModelResponse.objects.filter(run=refine, status="ok").count() == 20

    results = {}
    for reading in ("authors", "text"):
        out = tmp_path / reading
        call_command("report", "op", "--option", f"reading={reading}", "--out", str(out), stdout=io.StringIO())
        results[reading] = json.loads((out / "report.json").read_text())
        assert (out / "reading_cases.csv").exists()
    for reading, data in results.items():
        meta = data["meta"]
        assert meta["reading"] == reading and meta["hint_conditions"] == ["hint0", "hint1", "hint3", "hint8"]
        table4 = {(r["hint"], r["source"]): r for r in data["tables"]["overprecision"]}
        assert set(h for h, _ in table4) == {"hint0", "hint1", "hint3", "hint8"}
        assert table4[("hint0", "all")]["hit_avg"] == 100
        hinted = 0 if reading == "authors" else 100  # "$21": a miss only under the authors' cleaner
        assert all(table4[(h, "all")]["hit_avg"] == hinted for h in ("hint1", "hint3", "hint8"))
        assert meta["reading_cases"]["leading_text_erased"] == 30  # 3 hinted conditions × 5 levels × 2 tries
        refined = [r for r in data["tables"]["self_refinement"] if r["source"] == "all" and r["kind"] == "proposed"]
        assert len(refined) == 4 and all(r["hit_avg"] == 100 and r["n"] == 5 for r in refined)
        assert all(f"refining run {run.pk}" in r["agent"] for r in refined)
    assert results["authors"]["meta"]["figures"] == ["answer-histogram", "generic-all-items"]
    assert results["text"]["meta"]["figures"] == ["hit-by-scale", "generic-all-items"]
