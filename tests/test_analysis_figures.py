"""The report's figures show the report's numbers: each histogram grid holds the agent's H(k|u) of the
attention-filtered answers (rows in the reference's expression order, the most frequent bin outlined), and
the true/false figure plots the means and 95% CIs of the truth_means table."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.patches import Rectangle

from families.belem.metrics.agreement import histograms
from analysis.metrics.answers import HUMAN
from analysis.dataset import study_answers
from families.belem.figures import report_figures
from analysis.reports import build_report
from test_analysis_factories import nv_and_v


@pytest.fixture
def figures(imported_nv, belem_dir):
    _, v = nv_and_v(imported_nv, belem_dir)
    report = build_report(v)
    made = dict(report_figures(report))
    yield report, made
    for fig in made.values():
        plt.close(fig)


def test_histogram_grids_hold_each_agents_filtered_histograms(figures):
    report, made = figures
    order = list(report.analysis.reference.index)
    for set_name, answers in (("nv", report.nv_answers), ("v", report.v_answers)):
        expected = histograms(answers, ("agent", "label"))
        ax = made[f"histograms-{set_name}-human"].axes[0]
        shown = np.asarray(ax.images[0].get_array())
        human = expected.xs(HUMAN, level="agent").reindex(order).dropna(how="all")
        assert shown.shape == human.shape == (14, 21)
        np.testing.assert_allclose(shown, human.to_numpy())
        assert [t.get_text().split("  (n=")[0] for t in ax.get_yticklabels()] == list(human.index)
        outlined = sorted((int(p.get_y() + 0.5), int(p.get_x() + 0.5)) for p in ax.patches if isinstance(p, Rectangle))
        assert outlined == [(row, int(np.argmax(human.to_numpy()[row]))) for row in range(len(human))]
    # the excluded humans (a contrarian and a constant answerer) are not in the figure
    everyone = histograms(study_answers(report.nv_study), ("agent", "label")).xs(HUMAN, level="agent")
    nv_grid = np.asarray(made["histograms-nv-human"].axes[0].images[0].get_array())
    assert not np.allclose(nv_grid, everyone.reindex(order).to_numpy())
    model = made["histograms-nv-modelx-greedy"].axes[0]
    expected = histograms(report.nv_answers, ("agent", "label")).xs("modelx (greedy)", level="agent")
    np.testing.assert_allclose(np.asarray(model.images[0].get_array()),
                               expected.reindex([u for u in order if u in expected.index]).to_numpy())


def test_truth_figure_plots_the_means_and_cis(figures):
    report, made = figures
    ax = made["truth-overall"].axes[0]
    overall = report.truth_means.xs("overall", level="label")
    agents = [t.get_text() for t in ax.get_xticklabels()]
    assert agents[0] == "Humans (attention-filtered)" and "modelx (greedy)" in agents
    by_label = {c.get_label(): c for c in ax.containers}
    for statements in ("true", "false"):
        line = by_label[f"{statements} statements"].lines[0]
        means = overall.xs(statements, level="statements")["mean"]
        want = [means.get("human" if a.startswith("Humans") else a, np.nan) for a in agents]
        got = pd.Series(line.get_ydata(), dtype=float)
        np.testing.assert_allclose(got.dropna().to_numpy(), pd.Series(want).dropna().to_numpy())


def test_figures_are_drawn_without_pyplots_global_state(figures):
    """The admin draws these inside web requests, several threads at once: they are plain Figure objects,
    never registered in pyplot's (not thread-safe) global figure list."""
    report, made = figures
    assert made and plt.get_fignums() == []
    assert all(fig.canvas.manager is None for fig in made.values())
