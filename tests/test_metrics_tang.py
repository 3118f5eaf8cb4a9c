"""Tang et al.'s KL divergence (20 bins), Brunner–Munzel θ̂ with CI and p, absolute median difference."""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from analysis.metrics.answers import AnswersError
from families.tang.metrics.divergence import abs_median_difference, brunner_munzel, kl_divergence, kl_histogram, tang_table

FAGEN = Path(__file__).resolve().parents[2] / "shared" / "data" / "fagen-ulmschneider-2015" / "survey-results.csv"


@pytest.fixture(scope="module")
def fagen() -> pd.DataFrame:
    """The 123 × 17 human WEP estimates (0–100) of Fagen-Ulmschneider 2015, tidy."""
    if not FAGEN.exists():
        pytest.fail(f"shared data not found at {FAGEN}")
    raw = pd.read_csv(FAGEN)
    raw.columns = [c.strip('"').lower() for c in raw.columns]
    wide = raw.iloc[:, :17].apply(pd.to_numeric, errors="coerce")
    tidy = wide.stack().rename("value").reset_index()
    tidy.columns = ["respondent", "label", "value"]
    tidy["respondent"] = "f" + tidy["respondent"].astype(str)
    tidy["agent"] = "human"
    return tidy


def test_kl_by_hand():
    # human 0, 5, 5, 10 → bins 0,1,1,2: P = (.25, .5, .25); model 5, 10, 10, 10 → Q = (0, .25, .75)
    # Q(0) = 0 → 1e−10. KL = .25·ln(.25/1e−10) + .5·ln(.5/.25) + .25·ln(.25/.75)
    expected = 0.25 * math.log(0.25 / 1e-10) + 0.5 * math.log(2) + 0.25 * math.log(1 / 3)
    assert expected == pytest.approx(5.48181, abs=1e-5)
    assert kl_divergence([0, 5, 5, 10], [5, 10, 10, 10]) == pytest.approx(expected)
    # The same answers as probabilities.
    assert kl_divergence([0, 0.05, 0.05, 0.10], [0.05, 0.10, 0.10, 0.10], scale=1) == pytest.approx(expected)
    # Human bins the model leaves empty are what makes KL large; the reverse direction is finite and different.
    assert kl_divergence([5, 10, 10, 10], [0, 5, 5, 10]) == pytest.approx(0.25 * math.log(0.25 / 0.5) + 0.75 * math.log(3))


def test_kl_edges_on_a_probability_scale():
    # 0.35 and 0.05 sit on inner edges: they belong to the upper bins [35,40) and [5,10).
    p = kl_histogram([0.05, 0.35], scale=1)
    assert p[1] == 0.5 and p[7] == 0.5
    # numpy's own 0–1 edges would put 0.35 in [30, 35): the float-edge trap.
    naive = np.histogram([0.05, 0.35], bins=np.linspace(0, 1, 21))[0]
    assert naive[6] == 1 and naive[7] == 0
    # The same answers given on the two scales are the same distribution.
    assert kl_divergence(np.array([0.35, 0.05, 0.15, 0.55]) * 100, [35, 5, 15, 55]) == 0.0
    assert kl_histogram([1.0], scale=1)[19] == 1.0  # 100 goes to the last bin [95, 100]
    with pytest.raises(ValueError, match="outside"):
        kl_divergence([0.5, 1.5], [0.5], scale=1)


def test_kl_ignores_unparseable_answers_and_refuses_empty_samples():
    assert kl_divergence([10, np.nan], [10]) == 0.0
    with pytest.raises(AnswersError, match="empty"):
        kl_divergence([np.nan], [10])


def test_brunner_munzel_by_hand():
    # X = 1,2,3; Y = 2,3,4. Of the 9 pairs, X>Y once (3>2) and X=Y twice (2=2, 3=3):
    # θ̂ = 1/9 + ½·2/9 = 2/9.
    x, y = [1, 2, 3], [2, 3, 4]
    bm = brunner_munzel(x, y)
    assert bm.theta == pytest.approx(2 / 9)
    scipy_result = stats.brunnermunzel(x, y)
    assert bm.p_value == pytest.approx(scipy_result.pvalue)
    assert bm.statistic == pytest.approx(scipy_result.statistic)
    # CI from the BM variance: the statistic is (½ − θ̂)/σ̂ and the half-width is t(.975, df)·σ̂.
    sigma = (0.5 - bm.theta) / bm.statistic
    half = stats.t.ppf(0.975, bm.df) * sigma
    assert bm.ci_low == pytest.approx(max(0.0, bm.theta - half))
    assert bm.ci_high == pytest.approx(min(1.0, bm.theta + half))
    assert bm.ci_low <= bm.theta <= bm.ci_high


def test_abs_median_difference():
    assert abs_median_difference([10, 20, 30], [15, 25]) == 0.0
    assert abs_median_difference([0, 10], [50]) == 45.0
    assert abs_median_difference([0.0, 0.1], [0.5], scale=1) == 45.0


def test_constant_samples():
    # Fully separated constant samples: θ̂ = 1 (every X above every Y); the CI collapses.
    bm = brunner_munzel([80, 80, 80], [20, 20, 20])
    assert bm.theta == 1.0 and bm.ci_low == bm.ci_high == 1.0
    with pytest.raises(AnswersError, match="at least 2"):
        brunner_munzel([1], [1, 2])


def test_real_human_wep_sample_against_itself_and_another(fagen):
    likely = fagen.loc[fagen["label"] == "likely", "value"].dropna().to_numpy()
    unlikely = fagen.loc[fagen["label"] == "unlikely", "value"].dropna().to_numpy()
    assert len(likely) > 100
    assert kl_divergence(likely, likely) == 0.0
    same = brunner_munzel(likely, likely)
    assert same.theta == 0.5 and same.p_value == pytest.approx(1.0)
    diff = brunner_munzel(likely, unlikely)
    # Nearly every "likely" estimate is above every "unlikely" estimate.
    pairs = np.subtract.outer(likely, unlikely)
    assert diff.theta == pytest.approx((pairs > 0).mean() + 0.5 * (pairs == 0).mean())
    assert diff.theta > 0.9 and diff.p_value < 1e-10
    assert diff.p_value == pytest.approx(stats.brunnermunzel(likely, unlikely).pvalue)


def test_tang_table_compares_each_model_with_the_humans(fagen):
    model = pd.DataFrame({"respondent": "run", "agent": "gpt", "label": ["likely"] * 3 + ["unlikely"] * 3,
                          "value": [0.70, 0.70, 0.75, 0.20, 0.20, 0.25]})
    humans = fagen.assign(value=fagen["value"] / 100)  # both on 0–1 as Tang's models answer
    table = tang_table(pd.concat([humans, model]), scale=1)
    assert list(table.index) == [("gpt", "likely"), ("gpt", "unlikely")]
    human_likely = fagen.loc[fagen["label"] == "likely", "value"].dropna()
    row = table.loc[("gpt", "likely")]
    assert row["kl"] == pytest.approx(kl_divergence(human_likely, [70, 70, 75]))
    assert row["amd"] == pytest.approx(abs(human_likely.median() - 70))
    assert row["theta"] == pytest.approx(brunner_munzel(human_likely, [70, 70, 75]).theta)
    assert row["n_human"] == len(human_likely) and row["n_model"] == 3


# --- properties ------------------------------------------------------------------------------------
samples = st.lists(st.integers(0, 100), min_size=2, max_size=40)


@given(samples)
def test_kl_of_a_sample_with_itself_is_zero(x):
    assert kl_divergence(x, x) == 0.0
    assert kl_divergence(np.array(x) / 100, np.array(x) / 100, scale=1) == 0.0


@given(samples)
def test_theta_of_a_sample_with_itself_is_one_half(x):
    bm = brunner_munzel(x, x)
    assert bm.theta == pytest.approx(0.5)
    assert bm.ci_low <= 0.5 <= bm.ci_high


@settings(max_examples=60)
@given(samples, samples)
def test_theta_is_the_pairwise_probability_and_the_statistic_is_scipys(x, y):
    bm = brunner_munzel(x, y)
    pairs = np.subtract.outer(np.array(x), np.array(y))
    assert bm.theta == pytest.approx((pairs > 0).mean() + 0.5 * (pairs == 0).mean())
    assert 0 <= bm.ci_low <= bm.theta <= bm.ci_high <= 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on samples without spread
        expected = stats.brunnermunzel(x, y)
    if np.isfinite(expected.statistic) and expected.statistic != 0:
        sigma = (0.5 - bm.theta) / bm.statistic
        assert sigma > 0
        assert bm.statistic == pytest.approx(expected.statistic)
