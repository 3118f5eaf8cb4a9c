"""Sileo & Moens figures: accuracy per agent and dataset with 95% intervals and the chance line; the share of
each WEP among the valid verbalisations per dataset (their Appendix C, Table 4, as bars). Pure matplotlib (Agg).
"""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from families.sileo.metrics import DATASET_TITLES  # noqa: E402
from families.sileo.wep_scale import WEP_MEDIANS  # noqa: E402

PALETTE = ("#1f4fd1", "#c2410c", "#1b7837", "#7c3aed", "#b45309", "#0e7490")


def accuracy_bars(accuracy: pd.DataFrame, datasets: list[str], chance: float) -> Figure:
    """Grouped bars: one group per dataset, one bar per agent (accuracy %), Wilson 95% intervals as error bars,
    a dashed line at chance."""
    agents = list(dict.fromkeys(accuracy["agent"]))
    fig = Figure(figsize=(max(4.0, 1.6 * len(datasets) + 0.5 * len(agents)) + 2.2, 3.4), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / max(1, len(agents))
    x = np.arange(len(datasets))
    for k, agent in enumerate(agents):
        rows = accuracy[accuracy["agent"] == agent].set_index("dataset").reindex(datasets)
        heights = rows["accuracy"].to_numpy(dtype=float)
        errors = np.vstack([heights - rows["ci_low"].to_numpy(dtype=float),
                            rows["ci_high"].to_numpy(dtype=float) - heights])
        ax.bar(x + (k - (len(agents) - 1) / 2) * width, heights, width, yerr=errors, capsize=2,
               color=PALETTE[k % len(PALETTE)], label=agent)
    ax.axhline(chance, color="0.4", linestyle="--", linewidth=1, label=f"chance ({chance:g})")
    ax.set_xticks(x, [DATASET_TITLES.get(d, d).replace(" (", "\n(") for d in datasets])
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title("Verbalisation validity: the valid WEP chosen")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the bars, never over them
    return fig


def correct_wep_bars(distribution: pd.DataFrame, datasets: list[str]) -> Figure:
    """One panel per dataset: the share (%) of items whose valid verbalisation uses each WEP, WEPs ordered
    from the highest median probability to the lowest (Appendix C)."""
    weps = list(WEP_MEDIANS)
    fig = Figure(figsize=(3.3 * max(1, len(datasets)), 4.6), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, max(1, len(datasets)), sharey=True))
    for ax, dataset in zip(axes, datasets):
        rows = distribution[distribution["dataset"] == dataset].set_index("wep").reindex(weps)
        ax.barh(np.arange(len(weps)), rows["frequency"].fillna(0).to_numpy(dtype=float), color=PALETTE[0])
        total = int(rows["items"].fillna(0).sum())
        ax.set_title(f"{DATASET_TITLES.get(dataset, dataset)} (n={total})", fontsize=9)
        ax.set_xlabel("frequency (%)")
    axes[0].set_yticks(np.arange(len(weps)), weps, fontsize=8)
    axes[0].invert_yaxis()
    fig.suptitle("WEP of the valid verbalisation", fontsize=10)
    return fig
