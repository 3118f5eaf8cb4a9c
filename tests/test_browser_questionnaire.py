"""A participant takes a study with a questionnaire before and after the items in a real Chromium: the "About
you" page after consent (refused answers asked again with what was entered kept), the items, the page after the
last item, then the completion redirect to Prolific; the answers are in the export."""
from __future__ import annotations

import io
import re

import pytest

from analysis.exports import COLUMNS, export_study, read_csv, study_layout
from surveys.models import Participant, Study
from test_browser import PID, PROLIFIC, browser, current_item, expected_value, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots
from test_questionnaire import FIELDS, with_questionnaire

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def study(imported_nv, settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    imported_nv.status = Study.Status.LIVE
    imported_nv.items_per_expression = 1
    imported_nv.controls_per_participant = 0
    imported_nv.save()
    return with_questionnaire(imported_nv)


def test_a_participant_answers_the_questionnaire_before_and_after_the_items(browser, live_server, study, tmp_path):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 390, "height": 844})
    page.goto(f"{live_server.url}/s/{study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
    page.get_by_role("button", name="I agree, continue").click()

    page.get_by_role("heading", name="About you").wait_for()
    assert page.get_by_text("How difficult").count() == 0  # asked after the items
    page.get_by_label("How old are you (in years)?").fill("17")
    page.get_by_label(re.compile("Your first language")).fill("Mandarin")
    page.get_by_role("button", name="Continue").click()  # too young, no gender: asked again
    page.get_by_text("Please enter a number from 18 to 99.").wait_for()
    assert page.get_by_text("Please answer this question.").is_visible()
    assert page.get_by_label("How old are you (in years)?").input_value() == "17"
    assert page.get_by_label(re.compile("Your first language")).input_value() == "Mandarin"
    assert Participant.objects.get(prolific_pid=PID).questionnaire == {}
    page.screenshot(path=str(tmp_path / "questionnaire-refused.png"), full_page=True)
    page.get_by_label("How old are you (in years)?").fill("34")
    page.get_by_text("Another, or I prefer not to say").click()  # the label is the radio button's target
    page.get_by_role("button", name="Continue").click()

    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    participant = Participant.objects.get(prolific_pid=PID)
    total = participant.assignments.count()
    for number in range(1, total + 1):
        page.get_by_text(f"Question {number} of {total}").wait_for()
        _, item = current_item(page)
        page.click(f"label[for=answer-{expected_value(item)}]")
        page.click("button:has-text('Next')")

    page.get_by_role("heading", name="About you").wait_for()
    participant.refresh_from_db()
    assert participant.status == Participant.Status.STARTED and participant.responses.count() == total
    page.get_by_label("How difficult were the questions (1 to 7)?").fill("2.5")
    page.screenshot(path=str(tmp_path / "questionnaire-after.png"), full_page=True)
    page.get_by_role("button", name="Finish").click()
    page.wait_for_url(f"{PROLIFIC}?cc=*")

    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED and hits
    assert participant.questionnaire == {"age": 34, "gender": "x", "first_language": "Mandarin", "difficulty": 2.5}
    out = io.StringIO()
    export_study(study, "csv", out)
    out.seek(0)
    rows = read_csv(out, study_layout(study))
    assert len(rows) == total and set(rows["age"]) == {34} and set(rows["gender"]) == {"x"}
    names = [f["name"] for f in FIELDS]  # right after the fixed columns
    assert set(rows["difficulty"]) == {2.5} and names == list(rows.columns[len(COLUMNS):len(COLUMNS) + len(names)])
    keep_screenshots(tmp_path)
