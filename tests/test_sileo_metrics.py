"""Sileo & Moens metrics (families/sileo/metrics.py), checked against hand computations."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from families.sileo.metrics import (CHANCE, accuracy, annotator_agreement, fleiss_kappa, score_accuracy,
                                    table1, wep_distribution, wilson_interval)


def answers(rows):
    return pd.DataFrame(rows, columns=["agent", "respondent", "item_id", "dataset", "choice", "valid_key"])


def test_wilson_interval_by_hand():
    # k = 8, n = 10, z = 1.959964: p̂ = .8, centre = .8 + 3.841459/20 = .992073, half = 1.959964·√(.016 +
    # 3.841459/400) = 1.959964·.160012 = .313618, denominator 1.384146 → (.490162, .943318)
    low, high = wilson_interval(8, 10)
    assert (low, high) == pytest.approx((0.490162, 0.943318), abs=1e-6)
    assert wilson_interval(10, 10)[1] == pytest.approx(1.0) and wilson_interval(0, 10)[0] == pytest.approx(0.0)
    assert all(math.isnan(x) for x in wilson_interval(0, 0))


def test_accuracy_counts_unreadable_answers_as_wrong():
    table = accuracy(answers([
        ("m", "r1", 1, "wep-unli", "A", "A"), ("m", "r1", 2, "wep-unli", "B", "A"),
        ("m", "r1", 3, "wep-unli", "", "B"), ("m", "r1", 4, "wep-unli", None, "B"),
        ("m", "r1", 5, "wep-reasoning-1hop", "B", "B"),
    ])).set_index("dataset")
    assert table.loc["wep-unli", ["n", "correct", "unreadable"]].tolist() == [4, 1, 2]
    assert table.loc["wep-unli", "accuracy"] == 25.0
    assert table.loc["wep-reasoning-1hop", "accuracy"] == 100.0
    low, high = wilson_interval(1, 4)
    assert table.loc["wep-unli", "ci_low"] == pytest.approx(100 * low)


def test_fleiss_kappa_wikipedia_example():
    # Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories → P̄ = .378, P_e = .213, κ = .210
    counts = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                       [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_kappa(counts) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_kappa_two_annotators_by_hand():
    # 4 items, 2 raters, categories A/B: agree on 3 (A,A), (B,B), (A,A), disagree on 1 → P̄ = 3/4;
    # p_A = 5/8, p_B = 3/8, P_e = 25/64 + 9/64 = 34/64; κ = (48/64 − 34/64) / (30/64) = 14/30
    assert fleiss_kappa(np.array([[2, 0], [0, 2], [2, 0], [1, 1]])) == pytest.approx(14 / 30)
    assert math.isnan(fleiss_kappa(np.array([[1, 0]])))  # a single rating: no agreement to measure
    humans = answers([
        ("Human", "h1", 1, "wep-unli", "A", "A"), ("Human", "h2", 1, "wep-unli", "A", "A"),
        ("Human", "h1", 2, "wep-unli", "B", "B"), ("Human", "h2", 2, "wep-unli", "B", "B"),
        ("Human", "h1", 3, "wep-unli", "A", "A"), ("Human", "h2", 3, "wep-unli", "A", "A"),
        ("Human", "h1", 4, "wep-unli", "A", "B"), ("Human", "h2", 4, "wep-unli", "B", "B"),
        ("Human", "h1", 5, "wep-unli", "A", "B"),  # one rating only: left out of κ
    ])
    agreement = annotator_agreement(humans).iloc[0]
    assert agreement["kappa"] == pytest.approx(14 / 30) and agreement["items"] == 4 and agreement["annotators"] == 2


def test_wep_distribution():
    items = pd.DataFrame({"dataset": ["d1"] * 4 + ["d2"], "valid_wep": ["likely", "likely", "certain", "we doubt",
                                                                       "impossible"]})
    table = wep_distribution(items)
    d1 = table[table["dataset"] == "d1"]
    assert d1["wep"].tolist() == ["likely", "certain", "we doubt"] and d1["frequency"].tolist() == [50, 25, 25]
    assert table[table["dataset"] == "d2"]["frequency"].tolist() == [100]


def test_table1_shape():
    models = accuracy(answers([("gemma (greedy)", "r", 1, "wep-unli", "A", "A"),
                               ("gemma (greedy)", "r", 2, "wep-unli", "A", "B")]))
    humans = accuracy(answers([("Human", "h1", 1, "wep-unli", "A", "A")]).assign(agent="Human"))
    table = table1(models, humans, ["wep-reasoning-1hop", "wep-unli"])
    assert table["agent"].tolist() == ["Chance", "Human baseline", "gemma (greedy)"]
    assert table.columns.tolist() == ["agent", "WEP-Reasoning (1 hop)", "WEP-Reasoning (1 hop) CI", "WEP-UNLI",
                                      "WEP-UNLI CI"]
    assert table["WEP-UNLI"].tolist() == [CHANCE, 100.0, 50.0]
    assert math.isnan(table.loc[2, "WEP-Reasoning (1 hop)"])
    assert table.loc[2, "WEP-UNLI CI"].endswith("(n=2)")


def test_score_accuracy():
    scored = pd.DataFrame({"agent": ["g"] * 2, "dataset": ["wep-unli"] * 2, "valid_key": ["A", "B"],
                           "choice_raw": ["A", "A"], "choice_normalised": ["A", "B"], "choice_calibrated": ["B", ""]})
    table = score_accuracy(scored, ("raw", "normalised", "calibrated"), "normalised").set_index("score")
    assert table["accuracy"].to_dict() == {"calibrated": 0.0, "normalised": 100.0, "raw": 50.0}
    assert table["decides"].to_dict() == {"calibrated": False, "normalised": True, "raw": False}
