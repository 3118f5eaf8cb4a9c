"""Tang et al. RQ1 figures: heat maps of the human–model divergence per WEP (like the paper's Figs. 2–4).

:func:`divergence_heatmap` draws one comparison table — the output of
:func:`families.tang.metrics.divergence.tang_table`, index (agent, WEP) — as a grid of WEPs (rows) × agents
(columns), shaded by a measure (KL divergence by default; darker = more divergent) and annotated with the
value and the Brunner–Munzel significance stars (* p < 0.1, ** p < 0.05, *** p < 0.01: the paper's 90, 95 and
99% levels). :func:`divergence_heatmaps` puts several such tables side by side on one colour scale (Fig. 4:
ERNIE vs humans, English vs Chinese, GPT vs ERNIE). Pure matplotlib (Agg); each returns a Figure.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


# The 17 WEPs in the Fagen-Ulmschneider survey's order (rows of the heat maps when all are present).
WEP_ORDER: tuple[str, ...] = (
    "almost certain", "highly likely", "very good chance", "probable", "likely", "we believe", "probably",
    "better than even", "about even", "we doubt", "improbable", "unlikely", "probably not", "little chance",
    "almost no chance", "highly unlikely", "chances are slight",
)
VALUE_TITLES = {"kl": "KL divergence", "amd": "absolute median difference", "theta": "Brunner–Munzel θ̂"}
LEVELS: tuple[tuple[float, str], ...] = ((0.01, "***"), (0.05, "**"), (0.1, "*"))


def significance_stars(p: float | None) -> str:
    """"***" for p < 0.01, "**" for p < 0.05, "*" for p < 0.1, "" otherwise (NaN/None: "")."""
    if p is None or not np.isfinite(p):
        return ""
    for threshold, stars in LEVELS:
        if p < threshold:
            return stars
    return ""


def heatmap_frames(table: pd.DataFrame, value: str = "kl", agents: Sequence[str] | None = None,
                   labels: Sequence[str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(values, stars): WEPs × agents grids of ``value`` and of the p-value's stars (NaN / "" where absent)."""
    if not isinstance(table.index, pd.MultiIndex) or table.index.nlevels != 2:
        raise ValueError("expected a tang_table: index (agent, WEP)")
    if value not in table.columns or "p_value" not in table.columns:
        raise ValueError(f"the table has no {value!r} or 'p_value' column")
    values = table[value].unstack(0)
    p = table["p_value"].unstack(0)
    if agents is None:
        agents = list(values.columns)
    if labels is None:
        present = set(values.index)
        labels = [w for w in WEP_ORDER if w in present] + sorted(present - set(WEP_ORDER))
    values = values.reindex(index=list(labels), columns=list(agents)).astype(float)
    stars = p.reindex(index=list(labels), columns=list(agents)).apply(lambda col: col.map(significance_stars))
    return values, stars.fillna("")


def _draw(ax: Axes, values: pd.DataFrame, stars: pd.DataFrame, vmin: float, vmax: float, cmap: str,
          fmt: str, title: str | None):
    data = np.ma.masked_invalid(values.to_numpy(dtype=float))
    colours = matplotlib.colormaps[cmap].with_extremes(bad="#e5e7eb")
    image = ax.imshow(data, cmap=colours, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(values.shape[1]), [str(c) for c in values.columns], rotation=30, ha="right")
    ax.set_yticks(range(values.shape[0]), [str(r) for r in values.index])
    mid = (vmin + vmax) / 2
    for i in range(values.shape[0]):
        for j in range(values.shape[1]):
            v = values.iat[i, j]
            if np.isnan(v):
                continue
            text = format(v, fmt) + (f"\n{stars.iat[i, j]}" if stars.iat[i, j] else "")
            ax.text(j, i, text, ha="center", va="center", fontsize=7,
                    color="white" if v > mid else "black")
    if title:
        ax.set_title(title, fontsize=10)
    return image


def divergence_heatmap(table: pd.DataFrame, value: str = "kl", agents: Sequence[str] | None = None,
                       labels: Sequence[str] | None = None, title: str | None = None, cmap: str = "Reds",
                       fmt: str = ".2f") -> Figure:
    """One heat map of a :func:`tang_table`: WEPs × agents shaded by ``value`` ("kl", "amd", …), each cell
    annotated with the value and its Brunner–Munzel stars; absent pairs grey."""
    return divergence_heatmaps({title or "": table}, value=value, agents=agents, labels=labels, cmap=cmap, fmt=fmt)


def divergence_heatmaps(panels: Mapping[str, pd.DataFrame], value: str = "kl",
                        agents: Sequence[str] | None = None, labels: Sequence[str] | None = None,
                        cmap: str = "Reds", fmt: str = ".2f") -> Figure:
    """Several comparison tables side by side (panel title → :func:`tang_table`), the same WEP rows (all the
    panels' WEPs by default), one shared colour scale (0 to the largest value; θ̂ on 0–1) and one colour bar."""
    if not panels:
        raise ValueError("no comparison table to draw")
    if labels is None:  # the same rows in every panel: the union of their WEPs, in the survey's order
        present = set().union(*(set(t.index.get_level_values(1)) for t in panels.values()))
        labels = [w for w in WEP_ORDER if w in present] + sorted(present - set(WEP_ORDER))
    frames = {name: heatmap_frames(t, value, agents, labels) for name, t in panels.items()}
    finite = np.concatenate([v.to_numpy(dtype=float).ravel() for v, _ in frames.values()])
    finite = finite[np.isfinite(finite)]
    vmin, vmax = (0.0, 1.0) if value == "theta" else (0.0, float(finite.max()) if finite.size else 1.0)
    if vmax <= vmin:
        vmax = vmin + 1.0
    n_rows = max(v.shape[0] for v, _ in frames.values())
    widths = [max(1, v.shape[1]) for v, _ in frames.values()]
    fig = Figure(figsize=(2.2 + 1.1 * sum(widths), 1.2 + 0.38 * n_rows), layout="constrained")
    axes = fig.subplots(1, len(frames), gridspec_kw={"width_ratios": widths}, squeeze=False)[0]
    image = None
    for n, (ax, (name, (values, stars))) in enumerate(zip(axes, frames.items())):
        image = _draw(ax, values, stars, vmin, vmax, cmap, fmt, name or None)
        if n:  # the WEP names once, on the left
            ax.tick_params(labelleft=False)
    fig.colorbar(image, ax=list(axes), label=VALUE_TITLES.get(value, value), shrink=0.8)
    fig.supxlabel("Brunner–Munzel: * p < 0.1, ** p < 0.05, *** p < 0.01", fontsize=7)
    return fig
