"""Tang et al. RQ1: model vs model comparisons and the authors' other tests (Mann–Whitney U, Kolmogorov–Smirnov),
the signed median difference, identical constant samples, and the orientation in every table title."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from families.tang.metrics.divergence import brunner_munzel, compare_two, pair_table
from families.tang.report_rq1 import model_pairs


def test_every_measure_by_hand():
    # X = 10 20 30, Y = 20 40 50. Pairs x > y: 30>20 → 1; ties: 20=20 → ½: U of X = 1.5, θ̂ = 1.5/9 = 0.1667.
    # Mann–Whitney p (normal approximation, tie and continuity corrected): μ = 4.5,
    # σ² = 9/12 · (7 − (2³ − 2)/30) = 5.1, z = (|1.5 − 4.5| − ½)/√5.1 = 1.10702 → p = 0.26829.
    # KS: F_X − F_Y at 10, 20, 30, 40 = 1/3, 1/3, 2/3, 1/3 → D = 2/3; exact p for m = n = 3: 8 of the 20
    # paths stay within 1/3 → p = 12/20 = 0.6. Medians 20 and 40: median X − median Y = −20, |…| = 20.
    r = compare_two([10, 20, 30], [20, 40, 50])
    assert r["theta"] == pytest.approx(1 / 6)
    assert r["mwu_u"] == 1.5 and r["mwu_p"] == pytest.approx(0.26829, abs=1e-5)
    assert r["ks_d"] == pytest.approx(2 / 3) and r["ks_p"] == pytest.approx(0.6)
    assert r["median_diff"] == -20 and r["amd"] == 20
    assert (r["n_x"], r["n_y"], r["note"]) == (3, 3, "")
    # swapping X and Y: θ̂ → 1 − θ̂, U → n_X·n_Y − U, the signed difference changes sign, KS and p stay
    s = compare_two([20, 40, 50], [10, 20, 30])
    assert s["theta"] == pytest.approx(5 / 6) and s["mwu_u"] == 7.5 and s["median_diff"] == 20
    assert s["ks_p"] == pytest.approx(0.6) and s["p_value"] == pytest.approx(r["p_value"])


def test_two_identical_constant_samples_give_theta_half_and_p_one_with_a_note():
    bm = brunner_munzel([50, 50, 50], [50, 50])
    assert (bm.theta, bm.p_value, bm.ci_low, bm.ci_high) == (0.5, 1.0, 0.5, 0.5)
    assert "constant and equal" in bm.note
    r = compare_two([50, 50, 50], [50, 50])
    assert (r["mwu_u"], r["mwu_p"], r["ks_d"], r["ks_p"], r["median_diff"], r["kl"]) == (3.0, 1.0, 0.0, 1.0, 0.0, 0.0)
    apart = brunner_munzel([10, 10], [20, 20])
    assert apart.theta == 0.0 and math.isnan(apart.p_value) and "do not overlap" in apart.note


def test_pairs_two_agents_in_one_setting_and_one_agent_in_two():
    models = pd.DataFrame([
        {"agent": a, "setting": s, "label": "likely", "value": v}
        for a, s, values in (("gpt-4 (greedy)", "FCNC (en)", [70, 70, 75]), ("gpt-4 (greedy)", "MCNC (en)", [70, 80, 80]),
                             ("gpt-3.5-turbo (greedy)", "FCNC (en)", [60, 65, 70]))
        for v in values])
    table = model_pairs(models)
    pairs = set(zip(table["x"], table["y"]))
    assert pairs == {("gpt-3.5-turbo (greedy) · FCNC (en)", "gpt-4 (greedy) · FCNC (en)"),  # two agents, one setting
                     ("gpt-4 (greedy) · FCNC (en)", "gpt-4 (greedy) · MCNC (en)")}         # she vs he, one agent
    she_he = table.set_index(["x", "y"]).loc[("gpt-4 (greedy) · FCNC (en)", "gpt-4 (greedy) · MCNC (en)")]
    # X = 70 70 75, Y = 70 80 80: x > y once (75 > 70); ties 70 = 70 twice → θ̂ = (1 + ½·2)/9 = 2/9;
    # medians 70 and 80
    assert she_he["theta"] == pytest.approx(2 / 9) and she_he["median_diff"] == -10
    # a WEP only one side answered is left out; control items never compared
    more = pd.concat([models, pd.DataFrame([{"agent": "gpt-4 (greedy)", "setting": "MCNC (en)", "label": "control",
                                             "value": 50}] * 2)])
    assert set(pair_table({"a": more[more["setting"] == "MCNC (en)"], "b": more[more["setting"] == "MCNC (en)"]},
                          [("a", "b")])["label"]) == {"likely"}


def test_the_report_compares_two_imported_models_and_says_which_is_x(db, tmp_path):
    from surveys.answer_import import import_wide
    from analysis.model_answer_import import ModelAnswerFile, import_model_answers
    from analysis.reports import build_report
    from surveys.models import Study
    from test_analysis_importers import FAGEN
    from test_import_model_answers import write_csv

    study = Study.objects.create(slug="fagen", title="Fagen", instrument="wep_probability")
    import_wide(study, FAGEN)
    for model, likely, unlikely in (("gpt-4", [0.7] * 3, [0.1, 0.2, 0.3]), ("gpt-3.5-turbo", [0.7] * 3, [0.2, 0.4, 0.5])):
        path = write_csv(tmp_path / f"{model}.csv", ["", "a", "b", "c"], [["likely", *likely], ["unlikely", *unlikely]])
        import_model_answers(study, path, ModelAnswerFile(model=model, shape="wide", allow_missing=True))
    report = build_report(study)
    pairs = report.tables()["tang_pairs"].set_index("label")
    assert set(pairs["x"]) == {"gpt-3.5-turbo (greedy) · no context"} and set(pairs["y"]) == {"gpt-4 (greedy) · no context"}
    # identical constant answers to "likely": θ̂ .5, p 1, a note, not NaN
    assert (pairs.loc["likely", "theta"], pairs.loc["likely", "p_value"]) == (0.5, 1.0)
    assert "constant and equal" in pairs.loc["likely", "note"]
    # "unlikely": X = 20 40 50 against Y = 10 20 30 (the hand computation above, swapped)
    row = pairs.loc["unlikely"]
    assert row["theta"] == pytest.approx(5 / 6) and row["mwu_u"] == 7.5 and row["median_diff"] == 20
    assert row["ks_d"] == pytest.approx(2 / 3) and row["ks_p"] == pytest.approx(0.6)
    titles = report.titles()
    assert "X = the sample in column x, Y = the one in column y" in titles["tang_pairs"]
    assert "X = people (" in titles["tang"] and "Y = the model" in titles["tang"]
    # the human-vs-model table keeps its measures and gains the authors' other tests
    tang = report.tables()["tang"]
    assert {"kl", "theta", "p_value", "amd", "median_diff", "mwu_u", "mwu_p", "ks_d", "ks_p"} <= set(tang.columns)
    assert report.meta()["tang_rq1"]["model_pairs"] == 1 if "tang_rq1" in report.meta() else \
        report.meta()["model_pairs"] == 1
