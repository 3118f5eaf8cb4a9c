"""Figures of the study report (matplotlib ``Figure`` objects, never pyplot: the admin draws them inside web
requests, several threads at once, and pyplot's global figure list is not thread-safe).

- :func:`histogram_grid`: an agent's answer distribution per expression, rows = expressions, columns =
  bins 0…100, shading = share of answers, the most frequent bin of each row outlined (Belem Fig. 4/5/13).
- :func:`truth_overall`: mean answer on true vs false statements per agent, 95% CIs (Belem Fig. 6).
- :func:`truth_by_expression`: the same per expression, one panel per agent, with the non-verifiable
  mean alongside (Belem Fig. 14).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from django.utils.text import slugify  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from analysis.metrics.answers import HUMAN  # noqa: E402
from families.belem.metrics.agreement import answer_counts, histograms  # noqa: E402

if TYPE_CHECKING:  # pragma: no cover
    from families.belem.report import StudyReport

COLOURS = {"true": "#1b7837", "false": "#c2410c", "non-verifiable": "#4b5563"}
MARKERS = {"true": "o", "false": "s", "non-verifiable": "D"}
HIGHLIGHT = "#1f4fd1"


def _display(agent: str, notes: dict[str, str] | None = None) -> str:
    name = "Humans (attention-filtered)" if agent == HUMAN else agent
    if notes and agent in notes:
        name += f"\n(not comparable: {notes[agent]})"
    return name


def histogram_grid(shares: pd.DataFrame, title: str, counts: pd.Series | None = None) -> Figure:
    """Heat map of one agent's H(k|u): rows = expressions (in ``shares``' order), columns = bins."""
    data = shares.to_numpy(dtype=float)
    rows, cols = data.shape
    fig = Figure(figsize=(12, 0.42 * rows + 1.6), layout="constrained")
    ax = fig.subplots()
    ax.imshow(data, cmap="Greys", vmin=0, vmax=max(0.6, float(np.nanmax(data)) if data.size else 1), aspect="auto")
    for r in range(rows):
        for c in range(cols):
            share = data[r, c]
            if share >= 0.005:
                ax.text(c, r, f"{share * 100:.0f}", ha="center", va="center", fontsize=8,
                        color="white" if share > 0.35 else "black")
        if np.nansum(data[r]) > 0:
            best = int(np.nanargmax(data[r]))
            ax.add_patch(Rectangle((best - 0.5, r - 0.5), 1, 1, fill=False, edgecolor=HIGHLIGHT, linewidth=2))
    labels = list(shares.index)
    if counts is not None:
        labels = [f"{u}  (n={int(counts.get(u, 0))})" for u in labels]
    ax.set_yticks(range(rows), labels, fontsize=9)
    ax.set_xticks(range(cols), [str(int(float(c))) for c in shares.columns], fontsize=9)
    ax.set_xlabel("answer (bin centre); cells: % of the expression's answers; box: most frequent bin")
    ax.set_title(title, fontsize=11, loc="left")
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return fig


def _errorbar(ax, x, table: pd.DataFrame, statements: str, offset: float) -> None:
    rows = table[table["statements"] == statements]
    if rows.empty:
        return
    xs = np.asarray(x, dtype=float)[: len(rows)] + offset
    lower = (rows["mean"] - rows["ci_low"]).fillna(0).to_numpy()
    upper = (rows["ci_high"] - rows["mean"]).fillna(0).to_numpy()
    ax.errorbar(xs, rows["mean"], yerr=[lower, upper], fmt=MARKERS[statements], color=COLOURS[statements],
                capsize=3, markersize=5, linewidth=1.2, label=f"{statements} statements")


def truth_overall(means: pd.DataFrame, notes: dict[str, str] | None = None) -> Figure:
    """Mean answer (95% CI) on true and false statements (and non-verifiable ones) per agent; ``notes``
    (agent → text) marks the agents that are not comparable."""
    overall = means.xs("overall", level="label").reset_index()
    agents = list(dict.fromkeys(overall["agent"]))
    fig = Figure(figsize=(max(6.0, 1.3 * len(agents) + 2), 4.6), layout="constrained")
    ax = fig.subplots()
    x = np.arange(len(agents))
    for statements, offset in (("non-verifiable", -0.2), ("true", 0.0), ("false", 0.2)):
        part = overall[overall["statements"] == statements].set_index("agent").reindex(agents).reset_index()
        part["statements"] = statements
        if part["mean"].notna().any():
            _errorbar(ax, x, part, statements, offset)
    ax.set_xticks(x, [_display(a, notes) for a in agents], rotation=20, ha="right", fontsize=9)
    ax.set_ylabel("mean answer (0–100), 95% CI")
    ax.set_ylim(0, 100)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9, loc="best")
    ax.set_title("Knowledge bias: mean answer on true vs false statements", fontsize=11, loc="left")
    return fig


def truth_by_expression(means: pd.DataFrame, order: list[str], notes: dict[str, str] | None = None) -> Figure:
    """One panel per agent: mean answer (95% CI) per expression on true, false and non-verifiable statements."""
    table = means.drop(index="overall", level="label").reset_index()
    agents = list(dict.fromkeys(table["agent"]))
    labels = [u for u in order if u in set(table["label"])]
    ncols = 2 if len(agents) > 1 else 1
    nrows = int(np.ceil(len(agents) / ncols))
    fig = Figure(figsize=(7.5 * ncols, 4.2 * nrows), layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True)
    x = np.arange(len(labels))
    for ax, agent in zip(axes.flat, agents):
        part = table[table["agent"] == agent]
        for statements, offset in (("non-verifiable", -0.22), ("true", 0.0), ("false", 0.22)):
            rows = part[part["statements"] == statements].set_index("label").reindex(labels).reset_index()
            rows["statements"] = statements
            if rows["mean"].notna().any():
                _errorbar(ax, x, rows, statements, offset)
        ax.set_title(_display(agent, notes), fontsize=10, loc="left")
        ax.set_xticks(x, labels, rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, 100)
        ax.grid(axis="y", alpha=0.3)
    for ax in axes.flat[len(agents):]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("mean answer, 95% CI")
    axes[0, 0].legend(fontsize=8, loc="upper right")
    fig.suptitle("Mean answer per expression on true, false and non-verifiable statements", x=0.01,
                 ha="left", fontsize=11)
    return fig


def report_figures(report: "StudyReport") -> Iterator[tuple[str, Figure]]:
    """(file stem, figure) of every figure of the report: a histogram grid per agent and statement set,
    then the true/false figures for a verifiable study."""
    order = list(report.analysis.reference.index)
    notes = report.not_comparable()
    sets = [("nv", report.nv_answers)]
    if report.v_answers is not None and not report.v_answers.empty:
        sets.append(("v", report.v_answers))
    for set_name, answers in sets:
        if answers.empty:
            continue
        shares = histograms(answers, ("agent", "label"))
        counts = answers[answers["label"] != "control"].groupby(["agent", "label"], sort=False).size()
        other = answer_counts(answers, ("agent",))["non_number_mass"]
        agents = [HUMAN] + sorted(a for a in shares.index.get_level_values("agent").unique() if a != HUMAN)
        for agent in agents:
            if agent not in shares.index.get_level_values("agent"):
                continue
            own = shares.xs(agent, level="agent")
            own = own.reindex([u for u in order if u in own.index] + [u for u in own.index if u not in order])
            title = f"{_display(agent)}: answers per expression, {report.sets[set_name]}"
            if agent in notes:
                title += f"\n(not comparable: {notes[agent]})"
            if pd.notna(other.get(agent)):
                title += (f"\n(distribution answers, shares over numbers; mean mass on non-numbers "
                          f"{other[agent] * 100:.1f}%, not shown)")
            yield (f"histograms-{set_name}-{slugify(agent) or 'agent'}",
                   histogram_grid(own, title, counts.xs(agent, level="agent") if agent in counts.index else None))
    means = report.truth_means
    if means is not None and not means.empty:
        statements = means.index.get_level_values("statements")
        with_truth = set(means.index.get_level_values("agent")[statements.isin(["true", "false"])])
        means = means[means.index.get_level_values("agent").isin(with_truth)]
        if not means.empty:
            yield "truth-overall", truth_overall(means, notes)
            yield "truth-by-expression", truth_by_expression(means, order, notes)
