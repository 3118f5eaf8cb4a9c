"""Declared attention checks taken in a real Chromium (surveys/checks.py): a check's page among the questions, and
a participant who fails two checks ends on a page asking them to return the submission, at phone width too."""
from __future__ import annotations

import pytest

from surveys.definition.loader import load
from surveys.models import CheckAnswer, Participant, Study
from test_browser import PID, PROLIFIC, browser, enter_study, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots
from test_checks import BASE, CHECKS, ITEMS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(settings) -> Study:
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    text = BASE.replace("items_per_participant = 6", "items_per_participant = 3") + CHECKS.replace(
        "after_item = [1, 4]", "after_item = 1").replace("after_item = 6", "after_item = 2") + (
        '[check_failures]\naction = "return"\nafter = 2\n')
    loaded = load(text, "study.toml", lambda name: ITEMS.encode()).study
    loaded.status = Study.Status.LIVE
    loaded.save()
    return loaded


@pytest.mark.parametrize("width", [1280, 375])
def test_a_participant_who_fails_both_checks_is_asked_to_return(browser, live_server, study, width, tmp_path):
    page = offline_page(browser, live_server, [], viewport={"width": width, "height": 900})
    enter_study(page, live_server, study.slug)
    page.get_by_text("Question 1 of 5").wait_for()
    page.click("label[for=answer-4]")
    page.click("button:has-text('Next')")
    page.get_by_text("Question 2 of 5").wait_for()  # the instructed-response check, after the first item
    assert page.get_by_text("To show that you read this question, choose Strongly disagree.").is_visible()
    page.click("button:has-text('Next')")  # no answer: asked again, nothing stored
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    page.screenshot(path=str(tmp_path / f"check-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.click("label[for=answer-7]")  # the wrong answer: failure one, recorded
    page.click("button:has-text('Next')")
    page.get_by_text("Question 3 of 5").wait_for()
    page.click("label[for=answer-2]")
    page.click("button:has-text('Next')")
    page.get_by_text("Question 4 of 5").wait_for()  # the nonsensical check, after the second item
    assert page.get_by_text("I swim across the Atlantic Ocean to get to work every day.").is_visible()
    page.get_by_text("Strongly agree").click()  # failure two: the study ends
    page.click("button:has-text('Next')")
    page.locator("#return-request").wait_for()
    assert "return your submission" in page.locator("#return-request").inner_text()
    page.screenshot(path=str(tmp_path / f"checks-failed-{width}.png"), full_page=True)
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == "screened_out" and participant.completion_code == ""
    assert dict(CheckAnswer.objects.filter(participant=participant).values_list("check_key", "passed")) == \
        {"imc": False, "swim": False}
    page.reload()  # coming back shows the same page, never the questions
    page.locator("#return-request").wait_for()
    keep_screenshots(tmp_path)
