"""Bahaj et al.'s prompts word for word: studies/bahaj/templates.toml rendered by families/bahaj/authors.py equals
every prompt the authors' own functions rendered (tests/data/bahaj2024/prompts.json, a copy of
../shared/data/bahaj2024-protocol/prompts.json), byte for byte;
the hint draws are the authors' (§1.5) from a seeded generator."""
from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from families.bahaj import authors as bahaj

PROTOCOL = Path(__file__).resolve().parent / "data" / "bahaj2024" / "prompts.json"
QUESTION = "How many chromosomes are in a human sperm cell?"
REPLY = "```\nlower_bound: 22\nupper_bound: 24\n```"  # the candidates visible in SR cell 23's output


@pytest.fixture(scope="module")
def authors():
    return json.loads(PROTOCOL.read_text(encoding="utf-8"))


def test_tail_is_python_float_text():
    assert [bahaj.tail_pct(c) for c in (60, 70, 80, 90, 95)] == ["20.0", "15.0", "10.0", "5.0", "2.5"]


@pytest.mark.parametrize("level", ["60", "70", "80", "90", "95"])
def test_confidence_block_per_level(authors, level):
    assert bahaj.confidence_block(int(level)) == authors["generation"]["CONF_PCT_PROMPTS"]["rendered_by_level"][level]


def test_blocks_are_the_authors(authors):
    g, t = authors["generation"], bahaj.templates()
    assert t["gen"] == g["GEN"]["templates"]["text"]
    assert t["vanilla"] == g["FORMAT"]["templates"]["vanilla"]
    assert t["cot"] == g["FORMAT"]["templates"]["cot"]
    assert t["confidence_knowledge"] == g["CONFK"]["templates"]["text"]
    assert t["hint_disclaimer"] == g["HINT_DISCLAIMER"]["templates"]["text"]
    assert t["hint_prefixes"] == g["HINT_PROMPTS"]["templates"]["active"]


@pytest.mark.parametrize("name, strategy", [("vanilla_90_hint0", "vanilla"), ("cot_90_hint0", "cot")])
def test_rendered_examples_without_hint(authors, name, strategy):
    expected = authors["generation"]["rendered_examples"][name]
    assert bahaj.generation_prompt(QUESTION, 90, strategy) == expected
    assert bahaj.generation_prompt(QUESTION, 90, strategy, bahaj.draw_hint("hint0", 23.0, random.Random(1))) \
        == expected


def test_rendered_example_with_hint_seed0(authors):
    """The authors' example drew with random.seed(0): the same draw order from random.Random(0) gives it."""
    hint = bahaj.draw_hint("hint1", 23.0, random.Random(0))
    assert (hint.lower, hint.upper) == (2, 24)
    assert bahaj.generation_prompt(QUESTION, 90, "vanilla", hint) == \
        authors["generation"]["rendered_examples"]["vanilla_90_hint1_seed0"]


@pytest.mark.parametrize("strategy", ["vanilla", "cot"])
@pytest.mark.parametrize("level", [60, 70, 80, 90, 95])
@pytest.mark.parametrize("condition", ["hint0", "hint1", "hint3", "hint8"])
def test_every_level_hint_and_strategy_equals_the_authors_template(authors, strategy, level, condition):
    """prompts.json's full templates (checked there against create_prompt for all 40 combinations)."""
    g = authors["generation"]
    hint = bahaj.draw_hint(condition, 4033.6, random.Random(f"{level}{condition}"))
    key = f"{strategy}_{'no_hint' if condition == 'hint0' else 'with_hint'}"
    hint_text = g["MISLEADING_HINT"]["templates"]["named"].format(
        hint_prefix=g["HINT_PROMPTS"]["templates"]["active"][condition], hint_lower=hint.lower,
        hint_upper=hint.upper) if condition != "hint0" else ""
    expected = g["full_prompt_templates"][key].format(tail_pct=str((100 - level) / 2), confidence=str(level),
                                                      question=QUESTION, hint_text=hint_text)
    assert bahaj.generation_prompt(QUESTION, level, strategy, hint) == expected


def test_hint_draws_are_the_authors_and_seeded():
    """Bounds in [0, 2A] around A = |trunc(answer)|; sign and fraction lost; |answer| < 1 gives [0, 0]."""
    for answer in (23.0, -128.7, 4033.667, 0.4, -0.9):
        a = abs(int(answer))
        for k in range(50):
            lo, hi = bahaj.draw_hint_bounds(answer, bahaj.hint_rng(7, "q|90|hint1", k))
            assert 0 <= lo <= hi <= 2 * a and isinstance(lo, int)
    assert bahaj.draw_hint_bounds(0.4, random.Random(3)) == (0, 0)
    assert bahaj.draw_hint("hint8", 0.4, random.Random(3)).text == \
        "Hint: I vaguely remember the answer is the lower bound is: 0 and the upper bound is: 0"
    one = [bahaj.draw_hint_bounds(1000, bahaj.hint_rng(7, "q|90|hint1", k)) for k in range(5)]
    assert one == [bahaj.draw_hint_bounds(1000, bahaj.hint_rng(7, "q|90|hint1", k)) for k in range(5)]
    assert len(set(one)) > 1  # redrawn for every try
    assert one != [bahaj.draw_hint_bounds(1000, bahaj.hint_rng(8, "q|90|hint1", k)) for k in range(5)]
    with pytest.raises(ValueError, match="unknown hint condition 'hint2'"):
        bahaj.draw_hint("hint2", 1, random.Random(0))


def test_hint_record_is_what_is_stored():
    hint = bahaj.draw_hint("hint3", 23.0, random.Random(0))
    assert hint.record() == {"condition": "hint3", "lower": 2, "upper": 24}
    assert hint.text.startswith("Hint: The textbook shows that answer is the lower bound is: 2 ")


def test_refinement_prompts_equal_the_authors(authors):
    examples = authors["self_refinement"]["rendered_examples"]
    assert bahaj.refinement_prompt(QUESTION, [(REPLY, 60), (REPLY, 70), (REPLY, 70)], "mixed") == examples["mixed"]
    assert bahaj.refinement_prompt(QUESTION, [(REPLY, 60)] * 3, "single") == examples["single_60"]
    with pytest.raises(ValueError, match="unknown refinement setting"):
        bahaj.refinement_prompt(QUESTION, [], "both")


def test_candidate_line_flattens_the_raw_reply():
    assert bahaj.candidate_line("explaination: a\nlower_bound: 1\n```x```", 95) == \
        "- explaination: a|lower_bound: 1|x|confidence_level: 95%"


def test_candidate_draws():
    pool = list(range(5))
    single = bahaj.draw_candidates(pool, 50, "single", random.Random(1))
    assert len(single) == 50 and len(set(single)) < 50  # with replacement
    mixed = bahaj.draw_candidates(list(range(25)), 9, "mixed", random.Random(1))
    assert len(mixed) == 9 == len(set(mixed))  # without replacement
    assert bahaj.draw_candidates(pool, 9, "mixed", random.Random(1)) != [] and \
        len(bahaj.draw_candidates(pool, 9, "mixed", random.Random(1))) == 5
    assert bahaj.draw_candidates([], 3, "single", random.Random(1)) == []
