"""Interval at confidence (Bahaj et al.): the parser, the prompts, the item import (one item per level), the
participant page and the server's check of lower ≤ upper, and the demo study."""
from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from surveys.page_tokens import slot_token
from families.bahaj.demo import SLUG, load_overprecision_demo
from surveys.importers import ImportFailed, import_items
from surveys.instruments import get_instrument
from families.bahaj.instrument import LEVELS, hint_interval
from surveys.instruments.interval_text import plain, read_interval
from surveys.models import Item, Response, Study
from test_flow import current_slot, page, start, url

KIND = get_instrument("interval_confidence")


@pytest.mark.parametrize("text, bounds", [
    ("[12, 18]", (12, 18)),
    ("(12; 18)", (12, 18)),
    ("(12, 18)", (12, 18)),
    ("12 - 18", (12, 18)),
    ("12–18", (12, 18)),
    ("12 to 18", (12, 18)),
    ("between 12 and 18", (12, 18)),
    ("Between 1,200 km and 1,800 km.", (1200, 1800)),
    ("[8,849, 8,900]", (8849, 8900)),
    ("[120,180]", (120, 180)),                      # a comma between two numbers, not a thousands separator
    ("[8,800,8,900]", (8800, 8900)),
    ("from 100 °C to 120 °C", (100, 120)),
    ("between $1.2 million and $1.5 million", (1.2e6, 1.5e6)),
    ("[-5, -1]", (-5, -1)),
    ("[−273.5, −272]", (-273.5, -272)),
    ("lower bound: 5, upper bound: 9", (5, 9)),
    ("[45%, 55%]", (45, 55)),
    ("[12, 12]", (12, 12)),
    ("I think [1960, 1975] at first.\nAnswer: [1968, 1970]", (1968, 1970)),  # after the last Answer:
])
def test_intervals_a_model_writes(text, bounds):
    parsed = KIND.parse_model_answer(text)
    assert parsed.ok, parsed.error
    assert (parsed.answer.lower, parsed.answer.upper) == pytest.approx(bounds)
    assert parsed.answer.value is None and parsed.answer.choice == ""


@pytest.mark.parametrize("text, reason", [
    ("[18, 12]", "reversed interval: lower bound 18 > upper bound 12"),
    ("about 8,849 metres", "a single number (8849), not an interval"),
    ("I do not know", "no number in the answer"),
    ("maybe 12 or maybe 18", "no interval (two bounds) in the answer"),
    # what Gemma 3 270M wrote: a thousands separator inside round brackets is one number, not [21, 527]
    ("Mount Everest is 6,098 meters (21,527ft) above sea level.", "no interval (two bounds) in the answer"),
    ("9,508 metres (672,481 ft)", "no interval (two bounds) in the answer"),
])
def test_unreadable_intervals_keep_the_reason(text, reason):
    parsed = KIND.parse_model_answer(text)
    assert not parsed.ok and parsed.error == reason and parsed.raw == text
    assert read_interval(text).error == reason


def item(confidence=90, truth=8849.0, key="everest|90"):
    study = Study(slug="op", title="Op", instrument="interval_confidence")  # unsaved: worded by the shipped file
    return Item(study=study, key=key, statement="How high is Mount Everest, in metres?", ground_truth=truth,
                extra={"confidence": confidence, "source": "geography"})


def test_vanilla_prompt_is_the_papers_template():
    prompt = KIND.build_prompt(item(90), [], style="standard")
    text = prompt.messages[0]["content"]
    assert prompt.messages == [{"role": "user", "content": text}] and prompt.text == f"{text}\nAnswer:"
    assert text.startswith("Please follow these instructions")
    assert "only a 5% probability that the right answer is less than that" in text  # (100 − 90)/2
    assert "you should be 90% sure that the answer falls between" in text
    assert "Your answer should have the following format: [lower_bound, upper_bound]" in text
    assert text.endswith("Question: How high is Mount Everest, in metres?")
    assert "step-by-step" not in text and "I read in a book" not in text
    assert "only a 20% probability" in KIND.build_prompt(item(60), [], style="standard").text


def test_cot_and_misleading_hint_prompts():
    cot = KIND.build_prompt(item(), [], style="cot").messages[0]["content"]
    assert "step-by-step reasoning" in cot and "Answer: [lower_bound, upper_bound]" in cot
    hinted = KIND.build_prompt(item(), [], style="hint").messages[0]["content"]
    low, high = hint_interval(item())
    assert f"I read in a book that the right answer is: [{plain(low)}, {plain(high)}]. Note that the hint is for " \
           "reference only and may not be true." in hinted
    assert hinted.index("I read in a book") < hinted.index("Question:")
    assert hint_interval(item()) == (low, high) and low < high  # seeded by the key: the same prompt every time
    assert "step-by-step" in KIND.build_prompt(item(), [], style="cot_hint").text
    with pytest.raises(ValueError, match="source run"):
        KIND.build_prompt(item(), [], style="refine")
    with pytest.raises(ValueError, match="unknown prompt style"):
        KIND.build_prompt(item(), [], style="sarcastic")


def test_page_validation_refuses_reversed_and_bad_bounds():
    it = item()
    assert KIND.validate_answer(it, {"lower": "-3.5", "upper": "12"}).lower == -3.5
    for data, message in (({"lower": "18", "upper": "12"}, "must not be greater"),
                          ({"lower": "", "upper": "12"}, "Please enter a lower bound"),
                          ({"lower": "1e3", "upper": "2000"}, "must be a number")):
        with pytest.raises(Exception, match=message):
            KIND.validate_answer(it, data)


CSV = "id,question,answer,source\neverest,How high is Mount Everest in metres?,\"8,849\",geography\n" \
      "zero,What is absolute zero in degrees Celsius?,-273.15,science\n"


@pytest.fixture
def study(db):
    call_command("create_study", "op", "--instrument", "interval_confidence", "--live")
    return Study.objects.get(slug="op")


def test_import_expands_each_question_to_the_five_levels(study):
    result = import_items(study, io.StringIO(CSV))
    assert result.created == 10
    items = {i.key: i for i in study.main_items()}
    assert sorted(items) == sorted(f"{q}|{c}" for q in ("everest", "zero") for c in LEVELS)
    assert items["everest|60"].ground_truth == 8849 and items["zero|95"].ground_truth == -273.15
    assert items["zero|95"].extra == {"source": "science", "confidence": 95}
    assert items["zero|95"].statement_id == "zero" and not study.demonstrations()


@pytest.mark.parametrize("csv, where", [
    ("question,answer\nHow tall?,tall\n", "line 2, column 'answer': 'tall' is not a number"),
    ("question,answer\n,12\n", "line 2, column 'question': is empty"),
    ("question,answer\nHow tall?,12\nHow tall?,13\n", "line 3"),
])
def test_import_is_all_or_nothing_naming_line_and_column(study, csv, where):
    with pytest.raises(ImportFailed) as failed:
        import_items(study, io.StringIO(csv))
    assert where in str(failed.value) and study.items.count() == 0


def test_import_command(study, tmp_path):
    path = tmp_path / "q.csv"
    path.write_text(CSV, encoding="utf-8")
    call_command("import_items", "op", str(path))
    assert study.items.count() == 10
    with pytest.raises(CommandError, match="already in study op"):
        call_command("import_items", "op", str(path))


def test_the_page_shows_the_level_and_refuses_a_reversed_interval(client, study):
    import_items(study, io.StringIO(CSV))
    participant = start(client, study)
    slot = current_slot(participant)
    shown = page(client.get(url(study, "item")))
    c = slot.item.extra["confidence"]
    assert slot.item.statement in shown and f"Give a range that you are {c}% sure contains the right answer" in shown
    assert 'name="lower"' in shown and 'name="upper"' in shown and 'step="any"' in shown and "data-ordered" in shown
    post = {"step": "item", "position": slot.position, "item": slot.item_id, "token": slot_token(slot),
            "client_time_ms": "900"}
    refused = client.post(url(study, "item"), post | {"lower": "20", "upper": "-3"})
    assert refused.status_code == 200
    assert "The lower bound must not be greater than the upper bound." in page(refused)
    assert Response.objects.count() == 0
    saved = client.post(url(study, "item"), post | {"lower": "-3.5", "upper": "20"})
    assert saved.status_code == 200 and "Question 2 of" in page(saved)
    response = Response.objects.get()
    assert (response.lower, response.upper, response.value) == (-3.5, 20, None)


def test_demo_study_is_loaded_once(db):
    outcome = load_overprecision_demo()
    study = outcome.study
    assert outcome.created and study.slug == SLUG and study.status == Study.Status.LIVE
    assert study.main_items().count() == 52 * 5 and study.instrument == "interval_confidence"
    assert study.main_items().filter(ground_truth__isnull=True).count() == 0
    assert load_overprecision_demo().created is False
