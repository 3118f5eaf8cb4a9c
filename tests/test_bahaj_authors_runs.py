"""Bahaj et al.'s protocol run through the platform: the hint conditions as design conditions (bahaj-hints), the
authors' prompt styles (byte-equal prompts, the hint drawn per try, seeded and stored with the answer, no
temperature sent), and the authors' self-refinement (raw replies as candidates, the reply read as a Python
literal and asked again up to 5 times). Model calls go to the loopback stub."""
from __future__ import annotations

import io

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.refinement import create_refinement
from elicitation.runs import create_run, run_sync, start_run
from families.bahaj.refinement import authors_draw, raw_pool
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.designs import DesignError, generate_items
from families.bahaj import authors as bahaj
from surveys.importers import import_items
from surveys.models import Item, Study

pytestmark = pytest.mark.django_db

CSV = "id,question,answer,source\nsperm,How many chromosomes are in a human sperm cell?,23,biology\n"
GOOD = "{'chosen_answer': [22, 24], 'chosen_reason': 'a', 'proposed_answer': [23, 23], 'proposed_reason': 'b'}"


@pytest.fixture
def study(db):
    call_command("create_study", "op", "--instrument", "interval_confidence", stdout=io.StringIO())
    study = Study.objects.get(slug="op")
    import_items(study, io.StringIO(CSV))
    return study


def test_hint_conditions_are_design_conditions(study):
    items = generate_items(study, "bahaj-hints")
    assert len(items) == 15 and study.main_items().count() == 20  # 5 levels × (hint0 + 3 hints)
    keys = set(study.main_items().values_list("key", flat=True))
    assert {f"sperm|{c}|{h}" for c in (60, 70, 80, 90, 95) for h in ("hint1", "hint3", "hint8")} <= keys
    hinted = Item.objects.get(study=study, key="sperm|95|hint3")
    assert hinted.extra == {"source": "biology", "confidence": 95, "hint": "hint3"} and hinted.ground_truth == 23
    assert study.report_options == {"reading": "authors"}  # the design's report default
    with pytest.raises(DesignError, match="already has 15"):
        generate_items(study, "bahaj-hints")
    with pytest.raises(DesignError, match="unknown hint condition 'hint2'"):
        generate_items(study, "bahaj-hints", hints="hint1,hint2")


def test_generate_items_command_takes_hints(study):
    out = io.StringIO()
    call_command("generate_items", "op", "--design", "bahaj-hints", "--hints", "hint8", stdout=out)
    assert "generated 5 bahaj-hints items" in out.getvalue()
    assert set(Item.objects.filter(study=study, extra__hint="hint8").values_list("key", flat=True)) == \
        {f"sperm|{c}|hint8" for c in (60, 70, 80, 90, 95)}


def test_authors_run_sends_the_authors_prompts_with_seeded_hints_and_no_temperature(stub, study):
    generate_items(study, "bahaj-hints", hints=["hint1"])
    make_endpoint(stub)
    stub.default = Reply.answer("```\nlower_bound: 22\nupper_bound: 24\n```")
    run = create_run(study, make_endpoint(stub, name="other"), ElicitationRun.Mode.SAMPLED, samples=5, seed=3,
                     max_tokens=64, prompt_style="authors-vanilla")
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == "completed"
    rows = list(ModelResponse.objects.filter(run=run).select_related("item", "prompt"))
    assert len(rows) == 50  # 10 items × 5 tries
    hints = set()
    for row in rows:
        item, record = row.item, row.detail["hint"]
        assert record["condition"] == item.extra.get("hint", "hint0")
        expected_hint = bahaj.draw_hint(record["condition"], 23, bahaj.hint_rng(3, item.key, row.sample_index))
        assert record == expected_hint.record()
        text = bahaj.generation_prompt(item.statement, item.extra["confidence"], "vanilla", expected_hint)
        assert row.prompt.content == [{"role": "user", "content": text}]
        assert "temperature" not in row.params and row.detail["temperature"] == "provider default (not sent)"
        assert (row.lower, row.upper, row.status) == (22, 24, "ok")
        if record["condition"] == "hint1":
            assert f"the lower bound is: {record['lower']} and the upper bound is: {record['upper']}\nAnswer:" in text
            hints.add((record["lower"], record["upper"]))
        else:
            assert record["lower"] is None and text.endswith("\n\nAnswer:")
    assert len(hints) > 1  # redrawn for every try
    assert all("temperature" not in r.body for r in stub.requests if r.path.endswith("/chat/completions"))


def test_authors_styles_refuse_a_temperature(stub, study):
    make_endpoint(stub)
    with pytest.raises(ValidationError, match="sends no temperature"):
        create_run(study, make_endpoint(stub, name="x"), ElicitationRun.Mode.SAMPLED, samples=5, temperature=1.0,
                   prompt_style="authors-cot")
    run = create_run(study, make_endpoint(stub, name="y"), ElicitationRun.Mode.SAMPLED, samples=5,
                     prompt_style="authors-cot")
    assert run.temperature == 0


def test_standard_style_still_sends_its_temperature(stub, study):
    make_endpoint(stub)
    stub.default = Reply.answer("[1, 2]")
    run = create_run(study, make_endpoint(stub, name="z"), ElicitationRun.Mode.GREEDY, max_tokens=8)
    start_run(run, queue=False)
    run_sync(run)
    row = ModelResponse.objects.filter(run=run).first()
    assert row.params["temperature"] == 0.0 and "temperature" not in (row.detail or {}) \
        and "hint" not in (row.detail or {})


@pytest.fixture
def authors_source(stub, study):
    make_endpoint(stub)

    def responder(request):  # one reply per (level, try): the 95 % item's first try is unreadable
        if "Possible Answers" in request.prompt_text:
            return None
        seed = request.body.get("seed")
        if "you should be 95% sure" in request.prompt_text and seed == 1:
            return Reply.answer("I cannot say.")
        if seed == 2:
            return Reply.answer("lower_bound: $21\nupper_bound: 25")
        return Reply.answer("```\nlower_bound: 20\nupper_bound: 26\n```")

    stub.responder = responder
    run = create_run(study, ModelEndpoint.objects.get(name="stub"),
                     ElicitationRun.Mode.SAMPLED, samples=3, seed=1, max_tokens=64, prompt_style="authors-vanilla")
    start_run(run, queue=False)
    return run_sync(run)


def test_authors_refinement_shows_raw_replies_and_reads_python_literals(stub, authors_source):
    asks: dict[str, int] = {}
    bad = ['{"chosen_answer": [22, 24], "proposed_answer": [23, 23],}  trailing words', "```python\n" + GOOD + "\n```"]

    def responder(request):  # the 95 % item's prompt gets two replies that are no Python literal first
        text = request.prompt_text
        asks[text] = asks.get(text, 0) + 1
        if "confidence_level: 95%" in text and asks[text] <= 2:
            return Reply.answer(bad[asks[text] - 1])
        return Reply.answer(GOOD)

    stub.responder = responder
    run = create_refinement(authors_source, authors_source.endpoint, shown=3, setting="single", draw_seed=5,
                            temperature=1.0, mode=ElicitationRun.Mode.GREEDY)
    assert (run.prompt_style, run.temperature, run.prompt_version) == ("authors-refine", 0, "bahaj-authors-refine-v1")
    assert run.items.count() == 5  # every item has replies, read or not
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == "completed"
    rows = list(ModelResponse.objects.filter(run=run).select_related("item", "prompt").order_by("answered_at"))
    asked = {row.item.extra["confidence"]: row.detail for row in rows}
    assert asked[95]["asks"] == 3 and len(asked[95]["ask_errors"]) == 2  # asked again until a literal
    assert asked[95]["ask_errors"][0].startswith("not a Python literal: SyntaxError")
    assert all(asked[c]["asks"] == 1 and "ask_errors" not in asked[c] for c in (60, 70, 80, 90))
    for row in rows:
        shown = authors_draw(run, row.item, row.sample_index)
        assert row.detail["shown"] == [pk for pk, _, _ in shown] and len(shown) == 3
        raws = dict(ModelResponse.objects.filter(pk__in=row.detail["shown"]).values_list("pk", "raw_output"))
        expected = bahaj.refinement_prompt(row.item.statement,
                                           [(raws[pk], row.item.extra["confidence"]) for pk in row.detail["shown"]],
                                           "single")
        assert row.prompt.content == [{"role": "user", "content": expected}]
        assert (row.status, row.lower, row.upper) == ("ok", 23, 23)
        assert row.detail["chosen"] == [22, 24] and row.detail["proposed"] == [23, 23]
        assert "temperature" not in row.params
    item95 = Item.objects.get(study=run.study, key="sperm|95")
    pool = raw_pool(run, item95)
    assert [raw for _, raw, _ in pool].count("I cannot say.") == 1 and len(pool) == 3  # unread replies are candidates


def test_authors_refinement_gives_up_after_five_asks(stub, authors_source):
    stub.responder = None
    stub.default = Reply.answer("chosen_answer: [1, 2]")
    run = create_refinement(authors_source, authors_source.endpoint, shown=2, setting="mixed", draw_seed=1)
    start_run(run, queue=False)
    run = run_sync(run)
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 1 and rows.get().item.key == "sperm|60"  # mixed: one prompt per question, as they did
    row = rows.get()
    assert row.status == "unparseable" and {c for *_, c in authors_draw(run, row.item, 0)} <= {60, 70, 80, 90, 95}
    assert row.detail["asks"] == 5 and len(row.detail["ask_errors"]) == 5
    assert row.parse_error.startswith("no Python literal in 5 asks")
    asked = [r for r in stub.requests if "Possible Answers" in r.prompt_text]
    assert len(asked) == 5  # 5 asks


def test_authors_refinement_keeps_reversed_and_odd_replies_out_of_the_answer(stub, authors_source):
    def responder(request):
        if "confidence_level: 95%" in request.prompt_text:
            return Reply.answer("{'chosen_answer': [5, 1], 'proposed_answer': [9, 3]}")
        return Reply.answer("{'chosen_answer': [1, 2], 'proposed_answer': 7}")

    stub.responder = responder
    run = create_refinement(authors_source, authors_source.endpoint, shown=1, setting="single", draw_seed=1)
    start_run(run, queue=False)
    run_sync(run)
    rows = sorted(ModelResponse.objects.filter(run=run).select_related("item"),
                  key=lambda r: r.item.extra["confidence"], reverse=True)
    assert rows[0].status == "unparseable" and rows[0].detail["proposed"] == [9, 3] and rows[0].lower is None
    assert rows[0].parse_error.startswith("proposed: reversed interval")
    assert rows[1].parse_error == "chosen_answer and proposed_answer are not both lists of two bounds"
    assert rows[1].detail["asks"] == 1  # a literal: not asked again (the authors' scoring drops it)


def test_elicit_command_sends_no_temperature_for_the_authors_styles(stub, study):
    make_endpoint(stub)
    stub.default = Reply.answer("explaination: it is 23.\nlower_bound: 23\nupper_bound: 23")
    call_command("elicit", "op", "--endpoint", "stub", "--mode", "sampled", "--samples", "2", "--prompt-style",
                 "authors-cot", "--max-tokens", "64", "--items", "sperm|90", "--sync", "--no-check",
                 stdout=io.StringIO(), stderr=io.StringIO())
    run = ElicitationRun.objects.get()
    assert (run.prompt_style, run.temperature, run.mode) == ("authors-cot", 0, "sampled")
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 2 and all("temperature" not in r.params for r in rows)
    assert {(r.lower, r.upper) for r in rows} == {(23, 23)}  # a point interval is an answer
