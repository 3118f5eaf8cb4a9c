"""A participant who comes through another recruitment channel (surveys.channels), in a real Chromium: they
enter with the channel's link and their id there, and at the end are sent to the channel's completion address
with their id and the study's code, never to Prolific."""
from __future__ import annotations

import re

import pytest

from surveys.models import Participant, RecruitmentChannel
from test_browser import answer_with_mouse, browser, current_item, expected_value, live_study  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SONA = "https://lab.sona-systems.com/webstudy_credit.aspx"


def test_a_sona_participant_is_sent_back_to_sona_with_their_id_and_code(browser, live_server, live_study):  # noqa: F811
    RecruitmentChannel.objects.create(study=live_study, name="sona", id_param="id",
                                      completion_url=SONA + "?experiment_id=12&survey_code={id}&code={code}")
    visited: list[str] = []
    context = browser.new_context()

    def handle(route):
        url = route.request.url
        if url.startswith(live_server.url):
            return route.continue_()
        visited.append(url)
        if url.startswith(SONA):
            return route.fulfill(status=200, content_type="text/html", body="<html><body>SONA (stub)</body></html>")
        return route.abort()

    context.route("**/*", handle)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{live_study.slug}/?channel=sona&id=4412")
    page.get_by_role("button", name="I agree, continue").click()
    page.get_by_role("button", name=re.compile("I have read the instructions")).click()
    page.get_by_label(re.compile("I pledge to answer")).check()
    page.get_by_role("button", name="Start the questions").click()
    for number in range(1, 31):
        page.get_by_text(f"Question {number} of 30").wait_for()
        answer_with_mouse(page, expected_value(current_item(page)[1]))
    page.wait_for_url(f"{SONA}*")
    participant = Participant.objects.get()
    assert participant.prolific_pid == "sona-4412" and participant.status == Participant.Status.COMPLETED
    assert visited == [f"{SONA}?experiment_id=12&survey_code=4412&code={participant.completion_code}"]


def test_a_sona_participant_refused_before_admission_never_reads_prolific(browser, live_server, live_study,  # noqa: F811
                                                                          settings):
    """Through SONA's link, in a real browser: a closed study, a link without the id, the entry limit and the
    consent declined; no page names Prolific, and nothing is created for a refused link."""
    RecruitmentChannel.objects.create(study=live_study, name="sona", id_param="id",
                                      completion_url=SONA + "?experiment_id=12&survey_code={id}&code={code}")
    context = browser.new_context()
    context.route("**/*", lambda route: route.continue_() if route.request.url.startswith(live_server.url)
                  else route.abort())
    page = context.new_page()
    base = f"{live_server.url}/s/{live_study.slug}/"

    def shown(url: str, title: str) -> str:
        page.goto(url)
        page.get_by_role("heading", name=title).wait_for()
        text = page.inner_text("body")
        assert "Prolific" not in text, text
        return text

    live_study.status = live_study.Status.CLOSED
    live_study.save()
    assert "no longer accepting participants" in shown(f"{base}?channel=sona&id=4412", "This study is closed")
    live_study.status = live_study.Status.LIVE
    live_study.save()
    shown(f"{base}?channel=sona", "This link is missing your id")
    shown(f"{base}?channel=sona&id=a%20b", "This link has an invalid id")
    assert not Participant.objects.exists()
    settings.ENTRY_MAX_PER_CLIENT = 1
    shown(f"{base}?channel=sona&id=4412", "Consent to take part")  # the first one from this address
    page.get_by_role("button", name="I do not agree").click()
    page.get_by_role("heading", name="You chose not to take part").wait_for()
    assert "Prolific" not in page.inner_text("body")
    other = context.new_page()  # a second new participant from the same address
    other.goto(f"{base}?channel=sona&id=4413")
    other.get_by_role("heading", name="Too many new participants from your network").wait_for()
    assert "Prolific" not in other.inner_text("body")
    assert list(Participant.objects.values_list("prolific_pid", "status")) == [("sona-4412", "declined")]


def test_a_sona_participant_who_declines_goes_back_to_sona_by_its_return_address(browser, live_server,  # noqa: F811
                                                                                   live_study):
    """A channel with a return address: the declined page offers "Back to sona" (in a phone-wide window, the
    button inside the page), and it leads there."""
    RecruitmentChannel.objects.create(study=live_study, name="sona", id_param="id", completion_url=SONA + "?c={code}",
                                      return_url="https://lab.sona-systems.com/all_exp_participant.aspx")
    context = browser.new_context(viewport={"width": 375, "height": 700})

    def handle(route):
        if route.request.url.startswith(live_server.url):
            return route.continue_()
        if route.request.url.startswith("https://lab.sona-systems.com/"):
            return route.fulfill(status=200, content_type="text/html", body="<html><body>SONA (stub)</body></html>")
        return route.abort()

    context.route("**/*", handle)
    page = context.new_page()
    page.goto(f"{live_server.url}/s/{live_study.slug}/?channel=sona&id=4412")
    page.get_by_role("button", name="I do not agree").click()
    page.get_by_role("heading", name="You chose not to take part").wait_for()
    assert "Prolific" not in page.inner_text("body") and "close this page" not in page.inner_text("body")
    back = page.get_by_role("link", name="Back to sona")
    box = back.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 375
    back.click()
    page.wait_for_url("https://lab.sona-systems.com/all_exp_participant.aspx")
    assert page.inner_text("body") == "SONA (stub)"
