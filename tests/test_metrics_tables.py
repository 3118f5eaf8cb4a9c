"""The Belem-shaped tables (Tables 1, 2, 5, 6, 7), by hand and against the paper's published numbers."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from families.belem.metrics.agreement import BIN_COLUMNS, mode_pa, mode_responder, pa_by_expression, percent_pa, random_baseline
from families.belem.metrics.tables import HUMAN_INDIVIDUAL, HUMAN_MODE, RANDOM, analyse_belem


def answers(rows):
    """rows: (respondent, agent, label, value, truth)."""
    df = pd.DataFrame(rows, columns=["respondent", "agent", "label", "value", "truth"])
    df["value"] = df["value"].astype(float)
    return df


def human(pid, likely, unlikely, control, truths=("", "")):
    return [(pid, "human", "likely", likely[0], truths[0]), (pid, "human", "likely", likely[1], truths[1]),
            (pid, "human", "unlikely", unlikely[0], truths[0]), (pid, "human", "unlikely", unlikely[1], truths[1]),
            (pid, "human", "control", control[0], truths[0]), (pid, "human", "control", control[1], truths[1])]


# Non-verifiable study. Label means over ALL participants (spam included):
#   control (100+90+90+100+0+10)/6 = 65 > likely (70+60+70+80+0+10)/6 = 48.3 > unlikely 46.7.
# p1 and p2 follow that order (ρ > 0.2); "spam" answers against it (ρ < 0) and is excluded, so the
# reference is p1 + p2: likely P(60)=.25, P(70)=.5, P(80)=.25; unlikely P(20)=.75, P(30)=.25.
NV = answers(
    human("p1", (70, 60), (20, 20), (100, 90)) + human("p2", (70, 80), (20, 30), (90, 100))
    + human("spam", (0, 10), (100, 90), (0, 10))
    + [("runA", "A", "likely", 70, ""), ("runA", "A", "likely", 80, ""),
       ("runA", "A", "unlikely", 30, ""), ("runA", "A", "unlikely", 30, ""), ("runA", "A", "control", 0, "")])
# Verifiable study: v1 passes the filter with the NV ranking; vspam does not.
V = answers(
    human("v1", (70, 60), (20, 30), (100, 90), truths=("true", "false"))
    + human("vspam", (0, 10), (100, 90), (0, 10), truths=("true", "false"))
    + [("runA", "A", "likely", 70, "true"), ("runA", "A", "likely", 70, "false"),
       ("runA", "A", "unlikely", 20, "true"), ("runA", "A", "unlikely", 20, "false")])


@pytest.fixture(scope="module")
def report():
    return analyse_belem(NV, V)


def test_filter_and_reference(report):
    assert list(report.ranking.index) == ["control", "likely", "unlikely"]
    assert dict(report.nv.filter["included"]) == {"p1": True, "p2": True, "spam": False}
    assert dict(report.v.filter["included"]) == {"v1": True, "vspam": False}
    assert report.reference.loc["likely", 70] == 0.5 and report.reference.loc["unlikely", 20] == 0.75


def test_summary_by_hand(report):
    s = report.summary
    assert list(s.index) == [HUMAN_MODE, HUMAN_INDIVIDUAL, RANDOM, "A"]
    # Human Mode = mean(.5, .75) = 62.5, on both sets.
    assert s.loc[HUMAN_MODE, "pa_nv"] == pytest.approx(62.5) and s.loc[HUMAN_MODE, "pa_v"] == pytest.approx(62.5)
    assert np.isnan(s.loc[HUMAN_MODE, "mae_nv"]) and np.isnan(s.loc[HUMAN_MODE, "delta_pa"])
    # Human Individual NV (worked in test_metrics_agreement): PA 50, %PA 79.17, MAE 3.75, W 3.75.
    assert s.loc[HUMAN_INDIVIDUAL, ["pa_nv", "mae_nv", "wasserstein_nv"]].tolist() == pytest.approx([50, 3.75, 3.75])
    assert s.loc[HUMAN_INDIVIDUAL, "pct_pa_nv"] == pytest.approx((0.75 + 0.625 / 0.75) / 2 * 100)
    # Human Individual V: v1 likely {70,60} → .375, unlikely {20,30} → .5 → 43.75; ΔPA = −6.25.
    assert s.loc[HUMAN_INDIVIDUAL, "pa_v"] == pytest.approx(43.75)
    assert s.loc[HUMAN_INDIVIDUAL, "delta_pa"] == pytest.approx(-6.25)
    # Model A NV: 31.25 / 54.17 / 6.25 / 6.25. V: likely 70,70 → .5; unlikely 20,20 → .75 → 62.5; ΔPA 31.25.
    assert s.loc["A", ["pa_nv", "mae_nv", "wasserstein_nv"]].tolist() == pytest.approx([31.25, 6.25, 6.25])
    assert s.loc["A", "pct_pa_nv"] == pytest.approx(54.1666667)
    assert s.loc["A", "pa_v"] == pytest.approx(62.5) and s.loc["A", "delta_pa"] == pytest.approx(31.25)
    # Random: 100/21 on both sets, ΔPA 0; MAE = mean(|50−70|, |50−22.5|) = 23.75.
    assert s.loc[RANDOM, "pa_nv"] == pytest.approx(100 / 21) and s.loc[RANDOM, "delta_pa"] == pytest.approx(0)
    assert s.loc[RANDOM, "mae_nv"] == pytest.approx(23.75)


def test_per_expression_table(report):
    t = report.nv.pa_per_expression
    assert list(t.index) == ["Avg PA", "likely", "unlikely"]  # expressions by reference mean, high first
    assert list(t.columns) == [HUMAN_MODE, HUMAN_INDIVIDUAL, "A", RANDOM]
    assert t.loc["likely"].tolist() == pytest.approx([50, 37.5, 37.5, 100 / 21])
    assert t.loc["unlikely"].tolist() == pytest.approx([75, 62.5, 25, 100 / 21])
    assert t.loc["Avg PA"].tolist() == pytest.approx([62.5, 50, 31.25, 100 / 21])
    order = analyse_belem(NV, V, order=["unlikely", "likely"]).v.pa_per_expression
    assert list(order.index) == ["Avg PA", "unlikely", "likely"]


def test_knowledge_bias_uses_the_filtered_verifiable_answers(report):
    kb = report.knowledge_bias
    # v1: likely 70 − 60 = 10, unlikely 20 − 30 = −10 → overall 0; vspam is excluded.
    assert kb.loc[("human", "likely"), "gap"] == 10 and kb.loc[("human", "unlikely"), "gap"] == -10
    assert kb.loc[("human", "overall"), "gap"] == 0 and kb.loc[("human", "overall"), "n"] == 1
    assert kb.loc[("A", "overall"), "method"] == "welch"


def test_nv_only_report_and_other_human_agent_name():
    renamed = NV.replace({"agent": {"human": "prolific"}})
    r = analyse_belem(renamed, human_agent="prolific")
    assert r.v is None and r.knowledge_bias is None
    assert list(r.summary.columns) == ["pa_nv", "pct_pa_nv", "mae_nv", "wasserstein_nv"]
    assert r.summary.loc["A", "pa_nv"] == pytest.approx(31.25)


# --- the paper's published numbers ----------------------------------------------------------------
# Belem et al. 2024, Table 6 (PA per expression, non-verifiable, filtered humans):
# columns Human Mode, Human Individual, GPT-4o, GPT-4, ChatGPT, Llama3, Mixtral 8x22B, Gemini.
TABLE6 = pd.DataFrame([
    [60.6, 42.0, 35.5, 60.6, 55.9, 58.7, 60.6, 60.6], [34.6, 22.5, 17.4, 22.1, 16.1, 8.3, 23.9, 30.0],
    [28.7, 17.7, 19.1, 19.5, 13.6, 14.4, 15.1, 21.9], [16.0, 11.1, 14.9, 14.3, 7.6, 14.8, 15.7, 14.1],
    [20.2, 12.9, 16.5, 16.5, 8.2, 19.7, 16.5, 18.1], [20.2, 13.5, 12.8, 17.9, 6.8, 16.5, 18.2, 16.2],
    [22.3, 14.0, 18.0, 19.3, 21.8, 22.3, 18.4, 19.9], [35.1, 16.9, 35.1, 35.1, 33.1, 35.1, 35.1, 35.1],
    [18.1, 10.7, 6.5, 15.4, 14.2, 15.0, 8.6, 15.5], [19.1, 13.5, 11.1, 18.3, 15.9, 16.8, 10.1, 16.5],
    [18.1, 12.6, 11.3, 17.1, 16.7, 17.7, 16.1, 18.1], [19.7, 11.7, 14.2, 12.9, 13.2, 17.5, 16.4, 19.7],
    [38.8, 23.4, 27.8, 37.9, 26.5, 38.8, 22.3, 36.9], [35.1, 23.5, 24.8, 35.1, 25.7, 35.1, 28.7, 32.8],
], index=["almost certain", "highly likely", "very likely", "probable", "likely", "somewhat likely",
          "somewhat unlikely", "uncertain", "possible", "unlikely", "not likely", "doubtful", "very unlikely",
          "highly unlikely"],
   columns=["Human Mode", "Human Individual", "GPT-4o", "GPT-4", "ChatGPT", "Llama3", "Mixtral 8x22B", "Gemini"])
# Table 1: %PA of the models.
TABLE1_PCT_PA = {"ChatGPT": 68.7, "GPT-4": 86.9, "GPT-4o": 68.9, "Gemini": 90.8, "Llama3": 85.5, "Mixtral 8x22B": 77.6}


@pytest.mark.parametrize("model, published", TABLE1_PCT_PA.items())
def test_percent_pa_reproduces_table1_from_table6(model, published):
    # %PA = mean over u of PA(a,u)/max_k P(k|u); inputs are rounded to 0.1, hence the tolerance.
    assert percent_pa(TABLE6[model], TABLE6["Human Mode"]) == pytest.approx(published, abs=0.25)


def test_average_pa_reproduces_table1():
    # PA(a) = mean over the 14 expressions: Human Mode 27.6, GPT-4 24.4, Gemini 25.4, ChatGPT 19.7 …
    published = {"Human Mode": 27.6, "Human Individual": 17.6, "GPT-4o": 18.9, "GPT-4": 24.4, "ChatGPT": 19.7,
                 "Llama3": 23.6, "Mixtral 8x22B": 21.8, "Gemini": 25.4}
    for column, value in published.items():
        assert round(TABLE6[column].mean(), 1) == pytest.approx(value, abs=0.051)


def synthetic_reference(modes: pd.Series) -> pd.DataFrame:
    """A reference with the paper's mode share per expression (rest spread evenly); a stand-in for
    the human data, which is not public."""
    rows = []
    for i, m in enumerate(modes / 100):
        row = np.full(21, (1 - m) / 20)
        row[(3 * i) % 21] = m
        rows.append(row)
    return pd.DataFrame(rows, index=modes.index, columns=BIN_COLUMNS)


def test_human_mode_and_random_baseline_on_a_reference_with_the_papers_modes():
    ref = synthetic_reference(TABLE6["Human Mode"])
    assert mode_pa(ref).mean() * 100 == pytest.approx(27.61, abs=0.01)  # published 27.6
    assert pa_by_expression(mode_responder(ref), ref).mean() * 100 == pytest.approx(27.61, abs=0.01)
    # Expected random PA = 1/21 = 4.76 → "≈ 4.8" (the paper's one sampled draw shows 5.1).
    assert round(random_baseline(ref)["pa"].mean(), 1) == 4.8
