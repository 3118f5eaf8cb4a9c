"""Distribution comparisons of Tang et al. (words of estimative probability; SPEC §6).

- KL divergence: both samples put on 0–100 (:func:`analysis.metrics.bins.to_percent`, so a 0–1 answer such as
  0.35 becomes exactly 35), binned into 20 equal-width bins with integer edges [0,5), [5,10), …,
  [95,100] (a value on an inner edge goes to the upper bin, 100 to the last), each sample's bin shares
  P (human) and Q (model); D_KL(P‖Q) = Σ_i P(i)·ln(P(i)/Q(i)), natural log, with empty model bins set to
  1e−10 (Q is not renormalised afterwards); bins where P(i) = 0 add 0.
- Brunner–Munzel: X = human sample, Y = model sample. p-value of ``scipy.stats.brunnermunzel(X, Y)``
  (two-sided, t distribution). θ̂ = P(X>Y) + ½P(X=Y) = (R̄_X − (n_X+1)/2) / n_Y, with R̄_X the mean rank
  of X in the pooled sample. 95% CI: θ̂ ± t₀.₉₇₅,df · σ̂, with the Brunner–Munzel variance estimate
  σ̂² = S²_X/(n_X·n_Y²) + S²_Y/(n_Y·n_X²) and its Welch-type df (the same S² and df scipy's test uses;
  S²_X = Σ (R_Xi − R⁽ˣ⁾_Xi − R̄_X + (n_X+1)/2)² / (n_X − 1), R⁽ˣ⁾ the rank within X). The statistic
  then equals (½ − θ̂)/σ̂. The interval is clipped to [0, 1]; when both placement variances are 0
  (e.g. two constant samples) it collapses to θ̂ and scipy's p-value is NaN.
- Absolute median difference: |median(X) − median(Y)| on 0–100.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from scipy.special import rel_entr

from .answers import CONTROL, HUMAN, AnswersError, check_answers, compact
from .bins import SCALE_MAX, equal_width_index, to_percent

KL_BINS = 20
EMPTY_BIN = 1e-10


def _clean(sample: ArrayLike, scale: float) -> NDArray[np.float64]:
    v = to_percent(np.asarray(sample, dtype=float).ravel(), scale)
    return v[~np.isnan(v)]


def kl_histogram(sample: ArrayLike, scale: float = SCALE_MAX) -> NDArray[np.float64]:
    """Shares of ``sample`` (on 0–``scale``) in Tang's 20 bins; NaN answers ignored."""
    idx = equal_width_index(sample, KL_BINS, scale)
    idx = idx[idx >= 0]
    if idx.size == 0:
        raise AnswersError("an empty sample has no distribution")
    return np.bincount(idx, minlength=KL_BINS) / idx.size


def kl_divergence(human: ArrayLike, model: ArrayLike, scale: float = SCALE_MAX) -> float:
    """D_KL(human ‖ model) over Tang's 20 bins (natural log; empty model bins = 1e−10).
    ``scale``: the scale both samples are given on (100, or 1 for probabilities)."""
    p = kl_histogram(human, scale)
    q = kl_histogram(model, scale)
    q = np.where(q == 0, EMPTY_BIN, q)
    return float(rel_entr(p, q).sum())


@dataclass(frozen=True)
class BrunnerMunzel:
    """Brunner–Munzel comparison of X (human) with Y (model)."""

    theta: float      # P(X>Y) + ½P(X=Y)
    ci_low: float
    ci_high: float
    p_value: float
    statistic: float  # scipy's W (positive when Y tends to be larger)
    df: float
    n_x: int
    n_y: int

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def brunner_munzel(x: ArrayLike, y: ArrayLike, level: float = 0.95) -> BrunnerMunzel:
    """θ̂ with its CI and the Brunner–Munzel p-value (see the module docstring for the formulas)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    nx, ny = x.size, y.size
    if nx < 2 or ny < 2:
        raise AnswersError(f"Brunner–Munzel needs at least 2 answers per sample (got {nx} and {ny})")
    pooled = stats.rankdata(np.concatenate([x, y]))
    rx, ry = pooled[:nx], pooled[nx:]
    wx, wy = stats.rankdata(x), stats.rankdata(y)
    mx, my = rx.mean(), ry.mean()
    sx = np.sum((rx - wx - mx + (nx + 1) / 2) ** 2) / (nx - 1)
    sy = np.sum((ry - wy - my + (ny + 1) / 2) ** 2) / (ny - 1)
    theta = (mx - (nx + 1) / 2) / ny
    sigma = np.sqrt(sx / (nx * ny ** 2) + sy / (ny * nx ** 2))
    spread = nx * sx + ny * sy
    dof = spread ** 2 / ((nx * sx) ** 2 / (nx - 1) + (ny * sy) ** 2 / (ny - 1)) if spread > 0 else float("nan")
    if sigma > 0:
        half = stats.t.ppf(0.5 + level / 2, dof) * sigma
    else:
        half = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = stats.brunnermunzel(x, y)
    return BrunnerMunzel(theta=float(theta), ci_low=float(max(0.0, theta - half)), ci_high=float(min(1.0, theta + half)),
                         p_value=float(result.pvalue), statistic=float(result.statistic), df=float(dof),
                         n_x=int(nx), n_y=int(ny))


def abs_median_difference(x: ArrayLike, y: ArrayLike, scale: float = SCALE_MAX) -> float:
    """|median(X) − median(Y)| on 0–100 (NaN answers ignored)."""
    a, b = _clean(x, scale), _clean(y, scale)
    if a.size == 0 or b.size == 0:
        raise AnswersError("an empty sample has no median")
    return float(abs(np.median(a) - np.median(b)))


def compare_samples(human: ArrayLike, model: ArrayLike, scale: float = SCALE_MAX) -> dict[str, float]:
    """KL, Brunner–Munzel (θ̂, CI, p) and absolute median difference of one human/model pair of samples."""
    h, m = _clean(human, scale), _clean(model, scale)
    bm = brunner_munzel(h, m)
    return {"kl": kl_divergence(h, m), "theta": bm.theta, "ci_low": bm.ci_low, "ci_high": bm.ci_high,
            "p_value": bm.p_value, "amd": abs_median_difference(h, m), "n_human": bm.n_x, "n_model": bm.n_y}


def tang_table(df: pd.DataFrame, human_agent: str = HUMAN, scale: float = SCALE_MAX,
               by: str = "label") -> pd.DataFrame:
    """Per model agent × ``by`` group (WEP; control items left out): every :func:`compare_samples` measure against the humans'
    answers to the same group. ``scale``: the scale of ``value`` (100, or 1)."""
    check_answers(df, ("agent", by, "value"))
    data = compact(df)
    data = data[data["label"] != CONTROL] if by == "label" else data
    data = data.assign(value=to_percent(data["value"].to_numpy(dtype=float), scale)).dropna(subset=["value"])
    humans = {k: g.to_numpy() for k, g in data.loc[data["agent"] == human_agent].groupby(by, sort=True)["value"]}
    rows = {}
    for (agent, group), values in data.loc[data["agent"] != human_agent].groupby(["agent", by], sort=True)["value"]:
        if group in humans and len(humans[group]) >= 2 and len(values) >= 2:
            rows[(agent, group)] = compare_samples(humans[group], values.to_numpy())
    index = pd.MultiIndex.from_tuples(list(rows), names=["agent", by])
    return pd.DataFrame(list(rows.values()), index=index,
                        columns=["kl", "theta", "ci_low", "ci_high", "p_value", "amd", "n_human", "n_model"])
