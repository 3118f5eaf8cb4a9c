"""Bahaj et al.'s overprecision metrics and aggregations, against cases computed by hand."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from families.bahaj.metrics.aggregation import aggregate, mixed_setting, single_setting, weights
from families.bahaj.metrics.overprecision import (OverprecisionError, deviation_table, hit_by_scale, hit_table,
                                                  one_per_item, pearson, resampled, scale_band, scored)

NAN = float("nan")


def answers(rows, agent="A"):
    """rows: (confidence, truth, lower, upper[, question])."""
    return pd.DataFrame([{"agent": agent, "confidence": r[0], "truth": r[1], "lower": r[2], "upper": r[3],
                          "question": r[4] if len(r) > 4 else "q1"} for r in rows])


HAND = answers([(90, 10, 5, 15), (90, 10, 11, 20), (60, 10, 10, 10), (60, 10, 0, 9), (60, 10, NAN, NAN)])


def test_hit_at_c_average_and_pearson_by_hand():
    table = hit_table(HAND).set_index("agent").loc["A"]
    assert table["hit@90"] == 50 and table["hit@60"] == 50  # [10, 10] contains 10: the bounds count
    assert math.isnan(table["hit@95"]) and math.isnan(table["hit@80"])
    assert table["hit_avg"] == 50  # mean over the levels answered
    # (c, d): (90, 10), (90, 9), (60, 0), (60, 9): Σ(c−75)(d−7) = 150, Σ(c−75)² = 900, Σ(d−7)² = 66
    assert table["corr"] == pytest.approx(150 / math.sqrt(900 * 66))
    assert (table["n"], table["unparsed"]) == (4, 1)


def test_hit_table_without_groups_and_missing_columns():
    overall = hit_table(HAND, by=[])
    assert overall.loc[0, "hit_avg"] == 50 and overall.loc[0, "n"] == 4
    with pytest.raises(OverprecisionError, match="truth"):
        hit_table(HAND.drop(columns="truth"))


def test_pearson_undefined_when_constant():
    assert math.isnan(pearson([90, 90], [1, 2])) and math.isnan(pearson([60, 90], [3, 3]))
    assert pearson([60, 90], [1, 2]) == pytest.approx(1.0)


def test_deviation_and_interval_length_scores_by_hand():
    s = scored(answers([(90, 10, 20, 30), (90, 10, 11, 20), (90, 10, 5, 15), (60, 0, 0, 0), (60, 10, -4, 6)]))
    # m = max(x − a, a − y): 10 → (10/11)², 1 → (1/2)², −5 → 0
    assert list(s["ds"][:3]) == pytest.approx([(10 / 11) ** 2, 0.25, 0.0])
    # (y − x)/max(|y|, |x|): 10/30, 9/20, 10/15, 0 for the point at 0, 10/6
    assert list(s["ils"]) == pytest.approx([10 / 30, 9 / 20, 10 / 15, 0.0, 10 / 6])
    table = deviation_table(HAND).set_index("agent").loc["A"]
    assert table["ds@90"] == pytest.approx(0.125) and table["ds@60"] == pytest.approx(0.125)
    assert table["ils@90"] == pytest.approx((10 / 15 + 9 / 20) / 2) and table["ils@60"] == pytest.approx(0.5)
    assert table["ds_avg"] == pytest.approx(0.125)


def test_scale_bands_and_hit_by_scale():
    assert list(scale_band(pd.Series([0, 5, 9, 10, 1969, -40, -0.5]))) == [0, 0, 1, 1, 3, -2, -1]
    table = hit_by_scale(answers([(90, 5, 0, 10), (90, 1969, 1900, 1950), (90, 1945, 1940, 1950)]))
    rows = table.set_index("band")
    assert rows.loc[0, "hit"] == 100 and rows.loc[3, "hit"] == 50 and rows.loc[3, "n"] == 2
    assert (rows.loc[3, "band_low"], rows.loc[3, "band_high"]) == (999, 9999)


GROUP = pd.DataFrame({"question": ["q"] * 3, "confidence": [60, 90, 95], "truth": [4] * 3,
                      "lower": [0.0, 2.0, 5.0], "upper": [10.0, 4.0, 5.0]})


@pytest.mark.parametrize("strategy, expected", [
    ("MIA", (7 / 3, 19 / 3)),
    ("LWA", (4 / 12, 108 / 12)),          # w = 10, 2, 0
    ("iLWA", (5.0, 5.0)),                 # the point interval takes all the weight (limit of 1/d)
    ("CWA", (655 / 245, 1435 / 245)),     # w = 60, 90, 95
    ("Union", (0.0, 10.0)),
])
def test_aggregations_by_hand(strategy, expected):
    out = aggregate(GROUP, ["question"], strategy)
    assert (out.loc[0, "lower"], out.loc[0, "upper"]) == pytest.approx(expected)
    assert out.loc[0, "truth"] == 4


def test_inverse_length_without_point_intervals_and_length_weights_all_zero():
    two = GROUP.iloc[:2]
    out = aggregate(two, ["question"], "iLWA")  # w = 1/10, 1/2
    assert (out.loc[0, "lower"], out.loc[0, "upper"]) == pytest.approx((1 / 0.6, 3 / 0.6))
    points = pd.DataFrame({"question": ["q", "q"], "confidence": [90, 90], "lower": [3.0, 5.0], "upper": [3.0, 5.0]})
    out = aggregate(points, ["question"], "LWA")
    assert (out.loc[0, "lower"], out.loc[0, "upper"]) == (4.0, 4.0)
    with pytest.raises(ValueError, match="unknown"):
        weights(GROUP, ["question"], "median")


def test_unparsed_intervals_are_never_aggregated():
    with_nan = pd.concat([GROUP, pd.DataFrame({"question": ["q"], "confidence": [60], "truth": [4],
                                               "lower": [NAN], "upper": [NAN]})], ignore_index=True)
    assert aggregate(with_nan, ["question"], "MIA").loc[0, "lower"] == pytest.approx(7 / 3)


def test_one_per_item_draws_k_per_group():
    df = answers([(90, 1, 0, 2, q) for q in ("a", "b") for _ in range(5)])
    drawn = one_per_item(df, ["question"], np.random.default_rng(0), k=3)
    assert drawn.groupby("question").size().tolist() == [3, 3]


def test_resampled_protocol_mean_and_sd():
    # each (question, level) has one hit and one miss: a draw of one answer per item gives hit 0 or 100 per item
    rows = [(c, 10, lo, hi, q) for q in ("a", "b", "c", "d") for c in (60, 90) for lo, hi in ((0, 20), (11, 20))]
    df = answers(rows)
    out = resampled(df, lambda t: hit_table(t), keys=["agent", "question", "confidence"], index=["agent"], seed=3)
    again = resampled(df, lambda t: hit_table(t), keys=["agent", "question", "confidence"], index=["agent"], seed=3)
    pd.testing.assert_frame_equal(out, again)  # seeded: reproducible
    assert 0 < out.loc[0, "hit_avg"] < 100 and out.loc[0, "hit_avg_sd"] > 0
    assert out.loc[0, "n"] == 8 and out.loc[0, "n_sd"] == 0  # one answer per item and level in every draw
    same = answers([(60, 10, 0, 20, q) for q in ("a", "b") for _ in range(3)])
    fixed = resampled(same, lambda t: hit_table(t), keys=["agent", "question", "confidence"], index=["agent"])
    assert fixed.loc[0, "hit@60"] == 100 and fixed.loc[0, "hit@60_sd"] == 0


def test_single_setting_with_every_trial_drawn_is_the_aggregate():
    # three trials per (question, level), k = 3: every draw aggregates the same intervals
    rows = [(60, 4, 0, 10, "q"), (60, 4, 2, 3, "q"), (60, 4, 5, 5, "q"),
            (90, 100, 0, 50, "q"), (90, 100, 90, 110, "q"), (90, 100, 120, 130, "q")]
    table = single_setting(answers(rows)).set_index("strategy")
    # level 60: MIA [7/3, 6] ∋ 4; iLWA → [5, 5] ∌ 4; LWA (w 10, 1, 0) → [2/11, 103/11] ∋ 4; Union [0, 10] ∋ 4
    # level 90: MIA [70, 96.67] ∌ 100; LWA (w 50, 20, 10): X = (0+1800+1200)/80 = 37.5, Y = (2500+2200+1300)/80 = 75 ∌ 100
    #           iLWA (1/50, 1/20, 1/10) → X = (0+4.5+12)/0.17 = 97.06, Y = (1+5.5+13)/0.17 = 114.7 ∋ 100; Union [0, 130] ∋ 100
    assert table.loc["MIA", "hit@60"] == 100 and table.loc["MIA", "hit@90"] == 0
    assert table.loc["iLWA", "hit@60"] == 0 and table.loc["iLWA", "hit@90"] == 100
    assert table.loc["LWA", "hit@60"] == 100 and table.loc["LWA", "hit@90"] == 0
    assert table.loc["Union", "hit_avg"] == 100 and table.loc["Union", "hit_avg_sd"] == 0
    assert "CWA" not in table.index  # one level per aggregate: CWA would equal MIA


def test_mixed_setting_across_levels():
    rows = [(60, 4, 0, 10, "q"), (90, 4, 2, 3, "q"), (95, 4, 5, 5, "q")]
    table = mixed_setting(answers(rows), k=9).set_index("strategy")
    # all three drawn: MIA [2.33, 6.33] ∋ 4; CWA [2.67, 5.86] ∋ 4; iLWA [5, 5] ∌ 4; LWA [0.33, 9] ∋ 4
    assert table.loc["MIA", "hit"] == 100 and table.loc["CWA", "hit"] == 100
    assert table.loc["iLWA", "hit"] == 0 and table.loc["LWA", "hit"] == 100 and table.loc["Union", "hit"] == 100
    assert (table["hit_sd"] == 0).all()
