"""Figures of the generic section (plain matplotlib ``Figure`` objects, never pyplot; Agg).

One figure per item group, each agent's answers beside the humans':

- scale: the humans' histogram as grey bars over the bins, each model agent's as a line with markers;
- choice / pick: grouped bars, one group per option, the humans' bar first;
- interval: each agent's mean interval (mean lower to mean upper bound) as a horizontal bar, labelled with its
  mean width and coverage;
- free text: none (counted only).

Then one figure per broken-down questionnaire field: the humans of each answer to it, drawn the same way beside
all humans (over every item).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from django.utils.text import slugify  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from analysis.metrics.answers import HUMAN  # noqa: E402
from analysis.metrics.generic import interval_table, option_shares, scale_histograms  # noqa: E402

MAX_FIGURES = 24  # item-group figures drawn at most (the tables hold every group)

if TYPE_CHECKING:  # pragma: no cover
    from analysis.reports.generic import GenericSection

HUMAN_COLOUR = "#9ca3af"
PALETTE = ["#1f4fd1", "#c2410c", "#1b7837", "#7c3aed", "#b45309", "#0e7490", "#be185d", "#4b5563"]


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _name(agent: str) -> str:
    return "Humans" if agent == HUMAN else agent


def scale_figure(hist: pd.DataFrame, title: str, step: float) -> Figure:
    """``hist``: scale_histograms of one group (agent, bin, count, share)."""
    fig = Figure(figsize=(9, 4.2), layout="constrained")
    ax = fig.subplots()
    agents = list(dict.fromkeys(hist["agent"]))
    others = [a for a in agents if a != HUMAN]
    for agent in agents:
        rows = hist[hist["agent"] == agent]
        n = int(rows["count"].sum())
        if agent == HUMAN:
            ax.bar(rows["bin"], rows["share"], width=0.8 * step, color=HUMAN_COLOUR, label=f"Humans (n={n})",
                   gid="humans")
        else:
            i = others.index(agent)
            ax.plot(rows["bin"], rows["share"], marker="o", markersize=4, linewidth=1.3, color=_colour(i),
                    label=f"{agent} (n={n})", gid=f"agent|{agent}")
    bins = np.sort(hist["bin"].unique())
    if len(bins) <= 25:
        ax.set_xticks(bins, [f"{b:g}" for b in bins], fontsize=8)
    ax.set_xlabel("answer")
    ax.set_ylabel("share of the agent's answers")
    ax.set_ylim(0, max(0.05, float(hist["share"].max()) * 1.1 if len(hist) else 1))
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=10, loc="left")
    return fig


def choice_figure(shares: pd.DataFrame, title: str) -> Figure:
    """``shares``: option_shares of one group (agent, option, count, share)."""
    options = list(dict.fromkeys(shares["option"]))
    agents = list(dict.fromkeys(shares["agent"]))
    fig = Figure(figsize=(max(6.0, 0.9 * len(options) * max(1, len(agents)) * 0.5 + 3), 4.2), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(options))
    width = 0.8 / max(1, len(agents))
    others = [a for a in agents if a != HUMAN]
    for j, agent in enumerate(agents):
        rows = shares[shares["agent"] == agent].set_index("option").reindex(options)
        colour = HUMAN_COLOUR if agent == HUMAN else _colour(others.index(agent))
        n = int(rows["count"].fillna(0).sum())
        ax.bar(x - 0.4 + width * (j + 0.5), rows["share"].fillna(0), width=width, color=colour,
               label=f"{_name(agent)} (n={n})", gid=f"agent|{agent}")
    ax.set_xticks(x, options, fontsize=9)
    ax.set_xlabel("option")
    ax.set_ylabel("share of the agent's answers")
    ax.set_ylim(0, 1.05)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="best")
    ax.set_title(title, fontsize=10, loc="left")
    return fig


def interval_figure(table: pd.DataFrame, title: str) -> Figure:
    """``table``: interval_table of one group (agent, mean_lower, mean_upper, mean_width, coverage, …)."""
    rows = table.dropna(subset=["mean_lower", "mean_upper"]).reset_index(drop=True)
    fig = Figure(figsize=(8, 0.5 * len(rows) + 1.8), layout="constrained")
    ax = fig.subplots()
    others = [a for a in rows["agent"] if a != HUMAN]
    for i, row in rows.iterrows():
        colour = HUMAN_COLOUR if row["agent"] == HUMAN else _colour(others.index(row["agent"]))
        ax.barh(i, row["mean_upper"] - row["mean_lower"], left=row["mean_lower"], height=0.5, color=colour,
                gid=f"agent|{row['agent']}")
        cover = "" if pd.isna(row["coverage"]) else f", coverage {row['coverage'] * 100:.0f}%"
        ax.annotate(f"width {row['mean_width']:.3g}{cover}", (row["mean_upper"], i), xytext=(4, 0),
                    textcoords="offset points", va="center", fontsize=8)
    ax.set_yticks(range(len(rows)), [_name(a) for a in rows["agent"]], fontsize=8)
    ax.invert_yaxis()
    ax.margins(x=0.3)  # room for the labels right of the bars
    ax.set_xlabel("mean lower bound to mean upper bound")
    ax.set_title(title, fontsize=10, loc="left")
    return fig


def _readable(section: "GenericSection", answers: pd.DataFrame) -> bool:
    """Whether any answer of ``answers`` can be drawn (a value on the scale, a choice, both bounds)."""
    shape = section.spec.shape
    if shape == "scale":
        return bool((section.spec.binning.index(answers["value"].to_numpy(dtype=float)) >= 0).any())
    if shape in ("choice", "pick"):
        return bool((answers["choice"].fillna("") != "").any())
    if shape == "interval":
        return bool((answers["lower"].notna() & answers["upper"].notna()).any())
    return False


def _figure(section: "GenericSection", answers: pd.DataFrame, title: str) -> Figure | None:
    """The figure of one set of answers for the section's shape; None when nothing can be drawn."""
    spec = section.spec
    if not _readable(section, answers):
        return None
    if spec.shape == "scale":
        step = float(np.diff(spec.binning.centres).min()) if len(spec.binning.centres) > 1 else 1.0
        return scale_figure(scale_histograms(answers, spec.binning), title, step)
    if spec.shape in ("choice", "pick"):
        return choice_figure(option_shares(answers, spec.options), title)
    if spec.shape == "interval":
        return interval_figure(interval_table(answers), title)
    return None


def section_figures(section: "GenericSection") -> Iterator[tuple[str, Figure]]:
    """(file stem, figure): one per item group (at most MAX_FIGURES), then one per questionnaire field."""
    note = "" if section.humans else (" (no human answers kept by the attention filter)" if section.humans_excluded
                                      else " (no human answers yet)")
    for i, (name, answers) in enumerate(section.groups()):
        if i >= MAX_FIGURES:
            break
        fig = _figure(section, answers, f"{section.study.title}: {name}{note}")
        if fig is not None:
            yield f"generic-{slugify(name) or i}", fig
    for name, frame in section.breakdown_frames():
        fig = _figure(section, frame, f"{section.study.title}: the humans by questionnaire answer ({name}), "
                                      "beside all humans")
        if fig is not None:
            yield f"generic-by-{slugify(name) or 'field'}", fig
