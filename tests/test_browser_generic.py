"""A researcher's own studies (the generic kind) taken in a real Chromium: a 1–7 scale with labelled ends and
middle as buttons, the same scale as a slider (an untouched slider is no answer), a choice whose options are
shown in the order drawn for the participant, and free text."""
from __future__ import annotations

import pytest

from generic_studies import CHOICE, FREE_TEXT, SCALE_1_7, generic_study
from surveys.models import Assignment, Participant, Response
from test_browser_choice import keep_screenshots
from test_browser import PID, PROLIFIC, browser, current_item, enter_study, offline_page, question_shown  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def page(browser, live_server, settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    hits: list[str] = []
    return offline_page(browser, live_server, hits, viewport={"width": 1280, "height": 900})


def finished() -> Participant:
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    return participant


def test_a_labelled_1_to_7_scale_with_buttons(page, live_server, tmp_path):
    generic_study("likert", SCALE_1_7, items=2)
    enter_study(page, live_server, "likert")
    question_shown(page, "Question 1 of 2")
    position, item = current_item(page)
    assert page.get_by_text(item.statement).is_visible()
    assert page.locator(".labelled-option label").count() == 7
    for value, label in (("1", "Not at all"), ("4", "Neither"), ("7", "Completely")):
        under = page.locator(f"#answer-{value}-label")
        assert under.inner_text() == label
        box, button = under.bounding_box(), page.locator(f"label[for=answer-{value}]").bounding_box()
        assert box["y"] >= button["y"] + button["height"] - 1  # the label is under its button
    page.click("button:has-text('Next')")  # nothing chosen: asked again
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    page.screenshot(path=str(tmp_path / "generic-scale.png"), full_page=True)
    page.click("label[for=answer-6]")
    page.click("button:has-text('Next')")
    question_shown(page, "Question 2 of 2")
    page.locator("#answer-2").focus()  # the keyboard: choose with the arrows, send with Enter
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    saved = {r.assignment.position: r.value for r in finished().responses.select_related("assignment")}
    assert saved == {1: 6, 2: 3}
    keep_screenshots(tmp_path)


def test_a_slider_counts_only_once_moved_or_confirmed(page, live_server, tmp_path):
    generic_study("slider", {**SCALE_1_7, "widget": "slider"}, items=2)
    enter_study(page, live_server, "slider")
    question_shown(page, "Question 1 of 2")
    current_item(page)
    slider = page.locator("input[type=range]")
    assert slider.input_value() == "4"  # starts in the middle…
    page.click("button:has-text('Next')")  # …which is no answer until touched
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    assert Response.objects.count() == 0
    assert page.get_by_text("Not at all").is_visible() and page.get_by_text("Completely").is_visible()
    slider.focus()
    page.keyboard.press("ArrowRight")  # keyboard accessible: moved to 5
    assert page.locator("[data-slider-output]").inner_text() == "5"
    assert not page.get_by_text("Please choose an answer before continuing.").is_visible()
    page.screenshot(path=str(tmp_path / "generic-slider.png"), full_page=True)
    page.click("button:has-text('Next')")
    question_shown(page, "Question 2 of 2")
    page.click("button:has-text('Confirm this value')")  # the middle, confirmed explicitly
    assert page.locator("[data-slider-output]").inner_text() == "4"
    page.click("button:has-text('Next')")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    saved = {r.assignment.position: r.value for r in finished().responses.select_related("assignment")}
    assert saved == {1: 5, 2: 4}
    keep_screenshots(tmp_path)


def test_a_randomised_choice_keeps_its_order_for_the_participant(page, live_server, tmp_path):
    generic_study("opinion", CHOICE, items=2)
    enter_study(page, live_server, "opinion")
    question_shown(page, "Question 1 of 2")
    position, item = current_item(page)
    slot = Assignment.objects.get(participant__prolific_pid=PID, position=position)
    labels = {o["key"]: o["label"] for o in CHOICE["options"]}
    shown = page.locator(".choice-option label").all_inner_texts()
    assert shown == [labels[key] for key in slot.option_order]
    page.reload()
    question_shown(page, "Question 1 of 2")
    assert page.locator(".choice-option label").all_inner_texts() == shown  # the same order on reload
    page.screenshot(path=str(tmp_path / "generic-choice.png"), full_page=True)
    page.get_by_text("I am not sure").click()
    page.click("button:has-text('Next')")
    question_shown(page, "Question 2 of 2")
    page.get_by_text("Does not apply").click()
    page.click("button:has-text('Next')")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    saved = {r.assignment.position: r.choice for r in finished().responses.select_related("assignment")}
    assert saved == {1: "unsure", 2: "na"}
    keep_screenshots(tmp_path)


def test_a_free_text_answer_is_kept_as_written(page, live_server, tmp_path):
    generic_study("why", FREE_TEXT, items=1)
    enter_study(page, live_server, "why")
    question_shown(page, "Question 1 of 1")
    current_item(page)
    page.click("button:has-text('Next')")  # empty: asked again
    assert page.get_by_text("Please write an answer before continuing.").is_visible()
    assert Response.objects.count() == 0
    box = page.get_by_label("Why?")
    box.fill("x" * 250)
    assert len(box.input_value()) == 200  # the page holds at most max_length characters
    written = "  Because the word ‘likely’\nfeels stronger.  "
    box.fill(written)
    page.screenshot(path=str(tmp_path / "generic-free-text.png"), full_page=True)
    page.click("button:has-text('Next')")
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    (response,) = finished().responses.all()
    assert response.text == written.replace("\n", "\r\n")  # as the browser sent it (a form's line breaks are CR LF)
    keep_screenshots(tmp_path)
