"""The numbers a matplotlib figure draws, as JSON-ready data, so that two figures are compared by what they show
rather than by their pixels: per axes its title, labels, tick labels, limits, and the data of every line, bar
(rectangle patch), collection (points, error bars) and image."""
from __future__ import annotations

import math
from typing import Any

import numpy as np


def _num(value: Any) -> Any:
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def _array(values: Any) -> list:
    """A numeric array as nested lists (NaN and masked values as None); a non-numeric one as strings."""
    data = np.ma.asarray(values)
    if data.dtype.kind not in "biuf":
        return [str(v) for v in np.ravel(data)]
    filled = np.ma.filled(data.astype(float), np.nan)
    return np.vectorize(_num, otypes=[object])(filled).tolist() if filled.size else []


def _texts(labels: Any) -> list[str]:
    return [t.get_text() for t in labels]


def axes_numbers(ax: Any) -> dict[str, Any]:
    """One axes: its texts, limits and drawn data, in drawing order."""
    from matplotlib.patches import Rectangle

    out: dict[str, Any] = {
        "title": ax.get_title(), "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(),
        "xticks": _array(ax.get_xticks()), "xticklabels": _texts(ax.get_xticklabels()),
        "yticks": _array(ax.get_yticks()), "yticklabels": _texts(ax.get_yticklabels()),
        "xlim": _array(ax.get_xlim()), "ylim": _array(ax.get_ylim()),
        "lines": [{"label": line.get_label(), "x": _array(line.get_xdata()), "y": _array(line.get_ydata())}
                  for line in ax.get_lines()],
        "bars": [{"label": p.get_label(), "x": _num(p.get_x()), "y": _num(p.get_y()), "width": _num(p.get_width()),
                  "height": _num(p.get_height())} for p in ax.patches if isinstance(p, Rectangle)],
        "collections": [{"label": c.get_label(), "offsets": _array(c.get_offsets()),
                         "segments": [_array(s) for s in getattr(c, "get_segments", lambda: [])()]}
                        for c in ax.collections],
        "images": [_array(im.get_array()) for im in ax.get_images()],
        "texts": [t.get_text() for t in ax.texts],
    }
    legend = ax.get_legend()
    out["legend"] = _texts(legend.get_texts()) if legend is not None else []
    return out


def figure_numbers(fig: Any) -> dict[str, Any]:
    """Every axes of ``fig`` (in order) and its suptitle, read after laying the figure out (tick labels are
    only set by a draw): the same whether or not the figure was saved before."""
    fig.draw_without_rendering()
    suptitle = getattr(fig, "_suptitle", None)
    return {"suptitle": suptitle.get_text() if suptitle is not None else "",
            "axes": [axes_numbers(ax) for ax in fig.get_axes()]}
