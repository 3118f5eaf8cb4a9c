"""Self-refinement as a run built on a run (Bahaj et al. Table 2): draws, prompts, stored answers, resuming,
settings and the database constraint; model calls go to the loopback stub."""
from __future__ import annotations

import io
import re

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.db import IntegrityError, transaction

from elicitation.models import ElicitationRun, ModelResponse
from elicitation.refinement import create_refinement
from families.bahaj.refinement import draw, read_refinement
from elicitation.runs import create_run, resume_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.importers import import_items
from surveys.models import Study

pytestmark = pytest.mark.django_db

CSV = ("id,question,answer,source\nmoon,In what year did humans first land on the Moon?,1969,history\n"
       "zero,What is absolute zero in degrees Celsius?,-273.15,science\n")


def run_command(*args) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def interval_replies(request) -> Reply:
    """Source answers: a different interval per sample (the seed tells them apart); one unreadable."""
    seed = request.body.get("seed", 0)
    if "Possible Answers" in request.prompt_text:
        return Reply.answer('{"chosen_answer": [1960, 1970], "chosen_reason": "widest", '
                            '"proposed_answer": [1965, 1972], "proposed_reason": "narrower"}')
    return Reply.answer("I am not sure" if seed == 12 else f"[{1900 + seed}, {1980 + seed}]")


@pytest.fixture
def source(stub):
    call_command("create_study", "op", "--instrument", "interval_confidence")
    study = Study.objects.get(slug="op")
    import_items(study, io.StringIO(CSV))
    make_endpoint(stub)
    stub.responder = interval_replies
    run = create_run(study, stub_endpoint(), ElicitationRun.Mode.SAMPLED, samples=3, temperature=1.0, seed=10,
                     max_tokens=32)
    start_run(run, queue=False)
    return run_sync(run)


def stub_endpoint():
    from elicitation.models import ModelEndpoint

    return ModelEndpoint.objects.get(name="stub")


def test_read_refinement_answers():
    chosen, proposed = read_refinement('{"chosen_answer": [1,200, 1,500], "proposed_answer": "[3, 4]"}')
    assert (chosen.lower, chosen.upper, proposed.lower, proposed.upper) == (1200, 1500, 3, 4)
    chosen, proposed = read_refinement('chosen_answer: [5, 2]\nno proposal')
    assert chosen.error.startswith("reversed interval") and proposed.error == "no proposed_answer in the answer"


def test_refinement_run_shows_drawn_answers_and_stores_both_intervals(stub, source):
    assert source.status == "completed"
    assert ModelResponse.objects.filter(run=source, status="unparseable").count() == 10  # seed 12: sample 2
    out = run_command("refine", str(source.pk), "--shown", "2", "--setting", "single", "--draw-seed", "7", "--sync")
    run = ElicitationRun.objects.exclude(pk=source.pk).get()
    assert f"created run {run.pk}: self-refinement of run {source.pk}" in out and run.status == "completed"
    assert (run.refines, run.refine_shown, run.refine_setting, run.refine_seed, run.prompt_style) == \
        (source, 2, "single", 7, "refine")
    rows = list(ModelResponse.objects.filter(run=run).select_related("item", "prompt"))
    assert len(rows) == 10  # every item of the source has two parsed answers
    for row in rows:
        prompt = row.prompt.content[0]["content"]
        assert f"Question: {row.item.statement}" in prompt and '"proposed_answer": [lower_bound' in prompt
        shown = re.findall(r"^(-?\d+) \| (-?\d+) \| (\d+)%$", prompt, re.M)
        drawn = draw(run, row.item, row.sample_index)
        assert shown == [(f"{int(lo)}", f"{int(hi)}", f"{c}") for _, lo, hi, c in drawn] and len(shown) == 2
        assert {c for *_, c in shown} == {str(row.item.extra["confidence"])}  # single: the item's own level
        assert (row.lower, row.upper, row.detail["chosen"]) == (1965, 1972, [1960, 1970])
    # the draw is reproducible and depends on the seed
    item = rows[0].item
    assert draw(run, item, 0) == draw(run, item, 0)


def test_mixed_setting_draws_across_levels(stub, source):
    run = create_refinement(source, stub_endpoint(), shown=6, setting="mixed", draw_seed=1)
    assert run.items.count() == 10
    item = run.items.order_by("id").first()
    levels = {c for *_, c in draw(run, item, 0)}
    assert len(draw(run, item, 0)) == 6 and len(levels) > 1


def test_a_failed_refinement_is_resumed_with_the_same_prompt(stub, source):
    replies = iter([Reply.error(400, "bad request")])

    def flaky(request):
        if "Possible Answers" in request.prompt_text:
            return next(replies, None) or interval_replies(request)
        return interval_replies(request)

    stub.responder = flaky
    run = create_refinement(source, stub_endpoint(), shown=2, draw_seed=3)
    start_run(run, queue=False)
    run = run_sync(run)
    assert run.status == "failed"
    failed = ModelResponse.objects.get(run=run, status="failed")
    resume_run(run, queue=False)
    run = run_sync(run)
    again = ModelResponse.objects.get(pk=failed.pk)
    assert run.status == "completed" and again.status == "ok"
    assert again.prompt_hash and again.prompt_hash == ModelResponse.objects.get(pk=failed.pk).prompt_hash
    assert ModelResponse.objects.filter(run=run).count() == 10  # nothing added or lost


def test_refinement_settings_are_checked(stub, source):
    with pytest.raises(ValidationError, match="need a source run"):
        create_run(source.study, stub_endpoint(), prompt_style="refine")
    with pytest.raises(ValidationError, match="refine_setting"):
        create_refinement(source, stub_endpoint(), setting="sideways")
    refined = create_refinement(source, stub_endpoint(), draw_seed=1)
    with pytest.raises(ValidationError, match="itself a refinement"):
        create_refinement(refined, stub_endpoint())
    with pytest.raises(CommandError, match="no run 999"):
        run_command("refine", "999")


def test_the_database_refuses_a_half_described_refinement(stub, source):
    with pytest.raises(IntegrityError, match="run_refinement_complete"), transaction.atomic():
        ElicitationRun.objects.filter(pk=source.pk).update(refines=source)  # no e, setting or seed
    with pytest.raises(IntegrityError, match="run_refinement_complete"), transaction.atomic():
        ElicitationRun.objects.filter(pk=source.pk).update(refine_shown=3)  # e without a source
