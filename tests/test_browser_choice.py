"""Tang et al. studies taken by a participant in a real Chromium: WEP-choice items (choice buttons) and a
Chinese WEP-probability study whose pages are Chinese whatever the browser asks for."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from django.core.management import call_command

from surveys.models import Participant, Response, Study
from test_browser import CHROMIUM, PID, PROLIFIC, browser, current_item, enter_study, offline_page  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def keep_screenshots(tmp_path: Path) -> None:
    keep = os.environ.get("HEDGELAB_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, Path(keep) / png.name)


@pytest.fixture
def rq2(settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    call_command("create_study", "rq2", "--instrument", "wep_choice", "--items-per-participant", "4", "--live")
    call_command("generate_items", "rq2", "--design", "tang-rq2", "--seed", "1")
    return Study.objects.get(slug="rq2")


def test_a_participant_answers_wep_choice_items(browser, live_server, rq2, tmp_path):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 1280, "height": 900})
    enter_study(page, live_server, "rq2")

    page.get_by_text("Question 1 of 4").wait_for()
    position, item = current_item(page)
    assert "Complete the following sentence" in page.content()
    assert page.get_by_text(item.statement).is_visible()
    options = page.locator(".choice-option label")
    assert options.count() == len(item.extra["options"])
    page.click("button:has-text('Next')")  # nothing chosen: asked again, nothing saved
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    assert Response.objects.count() == 0
    page.screenshot(path=str(tmp_path / "wep-choice-item.png"), full_page=True)

    chosen = {}
    for number in range(1, 5):
        page.get_by_text(f"Question {number} of 4").wait_for()
        position, item = current_item(page)
        key, text = item.extra["options"][number % len(item.extra["options"])]
        page.locator(f"label[for=answer-{key}]", has_text=text).click()  # the phrase is the button
        chosen[position] = key
        page.click("button:has-text('Next')")

    page.wait_for_url(f"{PROLIFIC}?cc=*")
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    saved = {r.assignment.position: r.choice for r in participant.responses.select_related("assignment")}
    assert saved == chosen and all(r.value is None for r in participant.responses.all())
    keep_screenshots(tmp_path)


def test_a_chinese_study_shows_chinese_pages(browser, live_server, settings, tmp_path):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    call_command("create_study", "zh", "--instrument", "wep_probability", "--language", "zh", "--live")
    call_command("generate_items", "zh", "--design", "tang-rq1", "--contexts", "CNC", "--language", "zh")
    study = Study.objects.get(slug="zh")
    study.items_per_expression = 1
    study.controls_per_participant = 0
    study.save()
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, locale="en-US", extra_http_headers={"Accept-Language": "en"})
    page.goto(f"{live_server.url}/s/zh/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")
    assert "I agree" not in page.content()
    page.locator("button[value=agree]").click()
    page.locator("form button[type=submit]").first.click()  # instructions read
    page.locator("input[type=checkbox]").check()
    page.locator("form button[type=submit]").first.click()
    page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")
    html = page.content()
    assert "概率" in html and "Question 1 of" not in html and "Next" not in html
    page.screenshot(path=str(tmp_path / "zh-item.png"), full_page=True)
    page.locator("form[data-answer-form] button[type=submit]").click()  # no answer: asked again, in Chinese
    error = page.locator("[data-answer-error]")
    assert error.is_visible() and not re.search(r"[A-Za-z]{4,}", error.inner_text())
    assert Response.objects.count() == 0
    keep_screenshots(tmp_path)
