"""Every answer shape fits a phone: at 320 and 375 px wide the question page does not scroll sideways and a
scale's labels do not overlap (issue 32 point 5). Screenshots are kept with keep_screenshots."""
from __future__ import annotations

import pytest

from generic_studies import CHOICE, FREE_TEXT, generic_study
from test_browser import PROLIFIC, browser, current_item, enter_study, offline_page  # noqa: F401 (fixture)
from test_browser_choice import keep_screenshots

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AGREE_7 = {"1": "Strongly disagree", "2": "Disagree", "3": "Somewhat disagree", "4": "Neither agree nor disagree",
           "5": "Somewhat agree", "6": "Agree", "7": "Strongly agree"}
ELEVEN = {str(n): label for n, label in enumerate(
    ["Not at all likely", "Very unlikely", "Unlikely", "Rather unlikely", "Somewhat unlikely", "Even chances",
     "Somewhat likely", "Rather likely", "Likely", "Very likely", "Extremely likely"])}
SHAPES = {
    "scale-7-labelled": {"shape": "scale", "min": 1, "max": 7, "labels": AGREE_7},
    "scale-11-labelled": {"shape": "scale", "min": 0, "max": 10, "labels": ELEVEN},
    "scale-ends": {"shape": "scale", "min": 1, "max": 7, "labels": {"1": "Completely disagree",
                                                                     "7": "Completely agree"}},
    "scale-0-100": {"shape": "scale", "min": 0, "max": 100, "step": 5},
    "scale-0-100-ends": {"shape": "scale", "min": 0, "max": 100, "step": 5,
                         "labels": {"0": "Certainly not", "100": "Certainly"}},
    "slider-7-labelled": {"shape": "scale", "min": 1, "max": 7, "labels": AGREE_7, "widget": "slider"},
    "slider-ends": {"shape": "scale", "min": 0, "max": 100, "widget": "slider",
                    "labels": {"0": "Certainly not", "50": "Even chances", "100": "Certainly"}},
    "choice": {**CHOICE, "options": [*CHOICE["options"], {"key": "long", "label": (
        "I would need to know considerably more about the circumstances before answering")}]},
    "pick": {"shape": "pick", "options": [
        {"key": "a", "label": "The committee will almost certainly approve the internationalisation proposal."},
        {"key": "b", "label": "The committee will probably approve the internationalisation proposal."}]},
    "interval": {"shape": "interval"},
    "free-text": FREE_TEXT,
}


def _boxes_overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] - 1 and b["x"] < a["x"] + a["width"] - 1
            and a["y"] < b["y"] + b["height"] - 1 and b["y"] < a["y"] + a["height"] - 1)


@pytest.mark.parametrize("width", [320, 375])
@pytest.mark.parametrize("name", list(SHAPES))
def test_every_answer_shape_fits_a_phone(browser, live_server, settings, tmp_path, name, width):
    settings.PROLIFIC_COMPLETE_URL = PROLIFIC
    generic_study("phone", SHAPES[name], items=1)
    page = offline_page(browser, live_server, [], viewport={"width": width, "height": 740}, is_mobile=True,
                        has_touch=True, device_scale_factor=2)
    enter_study(page, live_server, "phone")
    page.get_by_text("Question 1 of 1").wait_for()
    current_item(page)
    page.screenshot(path=str(tmp_path / f"{name}-{width}.png"), full_page=True)
    sizes = page.evaluate("({scroll: document.scrollingElement.scrollWidth, inner: innerWidth})")
    assert sizes["scroll"] <= sizes["inner"], f"{name} at {width} px scrolls sideways: {sizes}"
    # where each label's text is drawn (its text's extent, not its box: a long word overflows a narrow box)
    labels = page.evaluate("""[...document.querySelectorAll('.scale-label, .slider-label')].map(el => {
        const range = document.createRange(); range.selectNodeContents(el);
        const r = range.getBoundingClientRect();
        return {x: r.x, y: r.y, width: r.width, height: r.height};
    })""")
    for box in labels:
        assert box["x"] >= 0 and box["x"] + box["width"] <= width + 0.5, f"{name}: a label leaves the page"
    overlapping = [(i, j) for i in range(len(labels)) for j in range(i + 1, len(labels))
                   if _boxes_overlap(labels[i], labels[j])]
    assert not overlapping, f"{name} at {width} px: labels overlap ({overlapping})"
    buttons = [el.bounding_box() for el in page.locator(".sb-option label").all()]
    assert all(b["width"] >= 24 and b["height"] >= 24 for b in buttons), "a scale button is too small to tap"
    page.context.close()
    keep_screenshots(tmp_path)
