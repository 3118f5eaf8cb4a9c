"""Distribution comparisons of Tang et al. (words of estimative probability; SPEC §6).

- KL divergence: both samples put on 0–100 (:func:`surveys.answer_bins.to_percent`, so a 0–1 answer such as
  0.35 becomes exactly 35), binned into 20 equal-width bins with integer edges [0,5), [5,10), …,
  [95,100] (a value on an inner edge goes to the upper bin, 100 to the last), each sample's bin shares
  P (human) and Q (model); D_KL(P‖Q) = Σ_i P(i)·ln(P(i)/Q(i)), natural log, with empty model bins set to
  1e−10 (Q is not renormalised afterwards); bins where P(i) = 0 add 0.
- Brunner–Munzel: X = human sample, Y = model sample. p-value of ``scipy.stats.brunnermunzel(X, Y)``
  (two-sided, t distribution). θ̂ = P(X>Y) + ½P(X=Y) = (R̄_X − (n_X+1)/2) / n_Y, with R̄_X the mean rank
  of X in the pooled sample. 95% CI: θ̂ ± t₀.₉₇₅,df · σ̂, with the Brunner–Munzel variance estimate
  σ̂² = S²_X/(n_X·n_Y²) + S²_Y/(n_Y·n_X²) and its Welch-type df (the same S² and df scipy's test uses;
  S²_X = Σ (R_Xi − R⁽ˣ⁾_Xi − R̄_X + (n_X+1)/2)² / (n_X − 1), R⁽ˣ⁾ the rank within X). The statistic
  then equals (½ − θ̂)/σ̂. The interval is clipped to [0, 1]. When both placement variances are 0 the
  interval collapses to θ̂ and scipy's p-value is NaN: two identical constant samples (θ̂ = 0.5) then get
  p = 1.0 with a note; two samples with no overlap at all (θ̂ 0 or 1, each constant) keep NaN with a note.
- Median difference: median(X) − median(Y) on 0–100 (signed: positive when X is higher) and its absolute
  value |median(X) − median(Y)| (the paper's AMD).
- Mann–Whitney U of X (``scipy.stats.mannwhitneyu(X, Y)``, two-sided, scipy's default method: exact for small
  samples without ties, else the normal approximation with continuity correction) and its p-value; two
  identical constant samples give U = n_X·n_Y/2 and p = 1.
- Kolmogorov–Smirnov: D = sup |F_X − F_Y| and the p-value of ``scipy.stats.ks_2samp(X, Y)`` (two-sided).

The authors publish the Mann–Whitney and Kolmogorov–Smirnov statistics beside KL and Brunner–Munzel
(their analysis/rq1/*_MWU_*.csv and *_KS_*.csv). X is always the first sample named: people in the
human-vs-model table (or the model, where ``model_x`` says so: :func:`tang_table`), the first of the pair in a
model-vs-model comparison (:func:`pair_table`). KL is given both ways, ``kl`` = D(X‖Y) and ``kl_yx`` = D(Y‖X)
(empty bins of the second sample set to 1e−10 in each), since it is not symmetric.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats
from scipy.special import rel_entr

from analysis.metrics.answers import CONTROL, HUMAN, AnswersError, check_answers, compact
from surveys.answer_bins import SCALE_MAX, equal_width_index, to_percent

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
    note: str = ""

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
    p_value, statistic, note = float(result.pvalue), float(result.statistic), ""
    if sigma == 0 and theta == 0.5:
        p_value, statistic = 1.0, 0.0
        note = "both samples constant and equal: no difference (θ̂ 0.5, p 1)"
    elif sigma == 0:
        note = "the samples do not overlap and each is constant: no Brunner–Munzel p-value"
    return BrunnerMunzel(theta=float(theta), ci_low=float(max(0.0, theta - half)), ci_high=float(min(1.0, theta + half)),
                         p_value=p_value, statistic=statistic, df=float(dof), n_x=int(nx), n_y=int(ny), note=note)


def abs_median_difference(x: ArrayLike, y: ArrayLike, scale: float = SCALE_MAX) -> float:
    """|median(X) − median(Y)| on 0–100 (NaN answers ignored)."""
    a, b = _clean(x, scale), _clean(y, scale)
    if a.size == 0 or b.size == 0:
        raise AnswersError("an empty sample has no median")
    return float(abs(np.median(a) - np.median(b)))


def median_difference(x: ArrayLike, y: ArrayLike, scale: float = SCALE_MAX) -> float:
    """median(X) − median(Y) on 0–100 (NaN answers ignored): positive when X is higher."""
    a, b = _clean(x, scale), _clean(y, scale)
    if a.size == 0 or b.size == 0:
        raise AnswersError("an empty sample has no median")
    return float(np.median(a) - np.median(b))


def mann_whitney(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """(U of X, two-sided p) of ``scipy.stats.mannwhitneyu``; (n_X·n_Y/2, 1.0) for identical constant samples."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.unique(np.concatenate([a, b])).size == 1:
        return a.size * b.size / 2, 1.0
    result = stats.mannwhitneyu(a, b, alternative="two-sided")
    return float(result.statistic), float(result.pvalue)


def kolmogorov_smirnov(x: ArrayLike, y: ArrayLike) -> tuple[float, float]:
    """(D, two-sided p) of ``scipy.stats.ks_2samp``."""
    result = stats.ks_2samp(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return float(result.statistic), float(result.pvalue)


MEASURES = ["kl", "kl_yx", "theta", "ci_low", "ci_high", "p_value", "amd", "median_diff", "mwu_u", "mwu_p", "ks_d", "ks_p"]


def compare_two(x: ArrayLike, y: ArrayLike, scale: float = SCALE_MAX) -> dict[str, float | str]:
    """Every measure of X against Y (module docstring): KL D(X‖Y) and D(Y‖X), Brunner–Munzel θ̂ (CI, p), the median
    difference (absolute and signed), Mann–Whitney U and p, Kolmogorov–Smirnov D and p, n_x, n_y, note."""
    a, b = _clean(x, scale), _clean(y, scale)
    bm = brunner_munzel(a, b)
    u, u_p = mann_whitney(a, b)
    d, d_p = kolmogorov_smirnov(a, b)
    return {"kl": kl_divergence(a, b), "kl_yx": kl_divergence(b, a), "theta": bm.theta, "ci_low": bm.ci_low, "ci_high": bm.ci_high,
            "p_value": bm.p_value, "amd": abs_median_difference(a, b), "median_diff": median_difference(a, b),
            "mwu_u": u, "mwu_p": u_p, "ks_d": d, "ks_p": d_p, "n_x": bm.n_x, "n_y": bm.n_y, "note": bm.note}


def compare_samples(human: ArrayLike, model: ArrayLike, scale: float = SCALE_MAX) -> dict[str, float | str]:
    """:func:`compare_two` of one human (X) / model (Y) pair of samples, the sizes as n_human and n_model."""
    out = compare_two(human, model, scale)
    out["n_human"], out["n_model"] = out.pop("n_x"), out.pop("n_y")
    return out


def tang_table(df: pd.DataFrame, human_agent: str = HUMAN, scale: float = SCALE_MAX,
               by: str = "label", model_x: Callable[[str], bool] | None = None) -> pd.DataFrame:
    """Per model agent × ``by`` group (WEP; control items left out): every :func:`compare_samples` measure against the humans'
    answers to the same group, people X; for an agent where ``model_x(agent)`` is true the model is X (column
    ``x``: "people" or "model"; n_human and n_model stay the sizes of each). ``scale``: the scale of ``value``."""
    check_answers(df, ("agent", by, "value"))
    data = compact(df)
    data = data[data["label"] != CONTROL] if by == "label" else data
    data = data.assign(value=to_percent(data["value"].to_numpy(dtype=float), scale)).dropna(subset=["value"])
    humans = {k: g.to_numpy() for k, g in data.loc[data["agent"] == human_agent].groupby(by, sort=True)["value"]}
    rows = {}
    for (agent, group), values in data.loc[data["agent"] != human_agent].groupby(["agent", by], sort=True)["value"]:
        if group in humans and len(humans[group]) >= 2 and len(values) >= 2:
            if model_x is not None and model_x(agent):
                out = compare_two(values.to_numpy(), humans[group], scale=SCALE_MAX)
                out["n_model"], out["n_human"] = out.pop("n_x"), out.pop("n_y")
                rows[(agent, group)] = {**out, "x": "model"}
            else:
                rows[(agent, group)] = {**compare_samples(humans[group], values.to_numpy()), "x": "people"}
    index = pd.MultiIndex.from_tuples(list(rows), names=["agent", by])
    return pd.DataFrame(list(rows.values()), index=index, columns=[*MEASURES, "n_human", "n_model", "note", "x"])


def pair_table(samples: dict[str, pd.DataFrame], pairs: list[tuple[str, str]], scale: float = SCALE_MAX) -> pd.DataFrame:
    """Model vs model: for each (X, Y) of ``pairs`` — names of ``samples``, each a table with ``label`` and
    ``value`` — every :func:`compare_two` measure per WEP both answered (control items left out), X first.
    Columns x, y, label, the measures, n_x, n_y, note."""
    rows = []
    for x_name, y_name in pairs:
        x = samples[x_name].loc[lambda d: d["label"] != CONTROL]
        y = samples[y_name].loc[lambda d: d["label"] != CONTROL]
        ys = {k: g.to_numpy() for k, g in y.groupby("label", sort=True)["value"]}
        for label, values in x.groupby("label", sort=True)["value"]:
            other = ys.get(label, np.array([]))
            if _clean(values, scale).size >= 2 and _clean(other, scale).size >= 2:
                rows.append({"x": x_name, "y": y_name, "label": label, **compare_two(values, other, scale)})
    return pd.DataFrame(rows, columns=["x", "y", "label", *MEASURES, "n_x", "n_y", "note"])
