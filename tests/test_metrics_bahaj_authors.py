"""Bahaj et al. as the authors' notebooks compute it (protocol README §3–§4), against values computed by hand;
and the per-agent generators of the draws."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from families.bahaj.metrics.aggregation import aggregate, mixed_setting, single_setting
from families.bahaj.metrics.draws import agent_rng, draw_from, draw_per_group, resampled
from families.bahaj.metrics.overprecision import OverprecisionError, answer_histogram, hit_table

NAN = float("nan")


def answers(rows, agent="A"):
    """rows: (confidence, truth, lower, upper[, question[, item]])."""
    return pd.DataFrame([{"agent": agent, "confidence": r[0], "truth": r[1], "lower": r[2], "upper": r[3],
                          "question": r[4] if len(r) > 4 else "q1", "item_id": r[5] if len(r) > 5 else i}
                         for i, r in enumerate(rows)])


# level 90: a hit, a miss, an unparsed answer; level 60: a point interval on the answer (hit), a miss
HAND = answers([(90, 10, 5, 15), (90, 10, 11, 20), (90, 10, NAN, NAN), (60, 10, 10, 10), (60, 10, 0, 9)])


def test_authors_count_unparsed_answers_as_misses_and_pool_the_hit_average():
    authors = hit_table(HAND, reading="authors").iloc[0]
    assert authors["hit@90"] == pytest.approx(100 / 3)  # 1 hit of 3 answers: the unparsed one stays
    assert authors["hit@60"] == pytest.approx(50.0)
    assert authors["hit_avg"] == pytest.approx(40.0)  # 2 hits / 5 answers, not (33.3 + 50)/2 = 41.7
    assert (authors["n"], authors["unparsed"]) == (4, 1)
    text = hit_table(HAND, reading="text").iloc[0]
    assert (text["hit@90"], text["hit@60"], text["hit_avg"]) == (50.0, 50.0, 50.0)
    # r is the same in both, over the 4 answers with a length: (90, 10), (90, 9), (60, 0), (60, 9)
    assert authors["corr"] == pytest.approx(150 / math.sqrt(900 * 66)) == text["corr"]
    with pytest.raises(OverprecisionError, match="unknown reading 'paper'"):
        hit_table(HAND, reading="paper")


def test_a_reversed_interval_is_a_miss_and_its_negative_length_enters_r():
    table = hit_table(answers([(90, 10, 15, 5), (60, 10, 0, 2), (60, 10, 0, 4)]), reading="authors").iloc[0]
    assert table["hit@90"] == 0 and table["hit_avg"] == 0
    # (c, d) = (90, −10), (60, 2), (60, 4): Σ(c − 70)(d + 4/3) = −260, Σ(c − 70)² = 600, Σ(d + 4/3)² = 1032/9
    assert table["corr"] == pytest.approx(-260 / math.sqrt(600 * 1032 / 9))


def test_figure_2_counts_hits_and_misses_by_true_answer_in_49_bins():
    df = answers([(90, 0, -1, 1), (90, 0, 2, 3), (90, 19.9, NAN, NAN), (90, 20, 19, 21), (90, -20, -21, -19),
                  (90, 25, 0, 30)])
    table = answer_histogram(df)
    assert len(table) == 49 and table["bin_low"].iloc[0] == -20 and table["bin_high"].iloc[-1] == 20
    assert table["bin_high"].iloc[0] == pytest.approx(-20 + 40 / 49)
    bins = table.set_index("bin")
    # 0 lies in bin ⌊20 / (40/49)⌋ = 24: one hit, one miss; 19.9 (unparsed: a miss) and 20 (the closed last edge,
    # a hit) in bin 48; −20 in bin 0; 25 lies outside and is not counted
    assert (bins.loc[24, "hits"], bins.loc[24, "misses"]) == (1, 1)
    assert (bins.loc[48, "hits"], bins.loc[48, "misses"]) == (1, 1)
    assert (bins.loc[0, "hits"], bins.loc[0, "misses"]) == (1, 0)
    assert table["hits"].sum() + table["misses"].sum() == 5


def one(rows, strategy, reading="authors"):
    """The aggregate of one group: rows (confidence, lower, upper)."""
    df = pd.DataFrame([{"g": 1, "confidence": c, "lower": x, "upper": y, "truth": 0} for c, x, y in rows])
    out = aggregate(df, ["g"], strategy, reading)
    return (float(out.loc[0, "lower"]), float(out.loc[0, "upper"])) if len(out) else None


def test_length_weighting_and_its_zero_collapses():
    # d = 2, 4, S = 6: X = (0·2 + 4·4)/6 = 8/3, Y = (2·2 + 8·4)/6 = 6
    assert one([(90, 0, 2), (90, 4, 8)], "LWA") == pytest.approx((8 / 3, 6.0))
    assert one([(90, 0, 2), (90, 4, 8)], "LWA", "text") == pytest.approx((8 / 3, 6.0))
    # all point intervals: 0/0 terms, all skipped → [0, 0] (text reading: equal weights, the mean [4, 4])
    assert one([(90, 3, 3), (90, 5, 5)], "LWA") == (0.0, 0.0)
    assert one([(90, 3, 3), (90, 5, 5)], "LWA", "text") == (4.0, 4.0)
    # no interval with both bounds: [0, 0] (text reading: nothing to aggregate)
    assert one([(90, NAN, 5), (90, 1, NAN)], "LWA") == (0.0, 0.0)
    assert one([(90, NAN, 5), (90, 1, NAN)], "LWA", "text") is None
    # a reversed interval has a negative weight: d = 4, −1, S = 3: X = (0 − 6)/3, Y = (16 − 5)/3
    assert one([(90, 0, 4), (90, 6, 5)], "LWA") == pytest.approx((-2.0, 11 / 3))


def test_inverse_length_weighting_and_its_zero_collapse():
    # w = 1/2, 1/4, S = 3/4: X = (0 + 4/4)/(3/4) = 4/3, Y = (2/2 + 8/4)/(3/4) = 4
    assert one([(90, 0, 2), (90, 4, 8)], "iLWA") == pytest.approx((4 / 3, 4.0))
    # any point interval makes S infinite: [0, 0] (text reading: the point interval takes all the weight)
    assert one([(90, 1, 3), (90, 2, 2)], "iLWA") == (0.0, 0.0)
    assert one([(90, 1, 3), (90, 2, 2)], "iLWA", "text") == (2.0, 2.0)
    assert one([(90, NAN, NAN), (90, NAN, 4)], "iLWA") == (0.0, 0.0)


def test_mean_and_union_over_each_bound_s_own_subset():
    assert one([(90, 0, 10), (90, 2, NAN)], "MIA") == (1.0, 10.0)  # X over 2 lower bounds, Y over 1
    assert one([(90, 0, 10), (90, 2, NAN)], "MIA", "text") == (0.0, 10.0)  # only the parsed interval
    assert one([(90, NAN, 5), (90, 1, NAN)], "Union") == (1.0, 5.0)
    x, y = one([(90, NAN, NAN), (60, NAN, NAN)], "Union")
    assert math.isnan(x) and math.isnan(y)  # nothing parsed: NaN, a miss (LWA would give [0, 0])


def test_confidence_weighting_keeps_unparsed_rows_in_its_denominator():
    # S = 90 + 60 over both rows; the unparsed one adds no term: X = 0, Y = 10·90/150 = 6
    assert one([(90, 0, 10), (60, NAN, NAN)], "CWA") == pytest.approx((0.0, 6.0))
    assert one([(90, 0, 10), (60, NAN, NAN)], "CWA", "text") == (0.0, 10.0)
    # a bound missing everywhere is 0: Y = (4·90 + 6·60)/150 = 4.8
    assert one([(90, NAN, 4), (60, NAN, 6)], "CWA") == pytest.approx((0.0, 4.8))
    # raw percents: (0·95 + 10·60)/155 and (10·95 + 20·60)/155
    assert one([(95, 0, 10), (60, 10, 20)], "CWA") == pytest.approx((600 / 155, 2150 / 155))


# q1 (answer 0): at 90 unparsed, at 60 [−1, 1]; q2 (answer 9.5): at 90 [0, 10], at 60 [6, 8] — one answer each, so
# a draw with replacement repeats it: every draw is the same and the sd is 0
TWO = answers([(90, 0, NAN, NAN, "q1"), (60, 0, -1, 1, "q1"), (90, 9.5, 0, 10, "q2"), (60, 9.5, 6, 8, "q2")])


def test_single_setting_as_the_authors_score_it():
    table = single_setting(TWO, reading="authors").set_index("strategy")
    # LWA: q1@90 collapses to [0, 0], a hit on 0; q1@60 hit; q2@90 hit; q2@60 miss
    assert (table.loc["LWA", "hit@90"], table.loc["LWA", "hit@60"], table.loc["LWA", "hit_avg"]) == (100, 50, 75)
    # MIA: q1@90 has no bound: NaN, a miss that stays in the denominator
    assert (table.loc["MIA", "hit@90"], table.loc["MIA", "hit_avg"]) == (50, 50)
    assert table.loc["MIA", "hit_avg_sd"] == 0
    assert "CWA" not in table.index
    with pytest.raises(ValueError, match="mixed setting only"):
        single_setting(TWO, reading="authors", strategies=("CWA",))
    text = single_setting(TWO, reading="text").set_index("strategy")
    assert text.loc["MIA", "hit@90"] == 100  # only q2 has a parsed answer at 90


def test_mixed_setting_over_fifteen_intervals_as_the_authors_score_it():
    table = mixed_setting(TWO, reading="authors", mixed=15).set_index("strategy")["hit"]
    # q1: 3 × unparsed (90) and 3 × [−1, 1] (60): every strategy gives [−1, 1] except CWA: S = 3·90 + 3·60 = 450,
    #     X = −180/450 = −0.4, Y = 0.4; all contain 0.
    # q2: 3 × [0, 10] (90), 3 × [6, 8] (60), answer 9.5: Union [0, 10] hit; MIA [3, 9] miss;
    #     LWA S = 36: [36/36, 348/36] = [1, 9.67] hit; iLWA S = 1.8: [9/1.8, 15/1.8] = [5, 8.33] miss;
    #     CWA [1080/450, 4140/450] = [2.4, 9.2] miss
    assert table.to_dict() == {"Union": 100, "MIA": 50, "LWA": 100, "iLWA": 50, "CWA": 50}
    with pytest.raises(ValueError, match="15 or 9"):
        mixed_setting(TWO, mixed=12)


def test_draws_with_replacement_repeat_tries_and_without_never_do():
    df = answers([(90, 1, 0, 2, "q", "i"), (90, 1, 5, 6, "q", "i")])
    rng = np.random.default_rng(1)
    for _ in range(5):
        drawn = draw_from(df, ["item_id"], rng, k=3, replace=True)
        assert len(drawn) == 3 and drawn.index.duplicated().any()  # 3 picks among 2 tries: one comes back
    assert sorted(draw_from(df, ["item_id"], rng, k=3).index) == [0, 1]
    # 15 per question in the mixed setting: 3 per level
    levels = answers([(c, 1, 0, 2, "q", f"i{c}") for c in (95, 90, 80, 70, 60)] * 2)
    drawn = draw_per_group(levels, ["agent", "question", "confidence"], seed=0, k=3, replace=True)[0]
    assert len(drawn) == 15 and drawn["confidence"].value_counts().to_dict() == {c: 3 for c in (95, 90, 80, 70, 60)}
    assert len(draw_per_group(levels, ["agent", "question"], seed=0, k=9, replace=True)[0]) == 9


def test_each_agent_draws_from_its_own_generator():
    rows = [(c, 10, lo, lo + 20, "q", f"i{c}") for c in (90, 60) for lo in (-5, 0, 5, 12)]
    a = answers(rows, agent="model a")
    alone = draw_per_group(a, ["agent", "item_id"], seed=4, draws=10)
    others = pd.concat([answers(rows, agent="0 first by name"), a, answers(rows, agent="z last")], ignore_index=True)
    together = draw_per_group(others.sample(frac=1, random_state=3), ["agent", "item_id"], seed=4, draws=10)
    for d in range(10):
        mine = together[d][together[d]["agent"] == "model a"]
        assert mine[["item_id", "lower"]].values.tolist() == alone[d][["item_id", "lower"]].values.tolist()
    assert [t["lower"].tolist() for t in alone] != [t["lower"].tolist() for t in
                                                    draw_per_group(a, ["agent", "item_id"], seed=5, draws=10)]
    # the generator is the seed and the agent's name, nothing else
    assert agent_rng(4, "model a").random() == agent_rng(4, "model a").random() != agent_rng(4, "model b").random()


def test_the_tables_give_the_mean_and_sample_sd_over_the_draws():
    # one item, tries [0, 20] (a hit on 10) and [12, 20] (a miss): each draw's hit-avg is 100 or 0
    df = answers([(90, 10, 0, 20, "q", "i"), (90, 10, 12, 20, "q", "i")])
    out = resampled(df, lambda t: hit_table(t, reading="authors"), keys=["agent", "item_id"], index=["agent"],
                    draws=10, seed=7).iloc[0]
    picked = [100.0 if t["lower"].iloc[0] == 0 else 0.0 for t in
              draw_per_group(df, ["agent", "item_id"], seed=7, draws=10)]
    hits = picked.count(100.0)
    mean = 100 * hits / 10
    sd = math.sqrt((hits * (100 - mean) ** 2 + (10 - hits) * mean ** 2) / 9)  # ddof 1
    assert 0 < hits < 10 and out["hit_avg"] == pytest.approx(mean) and out["hit_avg_sd"] == pytest.approx(sd)
