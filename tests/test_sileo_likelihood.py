"""The likelihood mode (elicitation/likelihood.py) against the loopback stub: raw, length-normalised and
calibrated scores computed by hand, the deciding score, provenance, and refusals before a run starts."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command

from elicitation.likelihood import DECIDING_SCORE
from elicitation.models import ElicitationRun, ModelResponse, StoredPrompt
from elicitation.runs import RunStateError, create_run, resume_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)
from surveys.models import Item, Study

pytestmark = pytest.mark.django_db

VALID = "It is highly likely that an animal moves."
DISTRACTOR = "There is little chance that an animal moves."


@pytest.fixture
def vstudy(db):
    study = Study.objects.create(slug="v", title="V", instrument="verbalisation_choice", status="live")
    Item.objects.create(study=study, key="dog", statement="A dog runs.",
                        extra={"dataset": "wep-unli", "hypothesis": "an animal moves", "p": 0.9,
                               "valid_wep": "highly likely", "distractor_wep": "little chance",
                               "options": [["A", DISTRACTOR], ["B", VALID]], "valid_key": "B"})
    return study


def scorer(**special: float):
    """The stub's token log-probabilities: −1 for every token, except the words given."""
    return lambda token: special.get(token.strip(), -1.0)


def run_likelihood(study, endpoint):
    run = create_run(study, endpoint, mode="likelihood")
    start_run(run, queue=False)
    return run_sync(run)


def test_scores_by_hand_and_the_deciding_score(stub, vstudy):
    # the stub splits at spaces and gives the first token no log-probability:
    # valid whole "A dog runs. It is highly likely that an animal moves.": 10 scored tokens, 8 × −1 + 2 × −0.25
    # = −8.5 (per token −0.85); alone "It is highly likely …": 7 scored, −5.5; calibrated −8.5 + 5.5 = −3.0.
    # distractor whole: 10 scored, 9 × −1 + "There" −3 = −12 (−1.2); alone: 7 × −1 = −7; calibrated −5.0.
    stub.default = Reply.scoring(scorer(highly=-0.25, likely=-0.25, There=-3.0))
    endpoint = make_endpoint(stub, api_style="completions")
    run = run_likelihood(vstudy, endpoint)
    assert run.status == ElicitationRun.Status.COMPLETED
    row = ModelResponse.objects.get(run=run)
    assert row.status == ModelResponse.Status.OK and row.choice == "B"
    scores = {c["key"]: c for c in row.detail["candidates"]}
    assert (scores["B"]["raw"], scores["B"]["normalised"], scores["B"]["calibrated"]) == \
        pytest.approx((-8.5, -0.85, -3.0))
    assert (scores["A"]["raw"], scores["A"]["normalised"], scores["A"]["calibrated"]) == \
        pytest.approx((-12.0, -1.2, -5.0))
    assert (scores["B"]["tokens"], scores["B"]["alone_tokens"]) == (10, 7)
    assert row.detail["decides"] == DECIDING_SCORE == "normalised"
    assert row.detail["choice_by"] == {"raw": "B", "normalised": "B", "calibrated": "B"}
    # provenance: the four scored texts are the stored prompt; every request echoes with logprobs
    assert StoredPrompt.objects.get(pk=row.prompt_id).content == \
        f"A dog runs. {DISTRACTOR}\n{DISTRACTOR}\nA dog runs. {VALID}\n{VALID}"
    assert row.params == {"temperature": 0.0, "max_tokens": 1, "echo": True, "logprobs": 1}
    scored = [r for r in stub.requests if r.body.get("prompt") != "The cat sat on the mat."]
    assert [r.body["prompt"] for r in scored] == [f"A dog runs. {DISTRACTOR}", DISTRACTOR, f"A dog runs. {VALID}",
                                                  VALID]
    assert all(r.body["echo"] is True and r.body["logprobs"] == 1 and r.body["max_tokens"] == 1 for r in scored)
    assert row.requests == 4 and row.prompt_tokens == 11 + 8 + 11 + 8 and row.completion_tokens == 4


def test_the_scores_can_disagree(stub, vstudy):
    # "It" at −4: valid whole −11.5 (> −12: raw and normalised still choose B), calibrated −11.5 + 5.5 = −6.0
    # (< −5.0: calibration chooses A). The answer follows the normalised score.
    stub.default = Reply.scoring(scorer(highly=-0.25, likely=-0.25, There=-3.0, It=-4.0))
    run = run_likelihood(vstudy, make_endpoint(stub, api_style="completions"))
    row = ModelResponse.objects.get(run=run)
    assert row.detail["choice_by"] == {"raw": "B", "normalised": "B", "calibrated": "A"} and row.choice == "B"


def test_a_tie_is_kept_as_unparseable(stub, vstudy):
    stub.default = Reply.scoring(scorer())  # every token −1: both options score the same
    run = run_likelihood(vstudy, make_endpoint(stub, api_style="completions"))
    row = ModelResponse.objects.get(run=run)
    assert row.status == ModelResponse.Status.UNPARSEABLE and row.choice == ""
    assert "same normalised score" in row.parse_error


def test_endpoint_without_prompt_logprobs_is_refused_before_the_run_starts(stub, vstudy):
    stub.default = Reply.answer(" yes")  # ignores echo: no log-probabilities for the prompt
    endpoint = make_endpoint(stub, api_style="completions")
    run = create_run(vstudy, endpoint, mode="likelihood")
    with pytest.raises(RunStateError, match="cannot be used for the likelihood mode: the endpoint returned no "
                                            "log-probabilities for the prompt's tokens"):
        start_run(run, queue=False)
    run.refresh_from_db()
    assert run.status == ElicitationRun.Status.DRAFT and not ModelResponse.objects.filter(run=run).exists()
    assert len(stub.requests) == 1  # the probe only
    with pytest.raises(RunStateError, match="likelihood mode"):
        resume_run(run, queue=False)
    # the command refuses before creating a run
    before = ElicitationRun.objects.count()
    with pytest.raises(CommandError, match="cannot be used for the likelihood mode"):
        call_command("elicit", "v", "--endpoint", endpoint.name, "--mode", "likelihood", "--sync")
    assert ElicitationRun.objects.count() == before


def test_chat_endpoints_and_other_kinds_are_refused(stub, vstudy):
    with pytest.raises(ValidationError, match="chat endpoint"):
        create_run(vstudy, make_endpoint(stub, api_style="chat"), mode="likelihood")
    other = Study.objects.create(slug="w", title="W", instrument="wep_choice")
    with pytest.raises(ValidationError, match="no candidate texts"):
        create_run(other, make_endpoint(stub, name="c", api_style="completions"), mode="likelihood")
    with pytest.raises(CommandError, match="is a chat endpoint"):
        call_command("elicit", "v", "--endpoint", "stub", "--mode", "likelihood")
    assert stub.requests == []


def test_the_command_scores_a_study(stub, vstudy, capsys):
    stub.default = Reply.scoring(scorer(highly=-0.25, likely=-0.25, There=-3.0))
    make_endpoint(stub, api_style="completions")
    call_command("elicit", "v", "--endpoint", "stub", "--mode", "likelihood", "--sync", "--no-check")
    run = ElicitationRun.objects.get(study=vstudy)
    assert run.mode == "likelihood" and run.status == ElicitationRun.Status.COMPLETED
    assert ModelResponse.objects.get(run=run).choice == "B"
    # the command probed the endpoint before creating the run; start_run trusted that probe
    assert [r.body["prompt"] for r in stub.requests].count("The cat sat on the mat.") == 1
    assert len(stub.requests) == 5
