"""Tang et al. figures: RQ1 Brunner–Munzel heat maps and RQ2 consistency bars, checked by content."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from families.tang.metrics.consistency import consistency_scores, random_baseline
from families.tang.metrics.divergence import tang_table
from families.tang.figures_rq1 import divergence_heatmap, divergence_heatmaps, significance_stars
from families.tang.figures_rq2 import consistency_bars, standard_error
from families.tang.design_rq2 import PAPER_NARROW, generate

WIDE = [150, 60, 101, 140, 22, 95, 130, 88, 177, 45, 99, 110, 70, 135, 100, 65, 180, 118, 84, 102]


@pytest.fixture(scope="module")
def rq1_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rows = []
    for label, centre in (("likely", 70), ("about even", 50), ("unlikely", 20)):
        rows += [{"respondent": f"h{i}", "agent": "human", "label": label, "value": v}
                 for i, v in enumerate(rng.normal(centre, 10, 60).clip(0, 100))]
        # gpt: shifted far on "likely", the same distribution elsewhere; llama: always shifted
        for agent, shift in (("gpt", 25 if label == "likely" else 0), ("llama", 15)):
            rows += [{"respondent": f"{agent}{i}", "agent": agent, "label": label, "value": v}
                     for i, v in enumerate(rng.normal(centre + shift, 10, 30).clip(0, 100))]
    return tang_table(pd.DataFrame(rows))


def test_stars():
    assert [significance_stars(p) for p in (0.001, 0.0099, 0.01, 0.049, 0.05, 0.09, 0.1, 0.5, np.nan, None)] == \
        ["***", "***", "**", "**", "*", "*", "", "", "", ""]


def test_heatmap_shows_the_table(rq1_table):
    fig = divergence_heatmap(rq1_table, title="Humans vs models")
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["likely", "about even", "unlikely"]  # survey order
    assert [t.get_text() for t in ax.get_xticklabels()] == ["gpt", "llama"]
    grid = ax.images[0].get_array()
    assert grid[0, 0] == pytest.approx(rq1_table.loc[("gpt", "likely"), "kl"])
    assert grid[2, 1] == pytest.approx(rq1_table.loc[("llama", "unlikely"), "kl"])
    texts = {(round(t.get_position()[1]), round(t.get_position()[0])): t.get_text() for t in ax.texts}
    for (i, label) in enumerate(["likely", "about even", "unlikely"]):
        for j, agent in enumerate(["gpt", "llama"]):
            row = rq1_table.loc[(agent, label)]
            assert texts[(i, j)].split("\n")[0] == f"{row['kl']:.2f}"
            assert texts[(i, j)].endswith(significance_stars(row["p_value"]) or f"{row['kl']:.2f}")
    assert "***" in texts[(0, 0)] and "*" not in texts[(1, 0)]  # gpt differs on likely only
    assert ax.get_title() == "Humans vs models" and fig.axes[-1].get_ylabel() == "KL divergence"


def test_heatmaps_share_one_scale_and_grey_out_missing_pairs(rq1_table):
    only_gpt = rq1_table.loc[["gpt"]]
    fig = divergence_heatmaps({"A": rq1_table, "B": only_gpt.drop(("gpt", "unlikely"))}, value="amd",
                              agents=["gpt", "llama"])
    a, b = fig.axes[0], fig.axes[1]
    assert a.images[0].get_clim() == b.images[0].get_clim() == (0, rq1_table["amd"].max())
    assert np.ma.is_masked(b.images[0].get_array()[2, 0]) and np.ma.is_masked(b.images[0].get_array()[0, 1])
    assert len(b.texts) == 2  # only the present pairs are annotated
    with pytest.raises(ValueError):
        divergence_heatmaps({})


@pytest.fixture(scope="module")
def rq2():
    items = pd.DataFrame([f["extra"] for f in generate(numbers=[PAPER_NARROW, WIDE])])
    answers = pd.concat([items.assign(agent="standard", choice=items["truth_choice"]),
                         items.assign(agent="cot", choice="B")], ignore_index=True)
    return items, answers


def test_consistency_bars(rq2):
    items, answers = rq2
    scores = consistency_scores(answers, by="scenario")
    base = random_baseline(items, by="scenario", draws=10, seed=1)
    fig = consistency_bars(scores, base, by="scenario", agents=["standard", "cot"])
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in panels] == ["Pair-wise", "Monotonicity", "Empirical", "Empirical monotonicity"]
    empirical = panels[2]
    assert [t.get_text() for t in empirical.get_xticklabels()] == ["height", "score", "sound"]
    bars = {c.get_label(): c for c in empirical.containers if isinstance(c, BarContainer)}
    heights = {name: [p.get_height() for p in bars[name].patches] for name in ("standard", "cot", "Random")}
    assert {p.get_gid() for p in bars["cot"].patches} == {"empirical|cot"}
    assert heights["standard"] == [100.0, 100.0, 100.0]
    assert heights["cot"] == pytest.approx(scores.xs("cot").xs("empirical", level="metric")["score"].tolist())
    assert heights["Random"] == pytest.approx(base.xs("random").xs("empirical", level="metric")["score"].tolist())
    # error bars: a share of 100 % has no standard error; the constant responder's do
    assert standard_error(pd.Series([100.0, 50.0]), pd.Series([120, 100])).tolist() == pytest.approx([0.0, 5.0])
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels == ["standard", "cot", "Random"]


def test_consistency_bars_by_choices_without_baseline(rq2):
    _, answers = rq2
    fig = consistency_bars(consistency_scores(answers, by="choices"), by="choices", metrics=["pairwise", "empirical"])
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert len(panels) == 2 and [t.get_text() for t in panels[0].get_xticklabels()] == ["3", "5"]
    assert [c.get_label() for c in panels[0].containers if isinstance(c, BarContainer)] == ["cot", "standard"]
