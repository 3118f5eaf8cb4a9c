"""Bahaj et al. Figure 2: precision against the scale of the answer.

:func:`hit_scale_figure` takes :func:`families.bahaj.metrics.overprecision.hit_by_question` (one point per agent
and question: the hit average of its intervals over every level and trial, against s = sign(a)·log10(1 + |a|) of
its true answer a) and :func:`~families.bahaj.metrics.overprecision.hit_by_scale` (the hit rate per band of s),
and draws one panel per agent: the questions as points, the bands' hit rates as a line (text reading).

:func:`answer_histogram_figure` draws Figure 2 as the authors did (T2:56 ``scale_vs_precision``, authors' reading):
one panel per agent, the **count** of hits ("correct", blue) and misses ("incorrect", green; unparsed answers
included) per bin of the true answer, side by side, 49 bins on [−20, 20], x limits ±20, y label "Count", legend
upper right. Pure matplotlib (Agg).
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

POINTS, LINE = "#1f4fd1", "#c2410c"
CORRECT, INCORRECT = "tab:blue", "tab:green"


def hit_scale_figure(per_question: pd.DataFrame, per_band: pd.DataFrame, title: str | None = None) -> Figure:
    """One panel per agent: hit average (%) of each question against the signed log scale of its answer."""
    agents = list(dict.fromkeys(per_question["agent"])) or ["-"]
    cols = min(len(agents), 3)
    rows = (len(agents) + cols - 1) // cols
    fig = Figure(figsize=(3.6 * cols + 0.4, 3.0 * rows + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax, agent in zip(axes, agents):
        points = per_question[per_question["agent"] == agent]
        ax.scatter(points["scale"], points["hit"], s=14, color=POINTS, alpha=0.7, label="questions", gid=f"q|{agent}")
        bands = per_band[per_band["agent"] == agent].sort_values("band")
        ax.plot(bands["band"] + 0.5, bands["hit"], marker="o", color=LINE, label="band mean", gid=f"band|{agent}")
        ax.set_title(agent, fontsize=9)
        ax.set_ylim(-5, 105)
        ax.set_xlabel("sign(a)·log10(1 + |a|)")
        ax.set_ylabel("hit average (%)")
    for ax in axes[len(agents):]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=2, fontsize=8)
    fig.suptitle(title or "Hit average against the scale of the answer\n(Bahaj et al., Fig. 2)", fontsize=10)
    return fig


def answer_histogram_figure(counts: pd.DataFrame, title: str | None = None) -> Figure:
    """One panel per agent: side-by-side count bars of hits and misses per bin of the true answer
    (:func:`families.bahaj.metrics.overprecision.answer_histogram`)."""
    agents = list(dict.fromkeys(counts["agent"])) or ["-"]
    cols = min(len(agents), 3)
    rows = (len(agents) + cols - 1) // cols
    fig = Figure(figsize=(3.8 * cols + 0.4, 3.0 * rows + 0.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False).ravel())
    for ax, agent in zip(axes, agents):
        bins = counts[counts["agent"] == agent].sort_values("bin")
        width = (bins["bin_high"] - bins["bin_low"]).to_numpy() / 2
        left = bins["bin_low"].to_numpy()
        ax.bar(left, bins["hits"], width=width, align="edge", color=CORRECT, label="correct", gid=f"hits|{agent}")
        ax.bar(left + width, bins["misses"], width=width, align="edge", color=INCORRECT, label="incorrect",
               gid=f"misses|{agent}")
        ax.set_xlim(-20, 20)
        ax.set_title(agent, fontsize=9)
        ax.set_xlabel("true answer")
        ax.set_ylabel("Count")
        ax.legend(loc="upper right", fontsize=7)
    for ax in axes[len(agents):]:
        ax.set_visible(False)
    fig.suptitle(title or "Hits and misses by true answer (Bahaj et al., Fig. 2, as the authors drew it)", fontsize=10)
    return fig
