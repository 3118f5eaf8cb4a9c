"""Tang et al. RQ2 consistency metrics: hand-computed cases, perfect responders, the random baseline, paired tests."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.metrics.answers import AnswersError
from families.tang.metrics.consistency import (
    CONFIDENCES, LETTERS, compare_agents, compare_conditions, consistency_scores, expected_random, paired_test,
    random_baseline, truth_choice, unit_scores,
)
from families.tang.design_rq2 import PAPER_NARROW, generate

WIDE = [150, 60, 101, 140, 22, 95, 130, 88, 177, 45, 99, 110, 70, 135, 100, 65, 180, 118, 84, 102]
# Each interval's probability under the N(μ, σ) the points come from, at confidence c.
THEORY = {"below_low": lambda c: (1 - c) / 2, "above_low": lambda c: (1 + c) / 2, "between": lambda c: c,
          "outside": lambda c: 1 - c, "below_high": lambda c: (1 + c) / 2, "above_high": lambda c: (1 - c) / 2}


def items_frame(numbers=(PAPER_NARROW, WIDE)) -> pd.DataFrame:
    return pd.DataFrame([f["extra"] for f in generate(numbers=list(numbers))])


PAPER_ITEMS = items_frame()


def answered(items: pd.DataFrame, agent: str, letters) -> pd.DataFrame:
    return items.assign(agent=agent, choice=list(letters))


def symmetric_letters(items: pd.DataFrame) -> list[str]:
    """A responder that maps the interval's probability p to a letter symmetrically (p and 1 − p get
    complementary letters) and monotonically."""
    p = np.array([THEORY[k](c) for k, c in zip(items["interval"], items["confidence"])])
    n = items["choices"].to_numpy()
    ranks = np.round((1 - p) * (n - 1)).astype(int)
    return [LETTERS[r] for r in ranks]


def one_set(rows) -> pd.DataFrame:
    """One agent, scenario 'height', 3 choices, narrow numbers; rows (confidence, interval, choice, truth)."""
    return pd.DataFrame([{"agent": "m", "scenario": "height", "choices": 3, "numbers": "narrow", "confidence": c,
                          "interval": k, "choice": a, "truth_choice": t} for c, k, a, t in rows])


def test_truth_choice_ranges():
    shares = [1.0, 0.93, 0.92, 0.62, 0.61, 0.42, 0.41, 0.14, 0.13, 0.0]
    assert list(truth_choice(shares, 5)) == list("AABBCCDDEE")
    assert list(truth_choice([1.0, 0.62, 0.61, 0.41, 0.40, 0.0], 3)) == list("AABBCC")
    with pytest.raises(AnswersError):
        truth_choice([0.5], 4)


def test_hand_computed_set():
    rows = [(0.05, "below_low", "A", "B"), (0.05, "above_low", "C", "B"), (0.05, "between", "B", "C"),
            (0.05, "outside", "B", "A"), (0.05, "below_high", "A", "B"), (0.05, "above_high", "A", "B")]
    # below_low over the 5 points: answers A A B B C (rank 0 0 1 1 2, never more probable: monotone)
    # ground truth B B B C C (steps 0 0 + 0; the answers' steps 0 + 0 +: 1 of 4 pairs agree)
    for c, a, t in zip(CONFIDENCES[1:], "ABBC", "BBCC"):
        rows.append((c, "below_low", a, t))
    units = unit_scores(one_set(rows))
    scores = consistency_scores(one_set(rows)).loc["m"]
    # pair-wise at 0.05: A+C complementary, B+B complementary, A+A not → 2 of 3
    assert scores.loc["pairwise", "score"] == pytest.approx(200 / 3) and scores.loc["pairwise", "n"] == 3
    assert scores.loc["monotonicity", "score"] == 100 and scores.loc["monotonicity", "n"] == 1
    assert scores.loc["empirical_monotonicity", "score"] == 25 and scores.loc["empirical_monotonicity", "n"] == 4
    # empirical: 10 prompts, correct ones: 0.5/below_low (B), 0.95/below_low (C) → 2 of 10
    assert scores.loc["empirical", "score"] == 20 and scores.loc["empirical", "n"] == 10
    assert set(units["metric"]) == {"pairwise", "monotonicity", "empirical", "empirical_monotonicity"}
    # the same answers for above_low (probability should grow with c) are not monotone
    flipped = one_set([(c, "above_low", a, "A") for c, a in zip(CONFIDENCES, "AABBC")])
    assert consistency_scores(flipped).loc[("m", "monotonicity"), "score"] == 0


def test_unparsed_answer_fails_its_units_and_missing_prompts_are_not_scored():
    rows = [(0.05, "below_low", "C", "C"), (0.05, "above_low", np.nan, "A"), (0.05, "between", "B", "B")]
    scores = consistency_scores(one_set(rows)).loc["m"]
    assert scores.loc["pairwise", "n"] == 1 and scores.loc["pairwise", "score"] == 0  # between has no partner
    assert scores.loc["empirical", "n"] == 3 and scores.loc["empirical", "score"] == pytest.approx(200 / 3)
    assert "monotonicity" not in scores.index
    # a letter outside the item's choice set (D with 3 choices) counts as unparsed
    assert consistency_scores(one_set([(0.05, "below_low", "D", "C")])).loc[("m", "empirical"), "score"] == 0


def test_full_design_unit_counts_and_perfect_responders():
    items = items_frame()
    truth = answered(items, "truth", items["truth_choice"])
    symmetric = answered(items, "symmetric", symmetric_letters(items))
    scores = consistency_scores(pd.concat([truth, symmetric]))
    assert scores.xs("truth")["n"].to_dict() == {"empirical": 360, "empirical_monotonicity": 288,
                                                 "monotonicity": 72, "pairwise": 180}
    assert scores.loc[("truth", "empirical"), "score"] == 100
    assert scores.loc[("truth", "empirical_monotonicity"), "score"] == 100
    assert scores.loc[("symmetric", "pairwise"), "score"] == 100
    assert scores.loc[("symmetric", "monotonicity"), "score"] == 100
    by = consistency_scores(truth, by=["scenario", "choices"])
    assert by.xs("empirical", level="metric")["n"].tolist() == [60] * 6
    # a responder that always gives the same letter is perfectly monotone and nothing else is guaranteed
    constant = consistency_scores(answered(items, "c", ["B"] * len(items))).loc["c"]
    assert constant.loc["monotonicity", "score"] == 100 and constant.loc["empirical_monotonicity", "score"] < 100


@settings(max_examples=15, deadline=None)
@given(narrow=st.lists(st.integers(60, 140), min_size=20, max_size=20),
       wide=st.lists(st.integers(-20, 220), min_size=20, max_size=20))
def test_truth_responder_is_empirically_perfect_for_any_sample(narrow, wide):
    items = items_frame((narrow, wide))
    scores = consistency_scores(answered(items, "t", items["truth_choice"])).loc["t"]
    assert scores.loc["empirical", "score"] == 100 and scores.loc["empirical_monotonicity", "score"] == 100


@settings(max_examples=10, deadline=None)
@given(st.lists(st.sampled_from(list("ABCDE") + [None]), min_size=360, max_size=360), st.randoms())
def test_scores_bounded_and_row_order_free(letters, rnd):
    items = PAPER_ITEMS
    df = answered(items, "x", letters)
    a = consistency_scores(df)
    shuffled = df.sample(frac=1, random_state=rnd.randint(0, 2**31))
    pd.testing.assert_frame_equal(a, consistency_scores(shuffled))
    assert ((a["score"] >= 0) & (a["score"] <= 100)).all()


def test_random_baseline_near_the_analytic_expectation():
    items = items_frame()
    base = random_baseline(items, draws=10, seed=7).loc["random"]
    assert base["n"].to_dict() == {"empirical": 360, "empirical_monotonicity": 288, "monotonicity": 72, "pairwise": 180}
    mean_one_over_n = 100 * (1 / 5 + 1 / 3) / 2
    assert base.loc["empirical", "score"] == pytest.approx(mean_one_over_n, abs=3)
    assert base.loc["pairwise", "score"] == pytest.approx(mean_one_over_n, abs=3.5)
    mono = 100 * (expected_random(5, "monotonicity") + expected_random(3, "monotonicity")) / 2
    assert mono == pytest.approx(100 * (126 / 3125 + 21 / 243) / 2)
    assert base.loc["monotonicity", "score"] == pytest.approx(mono, abs=3.5)
    units = unit_scores(answered(items, "t", items["truth_choice"]))
    em = units[units["metric"] == "empirical_monotonicity"]
    # expected per unit from its ground-truth step: 1/n when constant, (n − 1)/2n otherwise
    frame = items.set_index(["scenario", "choices", "numbers", "interval", "confidence"]).sort_index()
    steps = frame.groupby(level=[0, 1, 2, 3])["truth_choice"].apply(lambda s: [np.sign(ord(b) - ord(a)) for a, b in zip(s, s[1:])])
    expected = np.mean([expected_random(k[1], "empirical_monotonicity", step) for k, v in steps.items() for step in v])
    assert len(em) == 288 and base.loc["empirical_monotonicity", "score"] == pytest.approx(100 * expected, abs=3.5)
    # seeded: the same seed gives the same baseline, another seed another one
    pd.testing.assert_frame_equal(base, random_baseline(items, draws=10, seed=7).loc["random"])
    assert not random_baseline(items, draws=10, seed=8).loc["random"]["score"].equals(base["score"])
    assert (random_baseline(items, by="choices").xs("random")["n"] == [180, 144, 36, 90] * 2).all()


def test_paired_test_by_hand():
    # a = 1 1 1 0, b = 0 1 0 0: differences 1 0 1 0 (mean .5, sd .57735) → t = .5 / (.57735/2) = 1.7321, df 3
    # d = (.75 − .25) / √((.25 + .25)/2) = 1
    r = paired_test([1, 1, 1, 0], [0, 1, 0, 0])
    assert r["t"] == pytest.approx(math.sqrt(3)) and r["df"] == 3 and r["d"] == pytest.approx(1.0)
    assert r["mean_a"] == 75 and r["mean_b"] == 25 and 0.1 < r["p"] < 0.2
    assert math.isnan(paired_test([1], [0])["t"])


def test_cohens_d_is_d_av_the_mean_difference_over_the_average_sd():
    # a = 1 0 1 1 (mean .75, sd .5), b = 0 0 0 0 (mean 0, sd 0): d_av = .75 / ((.5 + 0)/2) = 3.0
    # (the root-mean-square spread would give .75 / √(.25/2) = 2.1213)
    r = paired_test([1, 0, 1, 1], [0, 0, 0, 0])
    assert r["d"] == pytest.approx(3.0)
    # a = 1 1 1 0 0 0 (sd .5477), b = 1 1 1 1 1 0 (sd .4082): d_av = (.5 − .8333) / .47796 = −.69737
    r = paired_test([1, 1, 1, 0, 0, 0], [1, 1, 1, 1, 1, 0])
    assert r["d"] == pytest.approx(-0.69737, abs=1e-5)
    assert math.isnan(paired_test([1, 1], [1, 1])["d"])


def test_agent_and_condition_comparisons_have_the_papers_degrees_of_freedom():
    items = items_frame()
    standard = answered(items, "standard", items["truth_choice"])
    cot = answered(items, "cot", symmetric_letters(items))
    both = pd.concat([standard, cot], ignore_index=True)
    per_scenario = compare_agents(both, "standard", "cot")
    assert per_scenario.loc[("height", "empirical"), "n"] == 120
    assert per_scenario.loc[("height", "empirical"), "mean_a"] == 100
    assert per_scenario.loc[("height", "empirical"), "t"] > 0
    # 5 vs 3 choices, the two prompts pooled: t(179), t(359), t(287) as in the paper (and 72 → t(71))
    choices = compare_conditions(both, "choices")
    assert choices["df"].to_dict() == {"empirical": 359, "empirical_monotonicity": 287, "monotonicity": 71,
                                       "pairwise": 179}
    assert (choices["levels"] == "5 vs 3").all()
    numbers = compare_conditions(both, "numbers", agents=["cot"])
    assert numbers.loc["empirical", "n"] == 180 and (numbers["levels"] == "narrow vs wide").all()
    with pytest.raises(AnswersError, match="nobody"):
        compare_agents(both, "standard", "nobody")


def test_bad_tables():
    with pytest.raises(AnswersError, match="choice"):
        unit_scores(pd.DataFrame({"agent": ["a"]}))
    df = one_set([(0.05, "below_low", "A", "A")])
    with pytest.raises(AnswersError, match="ground truth"):
        unit_scores(df.drop(columns="truth_choice"))
    with pytest.raises(AnswersError, match="more than one"):
        unit_scores(pd.concat([df, df]))
    with pytest.raises(AnswersError, match="interval"):
        unit_scores(df.assign(interval="inside"))
    # the share (e.g. Item.ground_truth) works instead of the letter
    assert consistency_scores(df.drop(columns="truth_choice").assign(ground_truth=0.7)).loc[("m", "empirical"), "score"] == 100
