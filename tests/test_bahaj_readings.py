"""The two named readings of Bahaj et al.'s answers: the authors' rule-based cleaner (§2.2, lossy cases included
and counted) and the platform's reading (``read_interval``: numbers read correctly, named bound lines win, the
last shape written wins), over the authors' example answers; and the refinement reply as a Python literal."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from families.bahaj.authors import (CASES, authors_bounds, case_counts, literal_reply, refinement_intervals,
                                    remove_units)
from surveys.instruments.interval_text import read_interval

EXAMPLES = json.loads((Path(__file__).resolve().parent / "data" / "bahaj2024" / "prompts.json")
                      .read_text(encoding="utf-8"))["answer_format_examples"]


@pytest.mark.parametrize("value, cleaned, number, cases", [  # the protocol's table (README §2.2)
    ("25 days", "25", 25, ()),
    ("1,200", "1200", 1200, ("comma_removed",)),
    ("$1,200", "", None, ("leading_text_erased",)),
    ("approximately 5", "", None, ("leading_text_erased",)),
    ("+5", "", None, ("leading_text_erased",)),
    ("-5%", "-5", -5, ()),
    ("1.5 million", "1.5", 1.5, ("scale_word_dropped",)),
    ("2.5e6", "2.56", 2.56, ("exponent_mangled",)),
    ("10^6", "106", 106, ("exponent_mangled",)),
    ("3/4", "34", 34, ("numbers_joined",)),
    ("0.75 (75%)", "0.7575", 0.7575, ("numbers_joined",)),
    ("-3 to 5", "-35", -35, ("numbers_joined",)),
    ("10-20", "10-20", None, ("numbers_joined", "not_a_number")),
])
def test_authors_cleaner_values(value, cleaned, number, cases):
    assert remove_units(value.lower()) == cleaned
    reading = authors_bounds(f"lower_bound: {value}\nupper_bound: 100")
    assert reading.texts["lower_bound"] == cleaned
    assert reading.lower == (pytest.approx(number) if number is not None else None)
    assert reading.cases == cases


@pytest.mark.parametrize("line, lower, cases", [
    ("**Lower Bound**: 3", 3, ()),
    ("    lower_bound: 10 days", 10, ()),
    ("-lower_bound: 3", 3, ()),
    ("- lower_bound: 3", None, ("key_missed",)),      # the key becomes "_lower_bound"
    ("1. lower_bound: 3", None, ("key_missed",)),
    ("lower_bound:\n3", None, ("empty_value",)),      # the number on the next line
])
def test_authors_cleaner_keys(line, lower, cases):
    reading = authors_bounds(f"{line}\nupper_bound: 5")
    assert reading.lower == lower and reading.upper == 5 and reading.cases == cases
    assert reading.parsed is (lower is not None)


def test_authors_cleaner_keeps_reversed_point_last_and_missing():
    assert (authors_bounds("lower_bound: 9\nupper_bound: 3").lower, authors_bounds("lower_bound: 9\nupper_bound: 3")
            .upper) == (9, 3)
    point = authors_bounds("lower_bound: 23\nupper_bound: 23")
    assert point.parsed and point.lower == point.upper == 23
    assert authors_bounds("lower_bound: 1\nlower_bound: 2\nupper_bound: 3").lower == 2  # the last line wins
    missing = authors_bounds("I think it is 5.")
    assert (missing.lower, missing.upper, missing.parsed, missing.cases) == (None, None, False, ())
    assert authors_bounds("lower_bound: 1: 2\nupper_bound: 3").lower == 1  # between the first and second ":"


def test_authors_example_answers_both_readings():
    """prompts.json's answer_format_examples: the authors' cleaner and the platform's reading agree on them."""
    expected = [(3, 4), (23, 23), (25, 30), (10, 15)]
    for example, bounds in zip(EXAMPLES, expected, strict=True):
        authors = authors_bounds(example["full_output"])
        assert (authors.lower, authors.upper) == bounds and authors.cases == ()
        platform = read_interval(example["full_output"])
        assert platform.ok and (platform.lower, platform.upper) == bounds
    # the last example's explanation after the bounds says "between 10 and 15": the named lines win either way
    assert "between 10 and 15" in EXAMPLES[3]["full_output"]


def test_case_counts_count_answers_not_lines():
    readings = [authors_bounds("lower_bound: $1\nupper_bound: $2"), authors_bounds("lower_bound: 1,000\nupper_bound: 2"),
                authors_bounds("lower_bound: 1\nupper_bound: 2")]
    counts = case_counts(readings)
    assert set(counts) == set(CASES)
    assert counts["leading_text_erased"] == 1 and counts["comma_removed"] == 1 and sum(counts.values()) == 2


@pytest.mark.parametrize("text, bounds", [
    ("lower_bound: 1.5 million\nupper_bound: 2 million", (1.5e6, 2e6)),
    ("lower_bound: 2.5e6\nupper_bound: 3e6", (2.5e6, 3e6)),
    ("lower_bound: $1,200\nupper_bound: $1,500", (1200, 1500)),
    ("- lower_bound: 3\n- upper_bound: 5", (3, 5)),
    ("1. lower_bound: 3\n2. upper_bound: 5", (3, 5)),
    ("**Lower Bound**: 10 days\n**Upper Bound**: 12 days", (10, 12)),
    ("The range is -3 to 5.", (-3, 5)),
    ("-3 to 5", (-3, 5)),
    ("between 2.5e6 and 3e6", (2.5e6, 3e6)),
    # named lines win over other numbers written before or after them
    ("explaination: it lies between 20 and 30\nlower_bound: 22\nupper_bound: 24", (22, 24)),
    ("lower_bound: 22\nupper_bound: 24\nI am sure it is between 10 and 40.", (22, 24)),
    ("lower_bound: 1\nupper_bound: 9\nlower_bound: 2\nupper_bound: 8", (2, 8)),  # the last line of each
    # the last shape written wins ("the last one written wins")
    ("First I thought [1, 2], then 5 - 9", (5, 9)),
    ("between 1 and 2, or rather [3, 4]", (3, 4)),
    ("[3, 4], or rather between 5 and 6", (5, 6)),
])
def test_platform_reading(text, bounds):
    reading = read_interval(text)
    assert reading.ok, reading.error
    assert (reading.lower, reading.upper) == pytest.approx(bounds)


def test_platform_reading_refuses_reversed_named_lines():
    assert read_interval("lower_bound: 10\nupper_bound: 5").error == "reversed interval: lower bound 10 > upper bound 5"


def test_refinement_reply_is_a_python_literal():
    reply = "{'chosen_answer': [22, 24],\n 'chosen_reason': 'x',\n 'proposed_answer': [23, 23],\n 'proposed_reason': 'y'}"
    parsed = literal_reply(reply)
    assert refinement_intervals(parsed) == ((22, 24), (23, 23))
    assert refinement_intervals(literal_reply('{"chosen_answer": ["1,000", "7"], "proposed_answer": [1, 2]}')) == \
        ((None, 7), (1, 2))
    assert refinement_intervals(literal_reply("{'chosen_answer': [1, 2], 'proposed_answer': [1]}")) is None
    for bad, reason in [("{'a': 01}", "not a Python literal"), ("{'a': 1 'b': 2}", "not a Python literal"),
                        ("[1, 2]", "a list, not a dict"), ("__import__('os').system('true')", "not a Python literal"),
                        ('{"chosen_answer": null}', "not a Python literal"), ("x" * 200_000, "longer than")]:
        with pytest.raises(ValueError, match=reason):
            literal_reply(bad)


def test_read_answer_by_reading_name():
    from families.bahaj.instrument import read_answer

    text = "lower_bound: 1.5 million\nupper_bound: $2,000,000"
    assert (read_answer(text, "authors").lower, read_answer(text, "authors").upper) == (1.5, None)
    assert (read_answer(text, "text").lower, read_answer(text, "text").upper) == (1.5e6, 2e6)
    reversed_ = "lower_bound: 9\nupper_bound: 3"
    assert (read_answer(reversed_, "authors").lower, read_answer(reversed_, "authors").upper) == (9, 3)
    assert read_answer(reversed_, "text").lower is None and read_answer(reversed_, "text").cases[0].startswith("reversed")
    with pytest.raises(ValueError, match="unknown reading"):
        read_answer(text, "lenient")
