"""An overprecision study (Bahaj et al.) made from the command line and taken by a participant in a real Chromium:
a reversed interval is refused with a clear message by the page and, with the page's check bypassed, by the
server; nothing is saved until the bounds are in order."""
from __future__ import annotations


import pytest
from django.core.management import call_command

from families.bahaj.demo import QUESTIONS_FILE
from surveys.models import Participant, Response, Study
from test_browser import PID, PROLIFIC, browser, current_item, enter_study, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
ORDER = "The lower bound must not be greater than the upper bound."


@pytest.fixture
def overprecision(settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    call_command("create_study", "op", "--instrument", "interval_confidence", "--items-per-participant", "3", "--live")
    call_command("import_items", "op", str(QUESTIONS_FILE))
    return Study.objects.get(slug="op")


def fill(page, lower: str, upper: str) -> None:
    page.fill("input[name=lower]", lower)
    page.fill("input[name=upper]", upper)


def test_a_participant_gives_intervals_and_a_reversed_one_is_refused(browser, live_server, overprecision, tmp_path):
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": 1280, "height": 900})
    enter_study(page, live_server, "op")

    page.get_by_text("Question 1 of 3").wait_for()
    position, item = current_item(page)
    c = item.extra["confidence"]
    assert page.get_by_text(item.statement).is_visible()
    assert page.get_by_text(f"Give a range that you are {c}% sure contains the right answer.").is_visible()
    assert page.get_by_label("Lower bound").is_visible() and page.get_by_label("Upper bound").is_visible()

    fill(page, "20", "5")  # reversed: the page says so and sends nothing
    page.click("button:has-text('Next')")
    assert page.get_by_text(ORDER).is_visible()
    assert Response.objects.count() == 0
    page.screenshot(path=str(tmp_path / "interval-reversed.png"), full_page=True)

    # the page's check bypassed (form.submit() fires no submit event): the server refuses it too
    with page.expect_navigation():
        page.evaluate("document.querySelector('form[data-answer-form]').submit()")
    page.get_by_text(ORDER).wait_for()
    assert current_item(page) == (position, item) and Response.objects.count() == 0

    answers = {}
    for number, (lower, upper) in enumerate((("-3.5", "12.25"), ("1900", "2000"), ("7", "7")), start=1):
        page.get_by_text(f"Question {number} of 3").wait_for()
        position, item = current_item(page)
        fill(page, lower, upper)
        answers[position] = (float(lower), float(upper))
        with page.expect_navigation():
            page.click("button:has-text('Next')")

    page.wait_for_url(f"{PROLIFIC}?cc=*")
    participant = Participant.objects.get(prolific_pid=PID)
    assert participant.status == Participant.Status.COMPLETED
    saved = {r.assignment.position: (r.lower, r.upper) for r in participant.responses.select_related("assignment")}
    assert saved == answers and all(r.value is None and r.choice == "" for r in participant.responses.all())
    keep_screenshots(tmp_path)


@pytest.mark.parametrize("width,height", [(1280, 900), (375, 740)])
def test_a_refused_interval_comes_back_with_what_was_typed(browser, live_server, overprecision, tmp_path,
                                                           width, height):
    """Refused by the server, an interval page shows both bounds as typed: correct one, send again."""
    hits: list[str] = []
    page = offline_page(browser, live_server, hits, viewport={"width": width, "height": height})
    enter_study(page, live_server, "op")
    position, item = current_item(page)
    fill(page, "20", "5")
    with page.expect_navigation():  # past the page's own check: the server refuses it
        page.evaluate("document.querySelector('form[data-answer-form]').submit()")
    page.get_by_text(ORDER).wait_for()
    assert current_item(page) == (position, item)
    assert (page.input_value("input[name=lower]"), page.input_value("input[name=upper]")) == ("20", "5")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page.screenshot(path=str(tmp_path / f"interval-refused-{width}.png"), full_page=True)
    page.fill("input[name=lower]", "2")  # only the wrong bound corrected
    with page.expect_navigation():
        page.click("button:has-text('Next')")
    saved = Response.objects.get()
    assert (saved.lower, saved.upper) == (2, 5)
    keep_screenshots(tmp_path)
