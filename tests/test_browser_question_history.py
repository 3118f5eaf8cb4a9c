"""Back, Forward, reload and a second tab never put an answer into a question it was not given to, for every
answer shape (issue 32 point 1), and for the page with several questions per item on a 375 px phone.

Every question is at the same URL (/s/<slug>/question/), so a browser restoring the previous page's form would
show question 2 with question 1's answer chosen, and Next would store it. The question form says
autocomplete="off" and static/surveys/flow.js sets it back to what the server sent; the server refuses a post
whose page token does not belong to the question it names (tests/test_question_token.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import pytest

from generic_studies import CHOICE, FREE_TEXT, SCALE_1_7, generic_study
from surveys.models import Response
from test_browser import PROLIFIC, browser, current_item, enter_study, offline_page  # noqa: F401 (fixture)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PICK = {"shape": "pick", "options": [{"key": "first", "label": "The meeting is probably on Monday."},
                                     {"key": "second", "label": "The meeting is certainly on Monday."}]}
INTERVAL = {"shape": "interval"}


@dataclass
class Shape:
    """How a participant answers one shape in the page, and what is stored for it."""

    answer: dict
    fill: Callable  # (page, variant 0 or 1) -> None: chooses or types an answer, without sending it
    stored: Callable  # (Response) -> the answer as stored, comparable to expected(variant)
    expected: Callable  # (variant) -> what fill(page, variant) stores


def _filled_radio(page) -> bool:
    return page.locator("form[data-answer-form] input[data-answer]:checked").count() > 0


def _filled_fields(page) -> bool:
    values = page.eval_on_selector_all(
        "form[data-answer-form] input[data-answer]:not([type=radio]), form[data-answer-form] textarea[data-answer]",
        "els => els.map(e => e.value)")
    return any(v.strip() for v in values)


def _filled_slider(page) -> bool:
    hidden = page.locator("[data-slider-value]").input_value()
    return hidden != "" or page.locator("input[type=range]").input_value() != "4" or \
        page.locator("input[type=range]:not([data-untouched])").count() > 0


def _slide(page, variant: int) -> None:
    page.locator("input[type=range]").focus()
    page.keyboard.press("ArrowRight" if variant == 0 else "ArrowLeft")


SHAPES = {
    "scale-buttons": (Shape(SCALE_1_7, lambda page, v: page.click(f"label[for=answer-{5 if v == 0 else 2}]"),
                            lambda r: r.value, lambda v: 5 if v == 0 else 2), _filled_radio),
    "scale-slider": (Shape({**SCALE_1_7, "widget": "slider"}, _slide, lambda r: r.value,
                           lambda v: 5 if v == 0 else 3), _filled_slider),
    "choice": (Shape(CHOICE, lambda page, v: page.click(f"label:text-is('{'I agree' if v == 0 else 'I disagree'}')"),
                     lambda r: r.choice, lambda v: "agree" if v == 0 else "disagree"), _filled_radio),
    "pick": (Shape(PICK, lambda page, v: page.click(f"label:has-text('{'probably' if v == 0 else 'certainly'}')"),
                   lambda r: r.choice, lambda v: "first" if v == 0 else "second"), _filled_radio),
    "interval": (Shape(INTERVAL, lambda page, v: (page.fill("input[name=lower]", "10" if v == 0 else "-3.5"),
                                                  page.fill("input[name=upper]", "20" if v == 0 else "4")),
                       lambda r: (r.lower, r.upper), lambda v: (10, 20) if v == 0 else (-3.5, 4)), _filled_fields),
    "free-text": (Shape(FREE_TEXT, lambda page, v: page.fill("textarea[data-answer]", f"Answer number {v}."),
                        lambda r: r.text, lambda v: f"Answer number {v}."), _filled_fields),
}


@pytest.fixture
def context(browser, live_server, settings):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    page = offline_page(browser, live_server, [], viewport={"width": 1280, "height": 900})
    yield page.context
    page.context.close()


def stored() -> dict[int, object]:
    return {r.assignment.position: r for r in Response.objects.select_related("assignment")}


def at_question(page, number: int, total: int = 3) -> None:
    page.get_by_text(f"Question {number} of {total}").wait_for()
    current_item(page)  # flow.js has run (it sets the answer back to what the server sent)


@pytest.mark.parametrize("name", list(SHAPES))
def test_back_forward_reload_and_a_second_tab_never_carry_an_answer_over(context, live_server, name, tmp_path):
    shape, filled = SHAPES[name]
    generic_study("history", shape.answer, items=3)
    page = context.pages[0]
    enter_study(page, live_server, "history")
    at_question(page, 1)
    shape.fill(page, 0)
    assert filled(page)
    page.click("button:has-text('Next')")
    at_question(page, 2)
    assert not filled(page)

    # Back: the browser asks for the question page again, which is question 2 now, and shows it empty;
    # Next asks for an answer instead of storing question 1's
    page.go_back()
    at_question(page, 2)
    page.screenshot(path=str(tmp_path / f"{name}-after-back.png"))
    assert not filled(page), "question 2 shows an answer after Back"
    page.click("button:has-text('Next')")
    assert page.locator("[data-answer-error]").is_visible()
    assert sorted(stored()) == [1]

    # Forward: the same
    page.go_forward()
    at_question(page, 2)
    assert not filled(page), "question 2 shows an answer after Forward"

    # reload with an answer chosen but not sent: the question comes back empty
    shape.fill(page, 1)
    page.reload()
    at_question(page, 2)
    assert not filled(page), "question 2 keeps an unsent answer over a reload"

    # a second tab shows the same question; what one tab sends is stored, the other tab's answer is refused
    other = context.new_page()
    other.goto(page.url)
    at_question(other, 2)
    assert not filled(other)
    shape.fill(page, 0)
    shape.fill(other, 1)
    other.click("button:has-text('Next')")
    at_question(other, 3)
    page.click("button:has-text('Next')")
    at_question(page, 3)
    assert page.get_by_text("already").is_visible()  # "That answer was already saved…"
    assert not filled(page)
    answers = stored()
    assert sorted(answers) == [1, 2]
    assert shape.stored(answers[1]) == shape.expected(0)
    assert shape.stored(answers[2]) == shape.expected(1)

    # and Back in the second tab, after question 2 was answered there: question 3, empty
    other.go_back()
    at_question(other, 3)
    assert not filled(other)


def _several_filled(page) -> bool:
    """Any of the several questions' answers set: the rating chosen, the slider moved, a bound typed."""
    return (page.locator("[data-question=rating] input:checked").count() > 0
            or page.locator("[data-question=estimate] [data-slider-value]").input_value() != ""
            or page.locator("[data-question=estimate] input[type=range]:not([data-untouched])").count() > 0
            or page.locator("#q-range-lower").input_value() != "" or page.locator("#q-range-upper").input_value() != "")


def _several_fill(page, variant: int) -> None:
    page.click(f"label[for=q-rating-{6 if variant == 0 else 2}]")
    page.locator("[data-question=estimate] input[type=range]").focus()
    page.keyboard.press("ArrowRight" if variant == 0 else "ArrowLeft")
    page.fill("#q-range-lower", "40" if variant == 0 else "10")
    page.fill("#q-range-upper", "60" if variant == 0 else "30")


def test_several_questions_on_a_phone_keep_no_answer_over_back_forward_or_reload(browser, live_server, settings,
                                                                                 tmp_path):
    """The page with several questions per item (a 1–7 rating, a slider, an optional interval) at 375 px:
    Back, Forward and reload show the current question with none of its questions answered."""
    from test_questions_flow import questions_study

    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    page = offline_page(browser, live_server, [], viewport={"width": 375, "height": 740}, is_mobile=True,
                        has_touch=True)
    questions_study("phone-history", items=3)
    enter_study(page, live_server, "phone-history")
    at_question(page, 1)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375  # no sideways scrolling
    _several_fill(page, 0)
    assert _several_filled(page)
    page.click("button:has-text('Next')")
    at_question(page, 2)
    assert not _several_filled(page)
    page.go_back()
    at_question(page, 2)
    page.screenshot(path=str(tmp_path / "several-after-back.png"), full_page=True)
    assert not _several_filled(page), "question 2 shows an answer after Back"
    page.click("button:has-text('Next')")
    assert page.locator("#q-rating-error").is_visible() and page.locator("#q-estimate-error").is_visible()
    page.go_forward()
    at_question(page, 2)
    assert not _several_filled(page), "question 2 shows an answer after Forward"
    _several_fill(page, 1)
    page.reload()
    at_question(page, 2)
    assert not _several_filled(page), "question 2 keeps unsent answers over a reload"
    _several_fill(page, 1)
    page.click("button:has-text('Next')")
    at_question(page, 3)
    saved = {(r.assignment.position, r.question): r.answer.text()
             for r in Response.objects.select_related("assignment")}
    assert saved == {(1, "rating"): "6", (1, "estimate"): "51", (1, "range"): "[40, 60]",
                     (2, "rating"): "2", (2, "estimate"): "49", (2, "range"): "[10, 30]"}
    page.context.close()
