"""Declared attention checks ([[checks]], [check_failures]; surveys/checks.py): every participant gets every
check wherever the file places it, answers are stored per participant and check (never as item answers), the
failure policy ends the study as the file says, and the file is held to Prolific's attention-check policy."""
from __future__ import annotations

import random
from urllib.parse import urlencode

import pytest
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from surveys import checks, flow
from surveys.definition.errors import DefinitionError
from surveys.definition.loader import load
from surveys.flow import Step
from surveys.models import CheckAnswer, Participant, Response, Study
from surveys.page_tokens import slot_token

ITEMS = "key,statement\n" + "".join(f"s{n},Statement number {n}.\n" for n in range(1, 11))

BASE = """
format = 1
[study]
slug = "checked"
title = "Checked"
kind = "generic"
[answer]
shape = "scale"
min = 1
max = 7
[answer.labels]
1 = "Strongly disagree"
7 = "Strongly agree"
[page]
sentence = "{{ statement }}"
question = "How much do you agree?"
[texts]
consent = "Take part?"
instructions = "Answer each."
pledge = "I will."
[design]
items = "items.csv"
[participants]
items_per_participant = 6
"""

CHECKS = """
[[checks]]
key = "imc"
type = "instructed"
sentence = "Please read this carefully: for this statement choose Strongly disagree."
question = "To show that you read this question, choose Strongly disagree."
pass = [1]
after_item = [1, 4]

[[checks]]
key = "swim"
type = "nonsensical"
question = "I swim across the Atlantic Ocean to get to work every day."
answer = {shape = "choice", options = [{key = "sd", label = "Strongly disagree"}, {key = "d", label = "Disagree"}, {key = "a", label = "Agree"}, {key = "sa", label = "Strongly agree"}]}
pass = ["sd", "d"]
after_item = 6
"""


def load_text(text: str, **options):
    return load(text, "study.toml", lambda name: ITEMS.encode(), **options)


def checked_study(policy: str = "") -> Study:
    study = load_text(BASE + CHECKS + policy).study
    study.status = Study.Status.LIVE
    study.save()
    return study


def url(study: Study, step: str) -> str:
    return reverse(f"surveys:{step}", kwargs={"slug": study.slug})


def start(client, study: Study, pid: str) -> Participant:
    client.get(f"/s/{study.slug}/?" + urlencode({"PROLIFIC_PID": pid}))
    client.post(url(study, "consent"), {"step": "consent", "choice": "agree"})
    client.post(url(study, "instructions"), {"step": "instructions"})
    client.post(url(study, "pledge"), {"step": "pledge", "pledge": "on"})
    return Participant.objects.get(study=study, prolific_pid=pid)


def walk(client, study: Study, participant: Participant, check_answers: dict[str, str]) -> list[str]:
    """Answer every page the participant reaches (items: 4; checks: ``check_answers``); the pages seen, in order."""
    seen = []
    for _ in range(40):
        participant.refresh_from_db()
        progress = flow.current_step(participant)
        if progress.step == Step.ITEM:
            page = client.get(url(study, "item")).content.decode()
            assert f"Question {progress.number} of 8" in page
            seen.append(progress.slot.item.key)
            client.post(url(study, "item"), {"step": "item", "position": progress.slot.position,
                                             "item": progress.slot.item_id, "value": "4",
                                             "token": slot_token(progress.slot)})
        elif progress.step == Step.CHECK:
            page = client.get(url(study, "check")).content.decode()
            assert f"Question {progress.number} of 8" in page
            key = progress.check.check_key
            seen.append(key)
            field = "value" if key == "imc" else "choice"
            client.post(url(study, "check"), {"step": "check", "check": key, field: check_answers[key]})
        else:
            return seen
    raise AssertionError("the walk did not end")


@pytest.mark.django_db
def test_every_participant_gets_every_check_where_the_file_places_it(client):
    study = checked_study()
    for n in range(6):
        participant = start(client, study, f"P{n}")
        seen = walk(client, study, participant, {"imc": "1", "swim": "sd"})
        assert sorted(k for k in seen if k in ("imc", "swim")) == ["imc", "swim"]
        assert 1 <= seen.index("imc") - (seen.index("swim") < seen.index("imc")) <= 4  # after 1..4 items
        assert seen[-1] == "swim"  # after the 6th (last) item
        participant.refresh_from_db()
        assert participant.status == "completed" and participant.completion_code == study.completion_code
        rows = {r.check_key: r for r in participant.check_answers.all()}
        assert rows["imc"].passed is True and rows["imc"].value == 1 and rows["swim"].choice == "sd"
        # checks are not answers to items: the items' answers are the six items only
        assert Response.objects.filter(participant=participant).count() == 6
        client.logout()
        client.cookies.clear()


@pytest.mark.django_db
def test_check_page_shows_its_own_wording_and_shape(client):
    study = checked_study()
    participant = start(client, study, "PW")
    CheckAnswer.objects.filter(participant=participant, check_key="imc").update(after_item=0)
    page = client.get(url(study, "check")).content.decode()
    assert "To show that you read this question, choose Strongly disagree." in page
    assert "Please read this carefully" in page and "Strongly agree" in page
    # an empty answer is asked again, nothing stored
    page = client.post(url(study, "check"), {"step": "check", "check": "imc"}).content.decode()
    assert CheckAnswer.objects.get(participant=participant, check_key="imc").answered_at is None
    assert 'role="alert"' in page


@pytest.mark.django_db
def test_one_failure_is_recorded_two_end_the_study_with_a_return_request(client):
    study = checked_study("[check_failures]\naction = \"return\"\nafter = 2\n")
    once = start(client, study, "ONCE")
    walk(client, study, once, {"imc": "7", "swim": "sd"})
    once.refresh_from_db()
    assert once.status == "completed"
    assert [r.passed for r in once.check_answers.order_by("check_key")] == [False, True]
    client.cookies.clear()
    twice = start(client, study, "TWICE")
    walk(client, study, twice, {"imc": "7", "swim": "sa"})
    twice.refresh_from_db()
    assert twice.status == "screened_out" and twice.completion_code == ""
    page = client.get(url(study, "done")).content.decode()
    assert 'id="return-request"' in page and "return your submission" in page
    assert "completion code" not in page.lower()
    # they never answered the items after the second failure; their rows stay
    assert Response.objects.filter(participant=twice).count() == 6


@pytest.mark.django_db
def test_screen_out_sends_the_screened_out_code(client):
    study = checked_study("[check_failures]\naction = \"screen_out\"\nafter = 2\n")
    p = start(client, study, "SCREEN")
    walk(client, study, p, {"imc": "2", "swim": "a"})
    p.refresh_from_db()
    assert p.status == "screened_out" and p.completion_code == study.screened_out_code
    page = client.get(url(study, "done")).content.decode()
    assert study.screened_out_code in page and 'id="prolific-link"' in page


@pytest.mark.django_db
def test_a_check_is_answered_once_and_stored_once(client):
    study = checked_study()
    p = start(client, study, "ONCE")
    row = CheckAnswer.objects.get(participant=p, check_key="imc")
    CheckAnswer.objects.filter(pk=row.pk).update(after_item=0)
    row.refresh_from_db()
    assert checks.submit(p, row, {"value": "1"}).saved
    again = checks.submit(p, row, {"value": "7"})
    assert not again.saved
    row.refresh_from_db()
    assert row.value == 1 and row.passed is True
    with pytest.raises(IntegrityError), transaction.atomic():  # the database keeps one row per check
        CheckAnswer.objects.create(participant=p, check_key="imc", after_item=2)
    with pytest.raises(IntegrityError), transaction.atomic():  # an answer has its verdict
        CheckAnswer.objects.filter(pk=row.pk).update(passed=None)


@pytest.mark.django_db
def test_checks_are_placed_within_their_range_for_every_draw():
    study = checked_study()
    rng = random.Random(3)
    places = set()
    for n in range(30):
        p = Participant.objects.create(study=study, prolific_pid=f"R{n}", consented_at=timezone.now(),
                                       instructions_read_at=timezone.now())
        flow.record_pledge(p, rng)
        rows = {r.check_key: r.after_item for r in p.check_answers.all()}
        assert set(rows) == {"imc", "swim"} and 1 <= rows["imc"] <= 4 and rows["swim"] == 6
        places.add(rows["imc"])
    assert places == {1, 2, 3, 4}


def problems(text: str) -> list[str]:
    with pytest.raises(DefinitionError) as caught:
        load_text(text, commit=False)
    return [f"{p.where}: {p.message}" for p in caught.value.problems]


@pytest.mark.django_db
@pytest.mark.parametrize("change, where, words", [
    ('type = "nonsensical"', "checks[0].answer", "no neutral midpoint"),
    ("pass = [9]", "checks[0].pass", "not on the scale"),
    ("pass = [1, 2, 3, 4, 5, 6, 7]", "checks[0].pass", "every answer passes"),
    ('type = "trick"', "checks[0].type", "instructed"),
    ('question = "How much do you agree with it?"', "checks[0].question", "in the sentence above the question"),
])
def test_the_file_is_held_to_the_check_policy(change, where, words):
    check = CHECKS.split("[[checks]]")[1]
    key = change.split(" = ")[0]
    lines = [line for line in check.splitlines() if not line.startswith(key + " ")]
    found = problems(BASE + "[[checks]]\n" + "\n".join(lines) + f"\n{change}\n")
    assert any(f.startswith(where) and words in f for f in found), found


@pytest.mark.django_db
def test_a_single_failure_may_not_end_a_long_study():
    found = problems(BASE + CHECKS + "[check_failures]\naction = \"return\"\nafter = 1\n")
    assert any(f.startswith("check_failures") and "single failed check" in f for f in found), found
    # a study under five minutes may
    load_text(BASE + CHECKS + "[check_failures]\naction = \"return\"\nafter = 1\nminutes = 3\n", commit=False)
    found = problems(BASE + CHECKS + "[check_failures]\naction = \"return\"\nafter = 3\n")
    assert any("can never happen" in f for f in found), found


@pytest.mark.django_db
def test_checks_leave_the_version_hash_of_a_study_without_them_alone():
    from surveys.definition import versions

    plain = load_text(BASE)
    again = load_text(BASE + "[[exclusions]]\nrule = \"too-fast\"\ntotal_seconds = 60\n")
    assert again.version.sha256 == plain.version.sha256 and not again.new_version
    with_checks = load_text(BASE + CHECKS)
    assert with_checks.version.sha256 != plain.version.sha256
    assert versions.current_version(with_checks.study).number == 2
