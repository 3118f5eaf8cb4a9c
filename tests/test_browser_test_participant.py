"""A researcher taking their own live study through a test link, in a real Chromium: the link looks different,
every page carries the test banner, and the completion page does not send them to Prolific."""
from __future__ import annotations

import re

import pytest

from surveys.models import Participant
from surveys.test_mode import pilot_link
from test_browser import answer_with_mouse, browser, current_item, expected_value, live_study, offline_page  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_test_participant_sees_the_banner_throughout_and_stays_here(browser, live_server, live_study):  # noqa: F811
    hits: list[str] = []
    page = offline_page(browser, live_server, hits)
    link = pilot_link(live_server.url, live_study)
    assert "PROLIFIC_PID=TEST" in link
    page.goto(link)
    banner = page.locator("#test-banner")
    page.get_by_role("heading", name="Consent to take part").wait_for()
    assert banner.is_visible() and "Test participant" in banner.inner_text()
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("heading", name="Instructions").wait_for()
    assert banner.is_visible()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_role("heading", name="Integrity pledge").wait_for()
    assert banner.is_visible()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    for number in range(1, 31):
        page.get_by_text(f"Question {number} of 30").wait_for()
        assert banner.is_visible()
        answer_with_mouse(page, expected_value(current_item(page)[1]))
    page.get_by_role("heading", name="Thank you!").wait_for()
    assert banner.is_visible() and page.locator("#test-done").is_visible()
    page.wait_for_timeout(3000)  # a real participant is redirected after 2 s
    assert page.get_by_role("heading", name="Thank you!").is_visible() and hits == []
    assert page.locator("#prolific-link").count() == 0
    tester = Participant.objects.get()
    assert tester.is_test and tester.status == Participant.Status.COMPLETED
