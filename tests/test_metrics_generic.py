"""The generic section's metrics (analysis/metrics/generic.py), checked against numbers worked out by hand."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wasserstein_distance

from analysis.metrics.answers import AnswersError
from analysis.metrics.generic import (EMPTY_BIN, answer_binning, choice_table, count_table, histogram, interval_table,
                                      js_distance, kl_divergence, majority_agreement, majority_options,
                                      option_shares, scale_binning, scale_histograms, scale_table, wasserstein)


def frame(rows, columns):
    return pd.DataFrame(rows, columns=columns)


def test_scale_points_are_the_bins_nearest_point_ties_up():
    b = scale_binning(1, 5, 1)
    assert list(b.centres) == [1, 2, 3, 4, 5] and not b.answer_bins
    assert list(b.index([1, 2.4, 2.5, 5, 0, 6, np.nan])) == [0, 1, 2, 4, -1, -1, -1]
    half = scale_binning(0, 1, 0.25)
    assert list(half.index([0.125, 0.1, 1.0])) == [1, 0, 4]


def test_the_0_100_families_use_belems_21_bins():
    b = scale_binning(0, 100, 5)
    assert b.answer_bins and len(b.centres) == 21 and scale_binning(0, 100, 1).answer_bins
    assert list(b.index([2.5, 97.5, 100, 2.4, 101, np.nan])) == [1, 20, 20, 0, -1, -1]
    assert not scale_binning(0, 10, 1).answer_bins
    with pytest.raises(ValueError):
        scale_binning(5, 5, 1)


def test_histogram_shares_and_count():
    shares, n = histogram([1, 2, 2, 3, np.nan, 9], scale_binning(1, 5))
    assert n == 4 and shares.tolist() == [0.25, 0.5, 0.25, 0, 0]


def test_scale_table_by_hand():
    # humans 1, 2, 2, 3 → P = (.25, .5, .25, 0, 0); model 2, 2, 3, 3 (+ one unreadable) → H = (0, .5, .5, 0, 0)
    df = frame([("human", v) for v in (1, 2, 2, 3)] + [("m", v) for v in (2, 2, 3, 3, np.nan)], ["agent", "value"])
    table = scale_table(df, scale_binning(1, 5)).set_index("agent")
    assert list(table.index) == ["human", "m"]
    m = table.loc["m"]
    assert (m["answers"], m["unparsed"], m["mean"], m["median"]) == (5, 1, 2.5, 2.5)
    assert m["sd"] == pytest.approx(math.sqrt(1 / 3))
    assert m["pa"] == pytest.approx(37.5)          # .5·.5 + .5·.25
    assert m["pct_pa"] == pytest.approx(75.0)      # .375 / max P (.5)
    assert m["wasserstein"] == pytest.approx(0.5)  # |0−.25| + |.5−.75| over unit steps
    assert m["kl"] == pytest.approx(0.25 * math.log(0.25 / EMPTY_BIN) + 0.25 * math.log(0.25 / 0.5))
    assert table.loc["human", ["pa", "wasserstein", "kl"]].isna().all()
    assert table.loc["human", "mean"] == 2.0 and table.loc["human", "median"] == 2.0


def test_scale_table_groups_and_models_only():
    df = frame([("a", "human", 1), ("a", "m", 1), ("b", "m", 4), ("b", "m", 5)], ["condition", "agent", "value"])
    table = scale_table(df, scale_binning(1, 5), ["condition"])
    assert table[["condition", "agent"]].values.tolist() == [["a", "human"], ["a", "m"], ["b", "m"]]
    a = table.iloc[1]
    assert a["pa"] == 100 and a["wasserstein"] == 0 and a["kl"] == 0
    b = table.iloc[2]
    assert b["mean"] == 4.5 and b[["pa", "pct_pa", "wasserstein", "kl"]].isna().all()  # no humans in b


def test_scale_histograms_long_table():
    df = frame([("human", 1), ("m", 5), ("m", 5)], ["agent", "value"])
    h = scale_histograms(df, scale_binning(1, 5))
    assert len(h) == 10
    assert h[h["agent"] == "m"][["bin", "count", "share"]].values.tolist()[-1] == [5.0, 2, 1.0]


def test_wasserstein_on_uneven_points_matches_scipy():
    c, h, p = [0, 1, 5, 10], [0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1]
    assert wasserstein(h, p, c) == pytest.approx(wasserstein_distance(c, c, h, p))
    # by hand: F_h = .1, .3, .6; F_p = .4, .7, .9 → .3·1 + .4·4 + .3·5
    assert wasserstein(h, p, c) == pytest.approx(0.3 + 1.6 + 1.5)
    assert math.isnan(wasserstein([0, 0], [1, 0], [0, 1]))


def test_kl_smoothing_and_zero_human_bins():
    assert kl_divergence([0.5, 0.5, 0], [0.5, 0.25, 0.25]) == pytest.approx(0.5 * math.log(2))
    assert kl_divergence([1, 0], [0, 1]) == pytest.approx(math.log(1 / EMPTY_BIN))


def test_answer_binning_pa_matches_belems_definition():
    df = frame([("human", 50), ("human", 52), ("human", 80), ("m", 49), ("m", 80)], ["agent", "value"])
    row = scale_table(df, answer_binning()).set_index("agent").loc["m"]
    assert row["pa"] == pytest.approx((0.5 * (2 / 3) + 0.5 * (1 / 3)) * 100)  # 50 and 52 share the bin 50
    assert row["wasserstein"] == pytest.approx(abs(0.5 - 2 / 3) * 30)         # cumulative gap over 50…75


def test_choice_table_by_hand():
    # humans A, A, B, (unreadable) → (2/3, 1/3, 0); model A, B, B, B → (.25, .75, 0)
    df = frame([("human", c) for c in "AAB"] + [("human", ""), *[("m", c) for c in "ABBB"]], ["agent", "choice"])
    table = choice_table(df, ["A", "B", "C"]).set_index("agent")
    assert table.loc["human", ["answers", "unparsed", "top_option", "human_majority"]].tolist() == [4, 1, "A", "A"]
    m = table.loc["m"]
    assert m["top_option"] == "B" and m["majority_agreement"] == pytest.approx(0.25)
    mid = [(2 / 3 + 0.25) / 2, (1 / 3 + 0.75) / 2]
    kl_m = 0.25 * math.log2(0.25 / mid[0]) + 0.75 * math.log2(0.75 / mid[1])
    kl_h = 2 / 3 * math.log2(2 / 3 / mid[0]) + 1 / 3 * math.log2(1 / 3 / mid[1])
    assert m["js_distance"] == pytest.approx(math.sqrt((kl_m + kl_h) / 2))
    shares = option_shares(df, ["A", "B", "C"])
    assert shares[shares["agent"] == "m"]["share"].tolist() == [0.25, 0.75, 0.0]


def test_choice_ties_other_options_and_disjoint_answers():
    assert majority_options(pd.Series({"A": 0.5, "B": 0.5, "C": 0})) == ["A", "B"]
    assert majority_agreement(pd.Series({"A": 1.0, "B": 0.0}), ["A", "B"]) == 0.5
    assert js_distance([1, 0], [0, 1]) == pytest.approx(1.0) and js_distance([0.3, 0.7], [0.3, 0.7]) == 0
    df = frame([("human", "A"), ("m", "Z")], ["agent", "choice"])  # an option outside the list is its own
    table = choice_table(df, ["A", "B"]).set_index("agent")
    assert table.loc["m", "top_option"] == "Z" and table.loc["m", "js_distance"] == pytest.approx(1.0)
    assert table.loc["m", "majority_agreement"] == 0


def test_interval_table_by_hand():
    df = frame([("m", 0, 10, 5), ("m", 2, 4, 5), ("m", 1, 3, np.nan), ("m", np.nan, 3, 1)],
               ["agent", "lower", "upper", "truth_value"])
    row = interval_table(df).iloc[0]
    assert (row["answers"], row["unparsed"], row["n_truth"]) == (4, 1, 2)
    assert row["mean_width"] == pytest.approx(14 / 3) and row["median_width"] == 2
    assert row["mean_lower"] == 1 and row["mean_upper"] == pytest.approx(17 / 3)
    assert row["coverage"] == 0.5  # 5 ∈ [0, 10]; 5 ∉ [2, 4]; the third item has no truth
    no_truth = interval_table(df.assign(truth_value=np.nan)).iloc[0]
    assert math.isnan(no_truth["coverage"]) and no_truth["n_truth"] == 0


def test_count_table_and_missing_columns():
    df = frame([("human",), ("m",), ("m",)], ["agent"])
    assert count_table(df).values.tolist() == [["human", 1], ["m", 2]]
    with pytest.raises(AnswersError, match="lacks column"):
        scale_table(df, scale_binning(1, 5))
