"""The example experiment with two questions per item (studies/examples/advice-estimates) taken in a real Chromium
by one participant in every cell of its 2 × 2 design: both questions on every item page, the checks among them,
and a participant who fails both checks is asked to return the submission."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from surveys.definition.loader import files_beside, load
from surveys.models import CheckAnswer, Participant, Response, Study
from test_browser import PROLIFIC, browser, offline_page, question_shown  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
EXAMPLE = Path(__file__).resolve().parent.parent / "studies" / "examples" / "advice-estimates" / "study.toml"


@pytest.fixture
def study(settings) -> Study:
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    loaded = load(EXAMPLE.read_text(encoding="utf-8"), str(EXAMPLE), files_beside(EXAMPLE)).study
    loaded.status = Study.Status.LIVE
    loaded.save()
    return loaded


def take(page, live_server, slug: str, pid: str, fail_checks: bool) -> None:
    """Enter as ``pid`` and answer every page: both questions of each item (a rating and the slider moved),
    each check passed (or failed, with ``fail_checks``)."""
    page.goto(f"{live_server.url}/s/{slug}/?PROLIFIC_PID={pid}&STUDY_ID=st1&SESSION_ID=se1")
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    page.get_by_text(re.compile(r"Question 1 of \d+")).wait_for()
    total = int(re.search(r"Question 1 of (\d+)", page.inner_text("body")).group(1))  # the items and 2 checks
    failed = 0
    for number in range(1, total + 1):
        question_shown(page, re.compile(rf"Question {number} of {total}"))
        if page.locator("[data-question]").count():
            assert page.locator("[data-question]").count() == 2
            assert page.get_by_text("In how many cases out of 100 would this come true?").is_visible()
            page.click(f"label[for=q-sure-{2 + number % 5}]")
            page.locator("[data-question=chance] input[type=range]").focus()
            for _ in range(number):
                page.keyboard.press("ArrowRight")
        elif page.get_by_text("I swim across the Atlantic Ocean").count():
            page.get_by_text("Strongly agree" if fail_checks else "Strongly disagree").click()
            failed += fail_checks
        else:
            assert page.get_by_text("To show that you are reading carefully").is_visible()
            page.click("label[for=answer-7]" if fail_checks else "label[for=answer-1]")
            failed += fail_checks
        page.click("button:has-text('Next')")
        if failed == 2:
            break
    if fail_checks:  # the second failed check ends the study with a request to return the submission
        page.locator("#return-request").wait_for()
    else:
        page.wait_for_url(f"{PROLIFIC}?cc=*")


def test_one_participant_per_cell_answers_both_questions(browser, live_server, study):
    for n, fails in enumerate((False, False, False, True)):
        page = offline_page(browser, live_server, [], viewport={"width": 1280, "height": 900})
        take(page, live_server, study.slug, f"CELL{n}", fails)
        page.context.close()
    people = {p.prolific_pid: p for p in Participant.objects.filter(study=study)}
    assert {p.condition for p in people.values()} == {"doctor-gain", "doctor-loss", "friend-gain", "friend-loss"}
    for pid in ("CELL0", "CELL1", "CELL2"):
        person = people[pid]
        assert person.status == Participant.Status.COMPLETED
        rows = Response.objects.filter(participant=person)
        assert sorted(rows.values_list("question", flat=True)) == ["chance"] * 10 + ["sure"] * 10
        chance = sorted(rows.filter(question="chance").values_list("value", flat=True))
        assert all(50 < v <= 62 for v in chance)
        assert set(CheckAnswer.objects.filter(participant=person).values_list("passed", flat=True)) == {True}
    failed = people["CELL3"]
    assert failed.status == "screened_out" and failed.completion_code == ""
    assert dict(CheckAnswer.objects.filter(participant=failed).values_list("check_key", "passed")) == \
        {"imc": False, "swim": False}
    assert Response.objects.filter(participant=failed).values("assignment").distinct().count() == 8  # swim: after 8
