"""Several questions per item taken in a real Chromium (issue 31 point 5): every question on the item page with
its own widget and message, the page sent only when every required one is answered, each answer its own row."""
from __future__ import annotations

import pytest

from surveys.models import Participant, Response
from test_browser import PID, PROLIFIC, browser, current_item, enter_study, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots
from test_questions_flow import questions_study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
EMPTY = "Please choose an answer before continuing."


@pytest.fixture
def page(browser, live_server, settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    return offline_page(browser, live_server, [], viewport={"width": 1280, "height": 900})


def test_two_questions_per_item_and_an_optional_third(page, live_server, tmp_path):
    questions_study("threeq", items=2)
    enter_study(page, live_server, "threeq")
    page.get_by_text("Question 1 of 2").wait_for()
    _, item = current_item(page)
    outcome = item.extra["outcome"]
    assert page.get_by_text(f"How likely is it that {outcome}?").is_visible()
    assert page.get_by_text(f"In how many cases out of 100 would {outcome}?").is_visible()
    assert page.get_by_text("Topic: topic").count() == 1  # the item's hints once
    assert page.locator("[data-question=rating] .labelled-option label").count() == 7
    assert page.locator("#q-rating-1-label").inner_text() == "Certainly not"

    page.click("button:has-text('Next')")  # nothing answered: each required question says so, the optional not
    assert page.locator("#q-rating-error").is_visible() and page.locator("#q-estimate-error").is_visible()
    assert page.locator("#q-rating-error").inner_text() == EMPTY
    assert not page.locator("#q-range-error").is_visible()
    page.click("label[for=q-rating-6]")
    assert not page.locator("#q-rating-error").is_visible() and page.locator("#q-estimate-error").is_visible()
    page.click("button:has-text('Next')")  # the slider is still untouched: still on this page
    assert Response.objects.count() == 0
    slider = page.locator("[data-question=estimate] input[type=range]")
    assert slider.input_value() == "50"
    slider.focus()
    page.keyboard.press("ArrowRight")  # 51
    assert not page.locator("#q-estimate-error").is_visible()
    page.screenshot(path=str(tmp_path / "questions-page.png"), full_page=True)
    page.click("button:has-text('Next')")

    page.get_by_text("Question 2 of 2").wait_for()
    current_item(page)
    page.click("label[for=q-rating-2]")
    page.click("[data-question=estimate] button:has-text('Confirm this value')")  # the middle, confirmed
    page.fill("#q-range-lower", "40")
    page.fill("#q-range-upper", "20")  # the optional question answered badly: asked again before sending
    page.click("button:has-text('Next')")
    assert page.locator("#q-range-error").is_visible()
    assert page.locator("#q-range-error").inner_text() == "The lower bound must not be greater than the upper bound."
    page.fill("#q-range-upper", "60")
    page.click("button:has-text('Next')")
    page.wait_for_url(f"{PROLIFIC}?cc=*")

    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    saved = {(r.assignment.position, r.question): r.answer.text()
             for r in participant.responses.select_related("assignment")}
    assert saved == {(1, "rating"): "6", (1, "estimate"): "51", (2, "rating"): "2", (2, "estimate"): "50",
                     (2, "range"): "[40, 60]"}
    keep_screenshots(tmp_path)


def test_an_answer_chosen_before_the_script_has_run_is_kept(page, live_server):
    """On a slow connection the page shows before static/surveys/flow.js runs: a rating clicked and a slider
    moved in that moment are the participant's own and are sent (a reload or Back still clears them:
    test_browser_question_history)."""
    questions_study("slowjs", items=1)
    enter_study(page, live_server, "slowjs")
    page.get_by_text("Question 1 of 1").wait_for()
    held = []
    page.route("**/surveys/flow*.js", lambda route: held.append(route))  # held back until released below
    page.goto(page.url, wait_until="commit")  # the question page again, freshly loaded
    page.get_by_text("Question 1 of 1").wait_for()
    page.click("label[for=q-rating-5]")
    page.locator("[data-question=estimate] input[type=range]").focus()
    page.keyboard.press("ArrowLeft")  # 49
    assert len(held) == 1 and page.locator("form[data-answer-form][data-ready]").count() == 0
    held[0].continue_()
    page.unroute("**/surveys/flow*.js")  # the next page's script comes at once
    page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")  # flow.js has run
    assert page.locator("#q-rating-5").is_checked()
    assert page.locator("[data-question=estimate] [data-slider-value]").input_value() == "49"
    page.click("button:has-text('Next')")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    saved = {r.question: r.answer.text() for r in Participant.objects.get(prolific_pid=PID).responses.all()}
    assert saved == {"rating": "5", "estimate": "49"}
