"""Knowledge-bias gap (true − false) with 95% CIs, and ΔPA (SPEC §6)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from families.belem.metrics.knowledge_bias import delta_pa, knowledge_bias_table, paired_gap, truth_gap, welch_gap


def rows(agent, data):
    """data: (respondent, label, truth, value)."""
    df = pd.DataFrame(data, columns=["respondent", "label", "truth", "value"])
    df["agent"] = agent
    df["value"] = df["value"].astype(float)
    return df


# Each participant sees one true and one false statement per expression:
#   likely:   p1 80/60 (d=20), p2 70/70 (d=0),  p3 90/60 (d=30) → mean 16.667, sd 15.275, n 3
#   unlikely: p1 30/20 (d=10), p2 40/10 (d=30), p3 20/20 (d=0)  → mean 13.333
#   per participant mean d: p1 15, p2 15, p3 15 → overall 15 with sd 0 → CI [15, 15]
HUMANS = rows("human", [
    ("p1", "likely", "true", 80), ("p1", "likely", "false", 60), ("p1", "unlikely", "true", 30), ("p1", "unlikely", "false", 20),
    ("p2", "likely", "true", 70), ("p2", "likely", "false", 70), ("p2", "unlikely", "true", 40), ("p2", "unlikely", "false", 10),
    ("p3", "likely", "true", 90), ("p3", "likely", "false", 60), ("p3", "unlikely", "true", 20), ("p3", "unlikely", "false", 20),
    ("p3", "control", "true", 100), ("p3", "control", "false", 0),  # controls are not an expression
])


def test_paired_gap_by_hand():
    table = paired_gap(HUMANS)
    likely = table.loc["likely"]
    assert likely["mean_true"] == pytest.approx(80) and likely["mean_false"] == pytest.approx(190 / 3)
    assert likely["gap"] == pytest.approx(50 / 3)
    # half-width t(.975, 2) · sd/√n = 4.302653 · 15.275252 / 1.732051 = 37.9458
    half = 4.302652729749464 * np.std([20, 0, 30], ddof=1) / np.sqrt(3)
    assert half == pytest.approx(37.9458, abs=1e-4)
    assert likely["ci_low"] == pytest.approx(50 / 3 - half) and likely["ci_high"] == pytest.approx(50 / 3 + half)
    ci = stats.ttest_1samp([20, 0, 30], 0).confidence_interval(0.95)
    assert (likely["ci_low"], likely["ci_high"]) == pytest.approx((ci.low, ci.high))
    overall = table.loc["overall"]
    assert overall["gap"] == pytest.approx(15) and overall["ci_low"] == pytest.approx(15) and overall["ci_high"] == pytest.approx(15)
    assert overall["n"] == 3 and overall["method"] == "paired"
    assert "control" not in table.index


def test_unpaired_participant_cells_are_left_out():
    # p4 only answered a true statement for "likely": no pair, no contribution.
    extra = rows("human", [("p4", "likely", "true", 0)])
    assert paired_gap(pd.concat([HUMANS, extra])).loc["likely", "n"] == 3


def test_welch_gap_matches_scipy():
    # true: 80, 90 (mean 85); false: 60, 60, 70 (mean 63.333) → gap 21.667
    model = rows("gpt", [("run", "likely", "true", 80), ("run", "likely", "true", 90),
                         ("run", "likely", "false", 60), ("run", "likely", "false", 60), ("run", "likely", "false", 70)])
    table = welch_gap(model)
    assert table.loc["likely", "gap"] == pytest.approx(65 / 3)
    ci = stats.ttest_ind([80, 90], [60, 60, 70], equal_var=False).confidence_interval(0.95)
    assert (table.loc["likely", "ci_low"], table.loc["likely", "ci_high"]) == pytest.approx((ci.low, ci.high))
    assert table.loc["overall", "gap"] == pytest.approx(65 / 3)  # one expression: overall = it
    assert table.loc["likely", "method"] == "welch" and table.loc["likely", "n"] == 5


def test_constant_model_has_a_point_interval():
    model = rows("gpt", [("r", "likely", "true", 80)] * 3 + [("r", "likely", "false", 60)] * 3)
    t = welch_gap(model).loc["likely"]
    assert (t["gap"], t["ci_low"], t["ci_high"]) == (20, 20, 20)


def test_table_uses_paired_for_humans_and_welch_for_models():
    model = rows("gpt", [("run", "likely", "true", 80), ("run", "likely", "true", 90),
                         ("run", "likely", "false", 60), ("run", "likely", "false", 70)])
    table = knowledge_bias_table(pd.concat([HUMANS, model]))
    assert table.loc[("human", "overall"), "method"] == "paired"
    assert table.loc[("gpt", "likely"), "method"] == "welch"
    assert table.loc[("gpt", "likely"), "gap"] == pytest.approx(20)
    with pytest.raises(ValueError, match="paired.*welch"):
        truth_gap(HUMANS, "bootstrap")


def test_answers_without_truth_or_value_are_ignored():
    nv = rows("gpt", [("r", "likely", "", 50), ("r", "likely", "true", np.nan)])
    assert welch_gap(nv).empty and paired_gap(nv).empty


def test_delta_pa():
    # Belem Table 2: Human Individual 16.7 on V vs 17.6 on NV → −0.9.
    assert delta_pa(16.7, 17.6) == pytest.approx(-0.9)
    s = delta_pa(pd.Series({"a": 15.3, "b": 22.1}), pd.Series({"a": 19.7, "b": 24.4}))
    assert list(s) == pytest.approx([-4.4, -2.3])
