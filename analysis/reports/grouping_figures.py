"""The figure of one grouping field (analysis/reports/grouping.py), for every section: left, each group's mean of
the section's quantity with its 95% interval, the humans (grey) beside each model; right, each between-group
difference a − b with Welch's 95% interval, the humans' beside each model's (a dotted line at 0). Plain
matplotlib ``Figure`` (never pyplot; Agg), as the other *_figures modules.
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from analysis.metrics.answers import HUMAN  # noqa: E402
from analysis.reports.generic_figures import HUMAN_COLOUR, _colour  # noqa: E402


def _agents(table: pd.DataFrame) -> list[str]:
    names = list(dict.fromkeys(table["agent"].astype(str)))
    return ([HUMAN] if HUMAN in names else []) + [a for a in names if a != HUMAN]


def _errors(rows: pd.DataFrame, centre: str) -> np.ndarray:
    mid = rows[centre].to_numpy(dtype=float)
    low = np.nan_to_num(mid - rows["ci_low"].to_numpy(dtype=float), nan=0.0)
    high = np.nan_to_num(rows["ci_high"].to_numpy(dtype=float) - mid, nan=0.0)
    return np.vstack([low, high])


def grouping_figure(groups: pd.DataFrame, differences: pd.DataFrame, title: str, quantity: str) -> Figure:
    """``groups``: group_table rows of one field; ``differences``: group_differences rows of the same field."""
    agents = _agents(groups)
    models = [a for a in agents if a != HUMAN]
    names = list(dict.fromkeys(groups["group"].astype(str)))
    pairs = list(dict.fromkeys(zip(differences["group_a"], differences["group_b"])))
    fig = Figure(figsize=(11, max(3.6, 0.45 * max(len(pairs), 1) * max(len(agents), 1) + 1.8)), layout="constrained")
    left, right = fig.subplots(1, 2, width_ratios=[1.2, 1])
    width = 0.8 / max(1, len(agents))
    x = np.arange(len(names))
    for k, agent in enumerate(agents):
        rows = groups[groups["agent"] == agent].set_index("group").reindex(names)
        colour = HUMAN_COLOUR if agent == HUMAN else _colour(models.index(agent))
        label = "Humans" if agent == HUMAN else agent
        left.errorbar(x + (k - (len(agents) - 1) / 2) * width, rows["mean"].to_numpy(dtype=float),
                      yerr=_errors(rows, "mean"), fmt="o", capsize=3, color=colour, label=label,
                      gid=f"groups|{agent}")
    left.set_xticks(x, names, fontsize=8, rotation=20 if len(names) > 4 else 0)
    left.set_ylabel(f"mean {quantity}")
    left.set_title("per group (95% interval)", fontsize=9, loc="left")
    left.grid(axis="y", alpha=0.3)
    left.legend(fontsize=7, loc="best")
    y = np.arange(len(pairs))
    for k, agent in enumerate(agents):
        rows = differences[differences["agent"] == agent]
        rows = rows.set_index(["group_a", "group_b"]).reindex(pairs)
        colour = HUMAN_COLOUR if agent == HUMAN else _colour(models.index(agent))
        right.errorbar(rows["difference"].to_numpy(dtype=float), y + (k - (len(agents) - 1) / 2) * width,
                       xerr=_errors(rows, "difference"), fmt="s", capsize=3, color=colour,
                       gid=f"differences|{agent}")
    right.axvline(0, color="0.4", linestyle=":", linewidth=1)
    right.set_yticks(y, [f"{a} − {b}" for a, b in pairs], fontsize=8)
    right.invert_yaxis()
    right.set_xlabel(f"difference of means ({quantity})")
    right.set_title("between groups (Welch 95% interval)", fontsize=9, loc="left")
    right.grid(axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=10, x=0.01, ha="left")
    return fig
