"""Tang et al. RQ2 figures: consistency per agent and condition with the random baseline (like Figs. 5–6).

:func:`consistency_bars` takes :func:`families.tang.metrics.consistency.consistency_scores` (index agent,
``by``, metric; columns score 0–100 and n) and optionally :func:`~families.tang.metrics.consistency.random_baseline`
for the same ``by``, and draws one panel per metric: groups = the levels of ``by`` (scenario for Fig. 5,
choices or numbers for Fig. 6), one bar per agent (e.g. standard and CoT prompting) and a hatched grey bar for the
random responder. Error bars: the standard error of a share of n units, 100·√(p(1−p)/n) with p = score/100,
for agents; the standard deviation over the random draws for the baseline. Pure matplotlib (Agg).
"""
from __future__ import annotations

from collections.abc import Sequence

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from families.tang.metrics.consistency import METRIC_TITLES, METRICS  # noqa: E402

RANDOM = "random"
PALETTE = ("#1f4fd1", "#c2410c", "#1b7837", "#7c3aed", "#b45309", "#0e7490")
BY_TITLES = {"scenario": "Scenario", "choices": "Number of choices", "numbers": "Range of the numbers"}


def standard_error(score: pd.Series, n: pd.Series) -> pd.Series:
    """100·√(p(1−p)/n) for scores on 0–100 over n units."""
    p = score / 100
    return 100 * np.sqrt(p * (1 - p) / n)


def _levels(frame: pd.DataFrame, by: str | None) -> pd.DataFrame:
    """The table with a ``group`` column (the level of ``by``, or "all")."""
    data = frame.reset_index()
    data["group"] = data[by].astype(str) if by else "all"
    return data


def consistency_bars(scores: pd.DataFrame, baseline: pd.DataFrame | None = None, by: str | None = "scenario",
                     metrics: Sequence[str] = METRICS, agents: Sequence[str] | None = None,
                     title: str | None = None) -> Figure:
    """One panel per metric: bars per agent (and the random baseline) for each level of ``by``."""
    data = _levels(scores, by)
    agents = list(agents) if agents is not None else list(dict.fromkeys(data["agent"]))
    groups = list(dict.fromkeys(data.sort_values(by)["group"])) if by else ["all"]
    base = _levels(baseline, by) if baseline is not None else None
    series = [*agents, *([RANDOM] if base is not None else [])]
    fig = Figure(figsize=(3.2 * min(len(metrics), 2) + 0.8, 2.9 * ((len(metrics) + 1) // 2) + 0.6),
                 layout="constrained")
    axes = fig.subplots((len(metrics) + 1) // 2, min(len(metrics), 2), squeeze=False).ravel()
    width = 0.8 / len(series)
    x = np.arange(len(groups))
    for ax, metric in zip(axes, metrics):
        for k, name in enumerate(series):
            source = base if name == RANDOM else data[data["agent"] == name]
            rows = source[source["metric"] == metric].set_index("group").reindex(groups)
            heights = rows["score"].to_numpy(dtype=float)
            if name == RANDOM:
                errors = rows["sd"].to_numpy(dtype=float) if "sd" in rows else None
                style = {"color": "#d1d5db", "hatch": "//", "edgecolor": "#6b7280", "label": "Random"}
            else:
                errors = standard_error(rows["score"], rows["n"]).to_numpy(dtype=float)
                style = {"color": PALETTE[k % len(PALETTE)], "label": name}
            ax.bar(x - 0.4 + width * (k + 0.5), heights, width, yerr=errors, capsize=2, gid=f"{metric}|{name}",
                   **style)
        ax.set_title(METRIC_TITLES.get(metric, metric), fontsize=10)
        ax.set_xticks(x, groups)
        ax.set_ylim(0, 105)
        ax.set_ylabel("consistency (0–100)")
        if by:
            ax.set_xlabel(BY_TITLES.get(by, by))
    for ax in axes[len(metrics):]:
        ax.set_visible(False)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=len(series), fontsize=8)
    if title:
        fig.suptitle(title)
    return fig
