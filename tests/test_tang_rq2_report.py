"""The Tang RQ2 report section from the database: a generated 360-item study answered by models (through the
instrument's own parser), scored with the four consistency metrics beside the random baseline."""
from __future__ import annotations

import pytest
from django.core.management import call_command
from django.utils import timezone

from analysis.reports import build_report
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from stub_openai import stub  # noqa: F401 (a fixture)
from surveys.models import Study

pytestmark = pytest.mark.django_db


def answer_run(study, style: str, answer) -> ElicitationRun:
    """A completed run whose raw answer to each item is ``answer(item)``, parsed by the wep_choice kind."""
    endpoint, _ = ModelEndpoint.objects.get_or_create(name="gpt", base_url="http://127.0.0.1:9/v1", model="gpt")
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, prompt_style=style,
                                        status=ElicitationRun.Status.COMPLETED)
    rows = []
    for item in study.main_items():
        raw = answer(item)
        parsed = study.kind.parse_model_answer(raw, item)
        rows.append(ModelResponse(run=run, item=item, raw_output=raw, answered_at=timezone.now(),
                                  status="ok" if parsed.ok else "unparseable", parse_error=parsed.error,
                                  **(parsed.answer.columns() if parsed.ok else {})))
    ModelResponse.objects.bulk_create(rows)
    return run


def rq2_study(slug: str, *numbers: str) -> Study:
    """A wep_choice study with the 360 tang-rq2 items (``numbers``: generate_items options, default --seed 1)."""
    call_command("create_study", slug, "--instrument", "wep_choice")
    call_command("generate_items", slug, "--design", "tang-rq2", *(numbers or ("--seed", "1")))
    return Study.objects.get(slug=slug)


@pytest.fixture
def rq2():
    return rq2_study("rq2")


def test_an_oracle_scores_100_on_empirical_and_cot_is_compared_with_standard(rq2, tmp_path):
    # standard prompt: always the ground truth, written as the phrase; CoT: always "A" after reasoning
    texts = {item.pk: dict(item.extra["options"]) for item in rq2.main_items()}
    answer_run(rq2, "standard", lambda i: f"the value {texts[i.pk][i.extra['truth_choice']]}")
    answer_run(rq2, "cot", lambda i: "Roughly 0.4, so B? No. I choose: A")
    report = build_report(rq2)
    assert list(report.sections) == ["tang_rq2", "generic"]
    table = report.tables()["consistency"]
    overall = table[table["scope"] == "overall"].set_index(["agent", "metric"])
    assert overall.loc[("gpt (greedy)", "empirical"), "score"] == 100
    assert overall.loc[("gpt (greedy)", "empirical"), "n"] == 360
    assert overall.loc[("gpt (greedy)", "empirical_monotonicity"), "score"] == 100
    assert overall.loc[("gpt (greedy)", "pairwise"), "n"] == 180
    assert overall.loc[("gpt (greedy)", "monotonicity"), "n"] == 72
    # always "A": monotone (ties allowed) everywhere, never a complementary pair except 3-choice "maybe" never
    assert overall.loc[("gpt (greedy, cot)", "monotonicity"), "score"] == 100
    assert overall.loc[("gpt (greedy, cot)", "pairwise"), "score"] == 0
    random_empirical = overall.loc[("gpt (greedy)", "empirical"), "random"]
    assert 20 < random_empirical < 35  # about 1/5 and 1/3 over the two choice sets
    per_scenario = table[table["scope"] == "scenario"]
    assert set(per_scenario["level"]) == {"height", "score", "sound"}
    tests = report.tables()["consistency_tests"]
    style = tests[tests["comparison"] == "gpt (greedy) vs gpt (greedy, cot)"]
    assert set(style["scenario"]) == {"height", "score", "sound"} and len(style) == 12
    assert set(tests["comparison"]) >= {"choices: 5 vs 3", "numbers: narrow vs wide"}
    written = {p.name for p in report.write(tmp_path)}
    assert {"consistency.csv", "consistency_tests.csv", "report.json"} <= written


def test_unparseable_answers_are_kept_and_counted(rq2):
    answer_run(rq2, "standard", lambda i: "I cannot tell")
    report = build_report(rq2)
    assert report.meta()["unparsed_answers"] == 360
    overall = report.tables()["consistency"].query("scope == 'overall'").set_index("metric")
    assert (overall["score"] == 0).all()


def test_the_report_says_what_is_missing(rq2):
    report = build_report(rq2)
    assert "no model answers yet" in report.skipped["tang_rq2"] and not report.sections


def test_elicit_asks_both_prompt_styles_and_parses_choices(rq2, stub):
    """Through the real worker and HTTP: the CoT prompt is the paper's, its final choice is read after
    'I choose:', an unreadable answer is kept; a style the kind does not have is refused before any request."""
    from stub_openai import Reply, make_endpoint

    from test_elicitation_commands import run_command

    make_endpoint(stub)
    keys = "height|5|narrow|0.050|below_low,height|3|wide|0.950|between"
    stub.responder = lambda req: Reply.answer("The share is about 0.6 ... I choose: B" if "I choose" in str(req.body)
                                              else "C. is maybe")
    run_command("elicit", "rq2", "--endpoint", "stub", "--items", keys, "--sync", "--prompt-style", "cot",
                "--max-tokens", "200")
    run_command("elicit", "rq2", "--endpoint", "stub", "--items", keys, "--sync")
    cot, standard = ElicitationRun.objects.order_by("pk")
    assert (cot.prompt_style, standard.prompt_style) == ("cot", "standard")
    assert set(cot.responses.values_list("choice", flat=True)) == {"B"}
    assert set(standard.responses.values_list("choice", flat=True)) == {"C"}
    sent = [r.body for r in stub.requests]
    assert sum('Give your final choice after "I choose:".' in b["messages"][0]["content"] for b in sent) == 2
    assert all(len(b["messages"]) == 1 and b["messages"][0]["role"] == "user" for b in sent)  # no system message
    with pytest.raises(Exception, match="prompt style 'standard' or 'cot', not 'vanilla'"):
        run_command("elicit", "rq2", "--endpoint", "stub", "--sync", "--prompt-style", "vanilla")
    assert ElicitationRun.objects.count() == 2
