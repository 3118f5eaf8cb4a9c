"""The answer bins of the 0–100 scale (SPEC §6), vectorised. The single source of binning: the instruments'
``score()`` (a model's answer as its bin) and the metrics (analysis/metrics/) both use it, so it sits in the lower
layer (numpy only: no Django, so the metrics stay pure).

The answer bins: 21 centres 0, 5, …, 100; a value v falls in the bin whose centre c has
c − 2.5 ≤ v < c + 2.5, and 97.5 ≤ v ≤ 100 falls in 100. So 2.5 → 5, 97.5 → 100, 100 → 100.

Values are first rounded to ``DECIMALS`` places so that a value meant to sit on an edge but carried
as a float a hair below it (0.35 × 100 = 35.00000000000001, 0.575 × 100 = 57.49999999999999) lands
where a person reading the number would put it.
"""
from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

N_BINS = 21
BIN_WIDTH = 5.0
BIN_CENTRES: NDArray[np.float64] = np.arange(N_BINS, dtype=float) * BIN_WIDTH  # 0, 5, …, 100
SCALE_MAX = 100.0
DECIMALS = 9  # far below any answer's resolution, far above float noise on 0–100


def to_percent(values: ArrayLike, scale: float = SCALE_MAX) -> NDArray[np.float64]:
    """``values`` given on 0–``scale`` as floats on 0–100, with float noise rounded away.

    ``scale=1`` converts probabilities (0.35 → 35.0 exactly). NaN stays NaN (an unparseable answer).
    ValueError if a value lies outside [0, scale].
    """
    if not scale > 0:
        raise ValueError(f"scale must be positive, not {scale!r}")
    arr = np.asarray(values, dtype=float)
    out = np.round(arr * (SCALE_MAX / scale), DECIMALS)
    out[out == 0] = 0.0  # no negative zero
    bad = ~np.isnan(out) & ((out < 0) | (out > SCALE_MAX))
    if bad.any():
        first = arr.reshape(-1)[np.flatnonzero(bad.reshape(-1))[0]]
        raise ValueError(f"{int(bad.sum())} value(s) outside 0–{scale:g}, e.g. {first!r}")
    return out


def bin_index(values: ArrayLike, scale: float = SCALE_MAX) -> NDArray[np.int64]:
    """Index 0–20 of the answer bin of each value (centre = 5 × index); −1 for NaN.

    floor((v + 2.5) / 5), with 100 (index 20.5) kept in the last bin.
    """
    v = to_percent(values, scale)
    idx = np.full(v.shape, -1, dtype=np.int64)
    ok = ~np.isnan(v)
    idx[ok] = np.minimum(np.floor((v[ok] + BIN_WIDTH / 2) / BIN_WIDTH), N_BINS - 1).astype(np.int64)
    return idx


def bin_centres(values: ArrayLike, scale: float = SCALE_MAX) -> NDArray[np.float64]:
    """The bin centre (0, 5, …, 100) of each value; NaN for NaN."""
    idx = bin_index(values, scale)
    return np.where(idx >= 0, idx * BIN_WIDTH, np.nan)


def bin_centre(value: float) -> float:
    """The bin centre of one value on 0–100 (what an instrument's ``score()`` returns)."""
    return float(bin_centres(np.array([value]))[0])


def equal_width_index(values: ArrayLike, n_bins: int = 20, scale: float = SCALE_MAX) -> NDArray[np.int64]:
    """Index of each value in ``n_bins`` equal-width bins with edges on 0–100:
    [0, 5), [5, 10), …, [95, 100] for 20 bins. A value on an inner edge goes to the upper bin;
    100 goes to the last bin. −1 for NaN. Values are converted with :func:`to_percent` first.
    """
    v = to_percent(values, scale)
    width = SCALE_MAX / n_bins
    idx = np.full(v.shape, -1, dtype=np.int64)
    ok = ~np.isnan(v)
    idx[ok] = np.minimum(np.floor(np.round(v[ok] / width, DECIMALS)), n_bins - 1).astype(np.int64)
    return idx
