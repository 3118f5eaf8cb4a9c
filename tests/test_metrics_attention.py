"""The Spearman attention filter (Belem App. A; SPEC §6)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import spearmanr

from families.belem.metrics.attention import (attention_filter, included_respondents, keep_included, label_ranking,
                                spearman_by_respondent)

RANKING = pd.Series({"a": 3.0, "b": 2.0, "c": 1.0})  # a is read as the most certain


def answers(per_person: dict[str, list[tuple[str, float]]], agent: str = "human") -> pd.DataFrame:
    rows = [(p, agent, label, float(v), "") for p, pairs in per_person.items() for label, v in pairs]
    return pd.DataFrame(rows, columns=["respondent", "agent", "label", "value", "truth"])


def test_rho_by_hand_and_threshold():
    df = answers({
        "good": [("a", 90), ("b", 50), ("c", 10)],      # same order as the ranking: ρ = 1
        "reversed": [("a", 10), ("b", 50), ("c", 90)],  # ρ = −1
        "flat": [("a", 50), ("b", 50), ("c", 50)],      # constant: ρ undefined → excluded
        # x ranks (1,4,5,2,3) against label ranks (1,2,3,4,5): Σd² = 0+4+4+4+4 = 16,
        # ρ = 1 − 6·16/(5·24) = 0.2 exactly → not > 0.2 → excluded (SPEC: keep ρ > 0.2)
        "edge": [("e1", 10), ("e2", 40), ("e3", 50), ("e4", 20), ("e5", 30)],
    })
    ranking = pd.concat([RANKING, pd.Series({f"e{i}": float(i) for i in range(1, 6)})])
    table = attention_filter(df, ranking)
    assert table.loc["good", "rho"] == pytest.approx(1.0)
    assert table.loc["reversed", "rho"] == pytest.approx(-1.0)
    assert np.isnan(table.loc["flat", "rho"])
    assert table.loc["edge", "rho"] == pytest.approx(0.2)
    assert dict(table["included"]) == {"edge": False, "flat": False, "good": True, "reversed": False}
    assert list(included_respondents(table)) == ["good"]
    assert table.loc["good", "n_answers"] == 3
    # A lower threshold keeps the edge case.
    assert attention_filter(df, ranking, threshold=0.1).loc["edge", "included"]


def test_controls_count_and_ties_are_averaged():
    # Ranking control > a > b. Answers: control 100, a 80, a 80 (two answers to one label), b 10.
    # x ranks: 4, 2.5, 2.5, 1; label ranks: 4, 2.5, 2.5, 1 → ρ = 1.
    ranking = pd.Series({"control": 99.0, "a": 60.0, "b": 20.0})
    df = answers({"p": [("control", 100), ("a", 80), ("a", 80), ("b", 10)]})
    assert attention_filter(df, ranking).loc["p", "rho"] == pytest.approx(1.0)
    # The same answers without the control give ρ = 1 too, but a swapped control lowers it:
    df2 = answers({"p": [("control", 0), ("a", 80), ("a", 80), ("b", 10)]})
    expected = spearmanr([0, 80, 80, 10], [99, 60, 60, 20]).statistic
    assert attention_filter(df2, ranking).loc["p", "rho"] == pytest.approx(expected)


def test_ranking_is_over_all_participants_before_filtering():
    # Means: a = (90 + 10)/2 = 50, b = (50 + 50)/2 = 50 → tie, c = (10 + 90)/2 = 50. Add a third person
    # to break ties: a = (90+10+80)/3 = 60, b = (50+50+50)/3 = 50, c = (10+90+20)/3 = 40.
    df = answers({"good": [("a", 90), ("b", 50), ("c", 10)], "bad": [("a", 10), ("b", 50), ("c", 90)],
                  "ok": [("a", 80), ("b", 50), ("c", 20)]})
    ranking = label_ranking(df)
    assert list(ranking.index) == ["a", "b", "c"]
    assert list(ranking["mean"]) == pytest.approx([60, 50, 40])
    assert list(ranking["rank"]) == [3.0, 2.0, 1.0]
    table = attention_filter(df)  # ranking computed from df itself
    assert list(table["included"]) == [False, True, True]  # bad, good, ok (sorted ids)


def test_verifiable_study_uses_the_companion_ranking_and_models_are_ignored():
    nv = answers({"n1": [("a", 90), ("b", 50), ("c", 10)]})
    # In the verifiable study people rate c highest, which its own ranking would reward.
    v = pd.concat([answers({"v1": [("a", 10), ("b", 50), ("c", 90)], "v2": [("a", 20), ("b", 50), ("c", 95)]}),
                   answers({"run": [("a", 0), ("b", 0), ("c", 100)]}, agent="gpt")])
    companion = label_ranking(nv)
    table = attention_filter(v, companion)
    assert list(table.index) == ["v1", "v2"]  # the model run is not a participant
    assert not table["included"].any()
    assert attention_filter(v).loc[["v1", "v2"], "included"].all()  # its own ranking would keep them
    kept = keep_included(v, table)
    assert set(kept["respondent"]) == {"run"}  # humans dropped, model rows untouched


@settings(max_examples=60)
@given(st.lists(st.lists(st.tuples(st.sampled_from("abcdefg"), st.integers(0, 20)), min_size=2, max_size=15),
                min_size=1, max_size=6))
def test_vectorised_rho_equals_scipy_per_participant(people):
    ranking = pd.Series({c: float(i) for i, c in enumerate("gfedcba")})
    df = answers({f"p{i}": [(label, 5 * v) for label, v in pairs] for i, pairs in enumerate(people)})
    table = spearman_by_respondent(df, ranking)
    for i, pairs in enumerate(people):
        x = [5 * v for _, v in pairs]
        y = [ranking[label] for label, _ in pairs]
        got = table.loc[f"p{i}", "rho"]
        if len(set(x)) < 2 or len(set(y)) < 2:
            assert np.isnan(got)
        else:
            assert got == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
