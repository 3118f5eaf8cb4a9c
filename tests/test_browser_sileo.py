"""A participant takes a Sileo & Moens verbalisation study in a real Chromium: generated 1-hop and 2-hop
WEP-Reasoning items, the premise and the two verbalisations as large buttons, the choice saved as the option's
key. (Debian's chromium; see test_browser.py.)"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import call_command

from surveys.models import Participant, Study
from test_browser import PID, PROLIFIC, browser, current_item, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def vstudy(settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    call_command("create_study", "wep", "--instrument", "verbalisation_choice", "--items-per-participant", "4",
                 "--live")
    call_command("generate_items", "wep", "--design", "wep-reasoning", "--hops", "1", "--n", "2", "--seed", "1")
    call_command("generate_items", "wep", "--design", "wep-reasoning", "--hops", "2", "--n", "2", "--seed", "1")
    return Study.objects.get(slug="wep")


def test_a_participant_picks_verbalisations(browser, live_server, vstudy, tmp_path: Path):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 390, "height": 844})  # a phone
    page.goto(f"{live_server.url}/s/wep/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
    page.get_by_role("button", name="I agree, continue").click()
    assert page.get_by_text("differ only in how likely they say something is").is_visible()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()

    page.get_by_text("Question 1 of 4").wait_for()
    position, item = current_item(page)
    assert page.get_by_text(item.statement).is_visible()
    assert page.get_by_text("Given this text, which statement is right?").is_visible()
    buttons = page.locator(".pick-option label")
    assert buttons.count() == 2
    assert [buttons.nth(i).inner_text().strip() for i in range(2)] == [t for _, t in item.extra["options"]]
    box = buttons.nth(0).bounding_box()
    assert box["height"] >= 40 and box["width"] >= 300  # large buttons on a phone
    page.click("button:has-text('Next')")  # nothing chosen: asked again, nothing saved
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    page.screenshot(path=str(tmp_path / "verbalisation-item.png"), full_page=True)

    chosen: dict[int, str] = {}
    datasets = set()
    for number in range(1, 5):
        page.get_by_text(f"Question {number} of 4").wait_for()
        position, item = current_item(page)
        datasets.add(item.extra["dataset"])
        key = item.extra["valid_key"] if number % 2 else ("B" if item.extra["valid_key"] == "A" else "A")
        page.locator(f"label[for=answer-{key}]").click()  # the sentence is the button
        chosen[position] = key
        page.click("button:has-text('Next')")

    page.wait_for_url(f"{PROLIFIC}?cc=*")
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    saved = {r.assignment.position: r.choice for r in participant.responses.select_related("assignment")}
    assert saved == chosen and datasets == {"wep-reasoning-1hop", "wep-reasoning-2hops"}
    assert hits and all(h.startswith(PROLIFIC) for h in hits)  # only the redirect back to Prolific
    keep_screenshots(tmp_path)
