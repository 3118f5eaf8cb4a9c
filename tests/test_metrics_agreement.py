"""PA, %PA, Human Mode, Human Individual, random baseline, MAE and Wasserstein (SPEC §6), by hand
and as properties."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.stats import wasserstein_distance

from families.belem.metrics.agreement import (BIN_COLUMNS, agreement_by_expression, answer_counts, histograms, human_individual,
                                human_individual_summary, mode_pa, mode_responder, pa_by_expression, percent_pa,
                                random_baseline, reference_distribution, score_histograms, wasserstein_rows)
from analysis.metrics.answers import AnswersError
from surveys.answer_bins import BIN_CENTRES


def answers(rows, truth=""):
    """A tidy answers table from (respondent, agent, label, value) tuples."""
    df = pd.DataFrame(rows, columns=["respondent", "agent", "label", "value"])
    df["value"] = df["value"].astype(float)
    df["truth"] = truth
    return df


# The hand-worked reference used below.
#   likely:   humans answered 70, 70, 80, 60  → P(60)=.25, P(70)=.5, P(80)=.25; mean 70; mode .5
#   unlikely: humans answered 20, 20, 20, 30  → P(20)=.75, P(30)=.25;         mean 22.5; mode .75
HUMANS = answers([
    ("p1", "human", "likely", 70), ("p1", "human", "likely", 60),
    ("p1", "human", "unlikely", 20), ("p1", "human", "unlikely", 20),
    ("p2", "human", "likely", 70), ("p2", "human", "likely", 80),
    ("p2", "human", "unlikely", 20), ("p2", "human", "unlikely", 30),
    ("p1", "human", "control", 0), ("p2", "human", "control", 100),  # controls are not an expression
])


@pytest.fixture
def reference():
    return reference_distribution(HUMANS)


def test_reference_is_the_human_histogram_without_controls(reference):
    assert list(reference.index) == ["likely", "unlikely"]
    assert list(reference.columns) == BIN_COLUMNS
    assert reference.loc["likely", 60] == 0.25 and reference.loc["likely", 70] == 0.5 and reference.loc["likely", 80] == 0.25
    assert reference.loc["unlikely", 20] == 0.75 and reference.loc["unlikely", 30] == 0.25
    assert np.allclose(reference.sum(axis=1), 1)


def test_model_scores_by_hand(reference):
    # Model A: likely → 70, 80 (H(70)=H(80)=.5); unlikely → 30, 30; one control answer (ignored).
    #   PA(likely)   = .5·.5 + .5·.25 = .375        PA(unlikely) = 1·.25 = .25
    #   PA(A) = (.375 + .25)/2 = .3125 → 31.25
    #   %PA  = mean(.375/.5, .25/.75) = mean(.75, .3333) = 54.1667
    #   MAE  = mean(|75 − 70|, |30 − 22.5|) = mean(5, 7.5) = 6.25
    #   W1(likely): CDF gap .25 on [60,70) and .25 on [70,80) → 2.5 + 2.5 = 5
    #   W1(unlikely): CDF gap .75 on [20,30) → 7.5;  mean 6.25
    model = answers([("run1", "A", "likely", 70), ("run1", "A", "likely", 80),
                     ("run1", "A", "unlikely", 30), ("run1", "A", "unlikely", 30),
                     ("run1", "A", "control", 0)])
    table = agreement_by_expression(model, reference)
    assert table.loc[("A", "likely"), "pa"] == pytest.approx(37.5)
    assert table.loc[("A", "unlikely"), "pa"] == pytest.approx(25.0)
    assert table["pa"].mean() == pytest.approx(31.25)
    assert table["pct_pa"].mean() == pytest.approx((0.75 + 1 / 3) / 2 * 100)
    assert percent_pa(table["pa"].droplevel("agent"), mode_pa(reference) * 100) == pytest.approx(54.1666667)
    assert list(table["mae"]) == pytest.approx([5.0, 7.5])
    assert list(table["wasserstein"]) == pytest.approx([5.0, 7.5])
    assert list(table["n"]) == [2, 2]


def test_human_mode_is_the_largest_share(reference):
    assert dict(mode_pa(reference)) == {"likely": 0.5, "unlikely": 0.75}


def test_distribution_answers_contribute_their_whole_distribution(reference):
    # Model B, likely: {70: .5, 80: .3, non-number: .2}.
    #   renormalised: 70 → .625, 80 → .375; PA = .625·.5 + .375·.25 = .40625
    #   "miss": 70 → .5, 80 → .3 (the .2 agrees with nobody); PA = .25 + .075 = .325
    dist = np.zeros(22)
    dist[14], dist[16], dist[21] = 0.5, 0.3, 0.2
    model = answers([("run", "B", "likely", np.nan)])
    model["dist"] = [dist]
    assert pa_by_expression(histograms(model), reference).iloc[0] == pytest.approx(0.40625)
    assert pa_by_expression(histograms(model, non_number="miss"), reference).iloc[0] == pytest.approx(0.325)
    # The same answer as a mapping, with the non-number mass left implicit.
    model["dist"] = [{"70": 0.5, 80: 0.3}]
    assert pa_by_expression(histograms(model), reference).iloc[0] == pytest.approx(0.40625)
    counts = answer_counts(model)
    assert counts["non_number_mass"].iloc[0] == pytest.approx(0.2)
    # MAE and Wasserstein use the renormalised histogram in both modes.
    miss = score_histograms(histograms(model, non_number="miss"), reference)
    renorm = score_histograms(histograms(model), reference)
    assert miss["mae"].iloc[0] == pytest.approx(renorm["mae"].iloc[0]) == pytest.approx(abs(0.625 * 70 + 0.375 * 80 - 70))


def test_single_and_distribution_answers_mix(reference):
    # One greedy answer 60 and one distribution all on 80: H = {60: .5, 80: .5}; PA = .5·.25 + .5·.25 = .25
    one_hot = np.zeros(21)
    one_hot[16] = 1.0
    model = answers([("run", "C", "likely", 60), ("run", "C", "likely", np.nan)])
    model["dist"] = [None, one_hot]
    assert pa_by_expression(histograms(model), reference).iloc[0] == pytest.approx(0.25)


def test_unparseable_answers_are_counted_not_scored(reference):
    model = answers([("run", "D", "likely", 70), ("run", "D", "likely", np.nan)])
    assert agreement_by_expression(model, reference).loc[("D", "likely"), "pa"] == pytest.approx(50.0)
    counts = answer_counts(model)
    assert counts.loc[("D", "likely"), "answers"] == 2 and counts.loc[("D", "likely"), "unparsed"] == 1


@pytest.mark.parametrize("dist, message", [
    (np.full(21, 0.1), "sums to"),
    (np.r_[-0.5, np.full(20, 0.05)], "negative"),
    (np.zeros(7), "7 entries"),
    ({"7": 1.0}, "not one of 0, 5"),
    ("0.5", "expected a sequence"),
])
def test_malformed_distributions_are_refused_naming_the_row(dist, message):
    model = answers([("run", "B", "likely", np.nan), ("run", "B", "likely", np.nan)])
    model.index = ["r1", "r2"]
    model["dist"] = [None, dist]
    with pytest.raises(AnswersError, match=rf"row 'r2'.*{message}"):
        histograms(model)


def test_missing_columns_are_named():
    with pytest.raises(AnswersError, match="lacks column.*label"):
        histograms(pd.DataFrame({"agent": ["A"], "value": [5.0]}))
    with pytest.raises(AnswersError, match="no human answers"):
        reference_distribution(HUMANS.iloc[:0])


def test_human_individual_by_hand(reference):
    # Pairs (own histogram vs full reference, no leave-one-out):
    #   p1 likely {60,70}: PA .5·.25 + .5·.5 = .375; mean 65 → MAE 5; W1 2.5 + 2.5 = 5
    #   p1 unlikely {20,20}: PA .75; mean 20 → MAE 2.5; W1 .25·10 = 2.5
    #   p2 likely {70,80}: PA .375; MAE 5; W1 5
    #   p2 unlikely {20,30}: PA .5·.75 + .5·.25 = .5; mean 25 → MAE 2.5; W1 .25·10 = 2.5
    #   PA = (.375 + .75 + .375 + .5)/4 = .5 → 50; MAE 3.75; W1 3.75
    #   %PA = mean(.375/.5, .625/.75) = mean(.75, .8333) = 79.1667
    pairs = human_individual(HUMANS, reference)
    assert len(pairs) == 4
    assert pairs.loc[("p1", "unlikely"), "pa"] == pytest.approx(75.0)
    summary = human_individual_summary(pairs, reference)
    assert summary["pa"] == pytest.approx(50.0)
    assert summary["mae"] == pytest.approx(3.75)
    assert summary["wasserstein"] == pytest.approx(3.75)
    assert summary["pct_pa"] == pytest.approx((0.75 + 0.625 / 0.75) / 2 * 100)


def test_random_baseline(reference):
    rnd = random_baseline(reference)
    # Σ_k (1/21)·P(k|u) = 1/21 whatever the reference.
    assert np.allclose(rnd["pa"], 100 / 21)
    # MAE = |50 − 70| and |50 − 22.5|.
    assert list(rnd["mae"]) == pytest.approx([20.0, 27.5])
    uniform = np.full(21, 1 / 21)
    for u in reference.index:
        assert rnd.loc[u, "wasserstein"] == pytest.approx(
            wasserstein_distance(BIN_CENTRES, BIN_CENTRES, uniform, reference.loc[u].to_numpy()))


def test_expressions_missing_from_the_reference_get_no_score(reference):
    model = answers([("run", "A", "doubtful", 20), ("run", "A", "likely", 70)])
    table = agreement_by_expression(model, reference)
    assert np.isnan(table.loc[("A", "doubtful"), "pa"])
    assert table.loc[("A", "likely"), "pa"] == pytest.approx(50.0)


# --- properties ------------------------------------------------------------------------------------
def _dist(draw_weights):
    w = np.asarray(draw_weights, dtype=float)
    return w / w.sum()


histogram = arrays(np.float64, 21, elements=st.floats(0, 1)).filter(lambda a: a.sum() > 1e-3).map(_dist)


def _frame(rows):
    return pd.DataFrame(np.vstack(rows), index=pd.Index([f"u{i}" for i in range(len(rows))], name="label"),
                        columns=BIN_COLUMNS)


@given(st.lists(st.tuples(histogram, histogram), min_size=1, max_size=5))
def test_pa_never_exceeds_the_mode_and_the_mode_responder_reaches_it(pairs):
    h = _frame([a for a, _ in pairs])
    p = _frame([b for _, b in pairs])
    pa = pa_by_expression(h, p)
    modes = mode_pa(p)
    assert (pa <= modes + 1e-12).all()
    assert np.allclose(pa_by_expression(mode_responder(p), p), modes)
    assert (score_histograms(h, p)["pct_pa"] <= 100 + 1e-9).all()


@given(histogram, histogram)
def test_wasserstein_matches_scipy(h, p):
    ours = wasserstein_rows(h[None, :], p[None, :])[0]
    assert ours == pytest.approx(wasserstein_distance(BIN_CENTRES, BIN_CENTRES, h, p), abs=1e-9)
    assert wasserstein_rows(h[None, :], h[None, :])[0] == pytest.approx(0, abs=1e-12)


@settings(max_examples=50)
@given(st.lists(st.sampled_from(list(range(0, 101, 5))), min_size=1, max_size=30),
       st.lists(st.sampled_from(list(range(0, 101, 5))), min_size=1, max_size=30))
def test_histogram_scores_equal_the_per_answer_definitions(model_values, human_values):
    # PA(a,u) is also the mean over the agent's answers of P(answer's bin | u) (Belem §4.3).
    humans = answers([("h", "human", "u", v) for v in human_values])
    model = answers([("m", "M", "u", v) for v in model_values])
    ref = reference_distribution(humans)
    table = agreement_by_expression(model, ref)
    per_answer = np.mean([ref.loc["u", v] for v in model_values]) * 100
    assert table["pa"].iloc[0] == pytest.approx(per_answer)
    assert table["mae"].iloc[0] == pytest.approx(abs(np.mean(model_values) - np.mean(human_values)))
    assert table["wasserstein"].iloc[0] == pytest.approx(wasserstein_distance(model_values, human_values), abs=1e-9)


def test_stored_mapping_distributions_equal_arrays(reference):
    # Elicitation stores {"0": p, "5": p, …, "100": p, "-1": non-number mass}; the batch path must
    # read those exactly like 22-entry arrays, and mixed forms row by row.
    rng = np.random.default_rng(1)
    raw = rng.dirichlet(np.ones(22), size=40)
    as_dicts = [{**{f"{5 * i}": float(r[i]) for i in range(21)}, "-1": float(r[21])} for r in raw]
    arrays_ = answers([("run", "B", "likely" if i % 2 else "unlikely", np.nan) for i in range(40)])
    dicts = arrays_.copy()
    mixed = arrays_.copy()
    arrays_["dist"] = list(raw)
    dicts["dist"] = as_dicts
    mixed["dist"] = [as_dicts[i] if i % 3 else raw[i] for i in range(40)]
    for mode in ("renormalise", "miss"):
        expected = histograms(arrays_, non_number=mode)
        pd.testing.assert_frame_equal(histograms(dicts, non_number=mode), expected)
        pd.testing.assert_frame_equal(histograms(mixed, non_number=mode), expected)
    assert answer_counts(dicts)["non_number_mass"].to_numpy() == pytest.approx(
        [raw[1::2, 21].mean(), raw[0::2, 21].mean()])


def test_estimated_distributions_may_overshoot_one_slightly():
    model = answers([("run", "B", "likely", np.nan)] * 2)
    model["dist"] = [{"70": 0.6, "-1": 0.4005}, {"70": 1.0}]
    assert histograms(model).loc[("B", "likely"), 70] == pytest.approx(1.0)
    model["dist"] = [{"70": 0.6, "-1": 0.41}, {"70": 1.0}]
    with pytest.raises(AnswersError, match="row 0.*sums to 1.01"):
        histograms(model)
