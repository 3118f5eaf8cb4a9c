"""Grouping by participant fields and personas (analysis/metrics/groups.py), checked against numbers worked out by
hand: Welch's difference and interval, the t interval of a group's mean over respondents, the per-group table
beside the humans and the between-group differences with the humans' beside each model's."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from analysis.metrics.generic import EMPTY_BIN, scale_binning
from analysis.metrics.groups import (NO_ANSWER, binned_comparison, group_differences, group_order, group_table,
                                     mean_ci, value_groups, welch_difference)


def test_welch_difference_by_hand():
    # a = 1, 2, 3: mean 2, s² 1; b = 4, 6: mean 5, s² 2 → d = −3, se² = 1/3 + 2/2 = 4/3,
    # ν = (4/3)² / ((1/3)²/2 + 1²/1) = (16/9) / (19/18) = 32/19
    w = welch_difference([1, 2, 3, np.nan], [4, 6])
    assert w["difference"] == pytest.approx(-3)
    assert w["se"] == pytest.approx(math.sqrt(4 / 3))
    assert w["df"] == pytest.approx(32 / 19)
    half = stats.t.ppf(0.975, 32 / 19) * math.sqrt(4 / 3)
    assert half == pytest.approx(5.977, abs=0.001)  # t_{0.975, 1.684} ≈ 5.176, × se 1.1547
    assert (w["ci_low"], w["ci_high"]) == (pytest.approx(-3 - half), pytest.approx(-3 + half))
    # the same as scipy's Welch test says: t = d / se, its df
    test = stats.ttest_ind([1, 2, 3], [4, 6], equal_var=False)
    assert test.statistic == pytest.approx(w["difference"] / w["se"])


def test_welch_difference_edge_cases():
    one = welch_difference([5], [1, 2])
    assert one["difference"] == 3.5 and math.isnan(one["se"]) and math.isnan(one["ci_low"])
    flat = welch_difference([2, 2], [1, 1, 1])
    assert flat == {"difference": 1.0, "se": 0.0, "df": 3.0, "ci_low": 1.0, "ci_high": 1.0}
    assert math.isnan(welch_difference([], [1, 2])["difference"])


def test_mean_ci_by_hand():
    m, s, lo, hi = mean_ci([1, 2, 3])
    # mean 2, s 1, t_{0.975, 2} = 4.302652729911275 → 2 ± 4.3027/√3
    assert (m, s) == (2, 1)
    assert lo == pytest.approx(2 - 4.302652729911275 / math.sqrt(3))
    assert hi == pytest.approx(2 + 4.302652729911275 / math.sqrt(3))
    single = mean_ci([7])
    assert single[0] == 7 and math.isnan(single[2])


def grouped_answers() -> pd.DataFrame:
    """Two answers per respondent. Humans: f = P1 (4, 4), P2 (6, 6); m = P3 (2, 2), P4 (3, 3); P5 left the
    field empty. The model: personas A, B are f (5, 5 and 7, 7); C, D are m (1, 1 and 2, NaN)."""
    rows = []
    for agent, unit, group, values in [("human", "p1", "f", (4, 4)), ("human", "p2", "f", (6, 6)),
                                       ("human", "p3", "m", (2, 2)), ("human", "p4", "m", (3, 3)),
                                       ("human", "p5", NO_ANSWER, (1, 1)),
                                       ("gpt", "A", "f", (5, 5)), ("gpt", "B", "f", (7, 7)),
                                       ("gpt", "C", "m", (1, 1)), ("gpt", "D", "m", (2, np.nan))]:
        rows += [{"agent": agent, "unit": unit, "group": group, "q": v} for v in values]
    return pd.DataFrame(rows)


def test_group_table_each_agent_beside_the_humans():
    table = group_table(grouped_answers(), ["f", "m", NO_ANSWER], binned_comparison(scale_binning(1, 7)))
    assert list(table["agent"]) == ["human"] * 3 + ["gpt"] * 2  # humans first; the model has no "(no answer)"
    t = table.set_index(["agent", "group"])
    hf = t.loc[("human", "f")]
    assert (hf["answers"], hf["units"], hf["mean"], hf["median"]) == (4, 2, 5, 5)
    assert hf["sd"] == pytest.approx(math.sqrt(2))
    half = stats.t.ppf(0.975, 1) * math.sqrt(2) / math.sqrt(2)  # 12.706
    assert (hf["ci_low"], hf["ci_high"]) == (pytest.approx(5 - half), pytest.approx(5 + half))
    assert math.isnan(hf["vs_humans"]) and math.isnan(hf["w1"])
    gf = t.loc[("gpt", "f")]
    assert gf["mean"] == 6 and gf["vs_humans"] == pytest.approx(1)
    # model shares 5: ½, 7: ½; humans' 4: ½, 6: ½ → W1 = Σ|F_H − F_P| = ½ (at 4) + ½ (at 6) = 1, PA = 0,
    # KL(P ‖ H) = ½·ln(½/ε) + ½·ln(½/ε)
    assert gf["w1"] == pytest.approx(1) and gf["pa"] == 0 and gf["percent_pa"] == 0
    assert gf["kl"] == pytest.approx(math.log(0.5 / EMPTY_BIN))
    gm = t.loc[("gpt", "m")]  # D answered 2 and an unreadable answer: D's mean is 2
    assert (gm["answers"], gm["unparsed"], gm["mean"]) == (3, 1, 1.5)
    assert gm["vs_humans"] == pytest.approx(1.5 - 2.5)


def test_group_differences_humans_beside_the_model():
    diffs = group_differences(grouped_answers(), ["f", "m", NO_ANSWER])
    assert list(zip(diffs["agent"], diffs["group_a"], diffs["group_b"])) == [("human", "f", "m"), ("gpt", "f", "m")]
    h, g = diffs.iloc[0], diffs.iloc[1]
    # humans: f 4, 6 (mean 5, s² 2); m 2, 3 (mean 2.5, s² ½) → d = 2.5, se² = 2/2 + ½/2 = 1.25,
    # ν = 1.25² / ((1)²/1 + (¼)²/1) = 1.5625 / 1.0625
    assert h["difference"] == pytest.approx(2.5) and h["se"] == pytest.approx(math.sqrt(1.25))
    assert h["df"] == pytest.approx(1.5625 / 1.0625)
    half = stats.t.ppf(0.975, 1.5625 / 1.0625) * math.sqrt(1.25)
    assert (h["ci_low"], h["ci_high"]) == (pytest.approx(2.5 - half), pytest.approx(2.5 + half))
    assert math.isnan(h["humans_difference"])
    # the model: f 5, 7 (mean 6); m 1, 2 (mean 1.5) → d = 4.5, the same se; the humans' 2.5 beside, gap 2
    assert g["difference"] == pytest.approx(4.5) and g["se"] == pytest.approx(math.sqrt(1.25))
    assert g["humans_difference"] == pytest.approx(2.5) and g["gap"] == pytest.approx(2)
    assert (g["units_a"], g["units_b"], g["mean_a"], g["mean_b"]) == (2, 2, 6, 1.5)


def test_value_groups_and_their_order():
    numbers = pd.Series([20, 30, 40, 50, 60, 70, 80, 90, None], dtype=object)
    groups = value_groups(numbers)
    assert groups.iloc[-1] == NO_ANSWER and groups.iloc[0] == "19.999–37.5" and groups.nunique() == 5
    small = value_groups(pd.Series(["yes", "no", None, ""]))
    assert list(small) == ["yes", "no", NO_ANSWER, NO_ANSWER]
    assert group_order(["z", "m", NO_ANSWER, "f", "a"], declared=["f", "m"]) == ["f", "m", "a", "z", NO_ANSWER]


def test_missing_columns_are_named():
    with pytest.raises(ValueError, match="missing unit"):
        group_table(pd.DataFrame({"agent": [], "group": [], "q": []}))
