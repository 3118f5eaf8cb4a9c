"""A participant completes a study in a real Chromium (Debian's /usr/bin/chromium) through Playwright.

No request leaves the machine: every request that is not for the live server is aborted, except the
final redirect to app.prolific.com, which is answered locally by ``page.route``.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from django.db import connections

from families.belem.instrument import EXPRESSIONS
from surveys.models import Item, Participant, Response, Study

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
PROLIFIC = "https://app.prolific.com/submissions/complete"
PID = "5f1a2b3c4d5e6f7a8b9c0d1e"


@pytest.fixture
def browser(monkeypatch):
    if not Path(CHROMIUM).exists():
        pytest.skip(f"Debian's chromium is not installed at {CHROMIUM} (make browser)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread; the ORM calls below are still synchronous.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()
        # Queries made while Playwright's loop runs get their own connection (Django's connections are
        # context-local): close it, or PostgreSQL refuses to drop the test database at the end.
        connections.close_all()


@pytest.fixture
def live_study(imported_nv, settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    imported_nv.status = Study.Status.LIVE
    imported_nv.consent_text = "You are invited to take part in a study about how people read words of uncertainty."
    imported_nv.instructions = "Read each sentence carefully and choose the number that fits best."
    imported_nv.pledge_text = "I will complete this study to the best of my abilities."
    imported_nv.save()
    return imported_nv


ADMIN_PASSWORD = "a-long-test-password-7"


def offline_page(browser, live_server, prolific_hits: list[str], **context_options):
    """A page that can reach only the live server; app.prolific.com is answered locally."""
    context = browser.new_context(**context_options)

    def handle(route):
        url = route.request.url
        if url.startswith(live_server.url):
            route.continue_()
        elif url.startswith("https://app.prolific.com/"):
            prolific_hits.append(url)
            route.fulfill(status=200, content_type="text/html", body="<html><body>Prolific (stub)</body></html>")
        else:
            route.abort()

    context.route("**/*", handle)
    return context.new_page()


def admin_logged_in(browser, live_server, django_user_model, hits: list[str], width: int, height: int):
    """A page of a new superuser who has just signed in to the admin at ``width`` × ``height`` px."""
    django_user_model.objects.create_superuser("admin", "admin@example.org", ADMIN_PASSWORD)
    page = offline_page(browser, live_server, hits, viewport={"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", ADMIN_PASSWORD)
    page.click("input[type=submit]")
    page.get_by_text("Site administration").wait_for()
    return page


def enter_study(page, live_server, slug: str, query: str = "&STUDY_ID=st1&SESSION_ID=se1") -> None:
    """Open the study link, agree, read the instructions, pledge and start: the first question is next."""
    page.goto(f"{live_server.url}/s/{slug}/?PROLIFIC_PID={PID}{query}")
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()


def expected_value(item: Item) -> int:
    """An attentive participant: higher answers for expressions earlier in the canonical order."""
    return 50 if item.is_control else 100 - 5 * EXPRESSIONS.index(item.expression)


def question_shown(page, text: str | re.Pattern) -> None:
    """Wait until the page says ``text`` ("Question 3 of 12") and static/surveys/flow.js runs on it."""
    page.get_by_text(text).wait_for()
    page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")


def current_item(page) -> tuple[int, Item]:
    page.wait_for_selector("form[data-answer-form][data-ready]", state="attached")  # flow.js is running
    position = int(page.locator("input[name=position]").get_attribute("value"))
    item = Item.objects.get(pk=int(page.locator("input[name=item]").get_attribute("value")))
    return position, item


def answer_with_mouse(page, value: int) -> None:
    page.click(f"label[for=answer-{value}]")
    page.click("button:has-text('Next')")


def answer_with_keyboard(page, value: int) -> None:
    """Tab into the answer buttons, move with the arrow keys, submit with Enter."""
    page.locator("input[name=position]").evaluate("() => document.activeElement.blur()")
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement && document.activeElement.name") == "value":
            break
    else:
        raise AssertionError("Tab never reached the answer buttons")
    assert page.evaluate("document.activeElement.value") == "0"
    if value == 0:
        page.keyboard.press("Space")
    for _ in range(value // 5):
        page.keyboard.press("ArrowRight")
    assert page.locator("input[name=value]:checked").get_attribute("value") == str(value)
    page.keyboard.press("Enter")


def test_a_participant_completes_the_study_in_chromium(browser, live_server, live_study):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits)
    page.goto(f"{live_server.url}/s/{live_study.slug}/?PROLIFIC_PID={PID}&STUDY_ID=st1&SESSION_ID=se1")

    page.get_by_role("heading", name="Consent to take part").wait_for()
    assert "words of uncertainty" in page.content()
    page.get_by_role("button", name="I agree, continue").click()

    page.get_by_role("heading", name="Instructions").wait_for()
    demos = live_study.demonstrations()
    for n, demo in enumerate(demos, start=1):
        radio = page.locator(f"#demo{n}-{int(demo.demo_answer)}")
        assert radio.is_checked() and radio.is_disabled()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()

    page.get_by_role("heading", name="Integrity pledge").wait_for()
    page.get_by_role("button", name="Start the questions").click()
    page.get_by_text("Please tick the box").wait_for()  # refused without the pledge
    page.get_by_label(re.compile("I pledge to answer")).focus()
    page.keyboard.press("Space")
    page.get_by_role("button", name="Start the questions").click()

    page.get_by_text("Question 1 of 30").wait_for()
    current_item(page)
    # no answer preselected; Next without a choice asks again and sends nothing
    assert page.locator("input[name=value]:checked").count() == 0
    page.click("button:has-text('Next')")
    assert page.get_by_text("Please choose an answer before continuing.").is_visible()
    assert Response.objects.count() == 0

    clicked: dict[int, int] = {}
    for number in range(1, 31):
        page.get_by_text(f"Question {number} of 30").wait_for()
        position, item = current_item(page)
        value = expected_value(item)
        clicked[position] = value
        if number % 2:
            answer_with_keyboard(page, value)
        else:
            answer_with_mouse(page, value)
        if number == 12:
            page.get_by_text("Question 13 of 30").wait_for()
            current_item(page)  # flow.js has run (a reload before that sends the answer again: refused, below)
            # The page came back as the reply to the answer's POST; flow.js replaced that history entry, so a
            # reload asks for the question page (GET) instead of sending the answer again.
            documents: list[tuple[str, str]] = []
            page.on("request", lambda r: documents.append((r.method, r.url)) if r.resource_type == "document"
                    else None)
            page.reload()  # a reload in the middle keeps the answers and resumes at the same question
            page.get_by_text("Question 13 of 30").wait_for()
            assert documents == [("GET", f"{live_server.url}/s/{live_study.slug}/question/")], documents
            assert page.locator(".messages").count() == 0  # no "already saved": nothing was sent again
            participant = Participant.objects.get(prolific_pid=PID)
            assert participant.responses.count() == 12
            assert current_item(page)[0] == participant.assignments.get(response__isnull=True, position=13).position

    page.get_by_role("heading", name="Thank you!").wait_for()
    page.wait_for_url(f"{PROLIFIC}?cc=*")
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED and participant.passed_attention is True
    assert page.url == f"{PROLIFIC}?cc={live_study.completion_code}"
    assert hits == [f"{PROLIFIC}?cc={live_study.completion_code}"]

    responses = Response.objects.filter(participant=participant).select_related("assignment")
    assert responses.count() == participant.assignments.count() == 30
    assert {r.assignment.position: r.value for r in responses} == clicked
    assert all(r.time_taken_ms is not None and r.client_time_ms is not None for r in responses)


def test_item_page_on_a_375px_phone(browser, live_server, live_study, tmp_path):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 375, "height": 812},
                        device_scale_factor=2, is_mobile=True, has_touch=True)
    page.goto(f"{live_server.url}/s/{live_study.slug}/?PROLIFIC_PID={PID}")
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("heading", name="Instructions").wait_for()
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    page.screenshot(path=str(tmp_path / "instructions-375px.png"), full_page=True)
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    page.get_by_text("Question 1 of 30").wait_for()
    current_item(page)
    page.tap("label[for=answer-35]")

    # nothing wider than the screen, every answer button a comfortable touch target
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    labels = page.locator(".sb-option label")
    assert labels.count() == 21
    for i in range(21):
        box = labels.nth(i).bounding_box()
        assert box["width"] >= 40 and box["height"] >= 44 and box["x"] >= 0 and box["x"] + box["width"] <= 375
    next_box = page.locator("button:has-text('Next')").bounding_box()
    assert next_box["height"] >= 44 and next_box["x"] + next_box["width"] <= 375

    shot = tmp_path / "item-375px.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
    keep = os.environ.get("HEDGELAB_SCREENSHOT_DIR")
    if keep:  # to look at the page: HEDGELAB_SCREENSHOT_DIR=/some/dir pytest -m browser
        Path(keep).mkdir(parents=True, exist_ok=True)
        for png in tmp_path.glob("*.png"):
            shutil.copy(png, Path(keep) / png.name)
    assert hits == []
