"""Overprecision metrics of Bahaj et al. (§3.3, Appendix D): how often intervals given at an imposed confidence
contain the true answer, and whether their length follows the confidence.

Input: a tidy table with one row per interval answer and the columns ``lower`` (x), ``upper`` (y), ``truth``
(the true answer a), ``confidence`` (the imposed level c in %), plus the grouping columns (e.g. ``agent``,
``source``). An unparseable answer has NaN bounds; it is left out of every score below and counted in ``unparsed``.

- hit@c% = (1/|Â^c|) Σ_i I(a_i ∈ [x_i^c, y_i^c]), ×100, over the intervals given at level c;
  **hit-avg** = the mean of hit@c over the levels answered.
- **corr** = Pearson's r between c and the length d = y − x over all intervals of the group (NaN when either
  is constant).
- **DS**^c = (1/|Â^c|) Σ_i (max(m_i, 0) / (|m_i| + 1))², m_i = max(x_i − a_i, a_i − y_i): 0 when a lies in the
  interval, growing towards 1 the further it lies outside.
- **ILS**^c = (1/|Â^c|) Σ_i (y_i − x_i) / max(|y_i|, |x_i|): the length relative to the scale of the bounds
  (a point interval at 0, where the ratio is 0/0, scores 0).
- **hit by scale** (Figure 2): the hit rate of the intervals whose true answer lies in a band of
  s = sign(a)·log10(1 + |a|), bands of width 1 (…, [−1, 0), [0, 1), [1, 2), …).
- **resampled**: the paper's protocol for repeated trials — draw one answer per (group, item) at random, score,
  repeat ``draws`` times (10) with a seeded generator, report the mean and standard deviation of each score.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

LEVELS: tuple[int, ...] = (95, 90, 80, 70, 60)  # the paper's column order
REQUIRED = ("lower", "upper", "truth", "confidence")


class OverprecisionError(ValueError):
    """The table lacks a column the metrics need."""


def _check(df: pd.DataFrame, by: Sequence[str]) -> None:
    missing = [c for c in (*REQUIRED, *by) if c not in df.columns]
    if missing:
        raise OverprecisionError(f"the answers lack the column(s) {', '.join(missing)}")


def scored(df: pd.DataFrame) -> pd.DataFrame:
    """The answers with ``parsed``, ``hit`` (1/0, NaN when unparsed), ``length`` (y − x), ``ds`` and ``ils``
    per interval (formulas in the module docstring)."""
    x, y, a = (df[c].astype(float) for c in ("lower", "upper", "truth"))
    parsed = x.notna() & y.notna()
    hit = ((a >= x) & (a <= y)).astype(float).where(parsed)
    m = np.maximum(x - a, a - y)
    ds = (np.maximum(m, 0) / (m.abs() + 1)) ** 2
    scale = np.maximum(x.abs(), y.abs())
    ils = ((y - x) / scale.where(scale > 0)).fillna(0).where(parsed)
    return df.assign(parsed=parsed, hit=hit, length=(y - x), ds=ds.where(parsed), ils=ils)


def pearson(c: pd.Series, d: pd.Series) -> float:
    """Pearson's r of two equal-length series (NaN when fewer than two values or either is constant)."""
    c, d = np.asarray(c, float), np.asarray(d, float)
    if len(c) < 2 or np.ptp(c) == 0 or np.ptp(d) == 0:
        return float("nan")
    return float(np.corrcoef(c, d)[0, 1])


def grouped_pearson(df: pd.DataFrame, by: list[str], u: str, v: str) -> pd.Series:
    """Pearson's r of columns ``u`` and ``v`` within each group of ``by``, from the groups' sums:
    r = (nΣuv − ΣuΣv) / √((nΣu² − (Σu)²)(nΣv² − (Σv)²)); NaN when u or v is constant or n < 2."""
    x, y = df[u].astype(float), df[v].astype(float)
    keys = [df[b] for b in by]
    frame = pd.DataFrame({"x": x, "y": y, "xx": x * x, "yy": y * y, "xy": x * y})
    sums = frame.groupby(keys).sum()
    n = frame.groupby(keys).size()
    spread = pd.DataFrame({"x": x, "y": y}).groupby(keys).agg(["min", "max"])
    constant = ((spread[("x", "max")] - spread[("x", "min")]) == 0) | ((spread[("y", "max")] - spread[("y", "min")]) == 0)
    num = n * sums["xy"] - sums["x"] * sums["y"]
    den = np.sqrt((n * sums["xx"] - sums["x"] ** 2) * (n * sums["yy"] - sums["y"] ** 2))
    r = (num / den).where(~constant & (n >= 2))
    return r.clip(-1, 1)


def hit_table(df: pd.DataFrame, by: Sequence[str] = ("agent",), levels: Sequence[int] = LEVELS) -> pd.DataFrame:
    """Per group: ``hit@c`` for each level (×100), ``hit_avg``, ``corr``, ``n`` (parsed intervals) and
    ``unparsed`` — one row per group (Table 4's columns)."""
    by = list(by)
    _check(df, by)
    if not by:
        return hit_table(df.assign(_all=0), ["_all"], levels).drop(columns="_all")
    s = scored(df)
    ok = s[s["parsed"]]
    per_level = ok.groupby([*by, "confidence"])["hit"].mean().unstack("confidence") * 100
    corr = grouped_pearson(ok, by, "confidence", "length")
    counts = s.groupby(by).agg(n=("parsed", "sum"), answers=("parsed", "size"))
    out = pd.DataFrame(index=counts.index)
    for c in levels:
        out[f"hit@{c}"] = per_level[c] if c in per_level.columns else np.nan
    out["hit_avg"] = out[[f"hit@{c}" for c in levels]].mean(axis=1)
    out["corr"] = corr.reindex(out.index) if len(corr) else np.nan
    out["n"] = counts["n"].astype(int)
    out["unparsed"] = (counts["answers"] - counts["n"]).astype(int)
    return out.reset_index()


def deviation_table(df: pd.DataFrame, by: Sequence[str] = ("agent",), levels: Sequence[int] = LEVELS) -> pd.DataFrame:
    """Per group and level: ``ds`` and ``ils`` (Appendix D), and their averages over the levels answered."""
    by = list(by)
    _check(df, by)
    if not by:
        return deviation_table(df.assign(_all=0), ["_all"], levels).drop(columns="_all")
    s = scored(df)
    ok = s[s["parsed"]]
    means = ok.groupby([*by, "confidence"])[["ds", "ils"]].mean().unstack("confidence")
    out = pd.DataFrame(index=means.index)
    for metric in ("ds", "ils"):
        for c in levels:
            out[f"{metric}@{c}"] = means[(metric, c)] if (metric, c) in means.columns else np.nan
        out[f"{metric}_avg"] = out[[f"{metric}@{c}" for c in levels]].mean(axis=1)
    return out.reset_index()


def scale_band(truth: pd.Series) -> pd.Series:
    """The band ⌊sign(a)·log10(1 + |a|)⌋ of each true answer (Figure 2's scale axis)."""
    a = truth.astype(float)
    return np.floor(np.sign(a) * np.log10(1 + a.abs())).astype(int)


def hit_by_scale(df: pd.DataFrame, by: Sequence[str] = ("agent",)) -> pd.DataFrame:
    """Per group and scale band: ``hit`` (×100, all levels pooled), ``n``, and the band's range of answers
    (``band_low`` ≤ a < ``band_high`` in absolute value terms: 10^k − 1 … 10^(k+1) − 1, signed)."""
    by = list(by)
    _check(df, by)
    s = scored(df)
    ok = s[s["parsed"]].assign(band=lambda t: scale_band(t["truth"]))
    out = ok.groupby([*by, "band"]).agg(hit=("hit", "mean"), n=("hit", "size")).reset_index()
    out["hit"] *= 100
    k = out["band"].astype(float)
    out["band_low"] = np.where(k >= 0, 10 ** k - 1, -(10 ** (-k) - 1))
    out["band_high"] = np.where(k >= 0, 10 ** (k + 1) - 1, -(10 ** (-k - 1) - 1))
    return out


def one_per_item(df: pd.DataFrame, keys: Sequence[str], rng: np.random.Generator, k: int = 1) -> pd.DataFrame:
    """``k`` rows drawn at random without replacement from each group of ``keys`` (all rows when fewer)."""
    ranks = df.assign(_r=rng.random(len(df))).groupby(list(keys))["_r"].rank(method="first")
    return df[ranks.to_numpy() <= k]


def resampled(df: pd.DataFrame, score: Callable[[pd.DataFrame], pd.DataFrame], keys: Sequence[str],
              index: Sequence[str], draws: int = 10, seed: int = 0, k: int = 1) -> pd.DataFrame:
    """The paper's protocol: ``draws`` times, draw ``k`` answers per group of ``keys`` (e.g. agent and item),
    score the drawn table with ``score`` (a table indexed by the columns ``index``); the mean and standard
    deviation (ddof 1) of every score column over the draws, as columns ``<score>`` and ``<score>_sd``."""
    rng = np.random.default_rng(seed)
    tables = [score(one_per_item(df, keys, rng, k)).assign(_draw=d) for d in range(draws)]
    stacked = pd.concat(tables, ignore_index=True)
    index = list(index)
    values = [c for c in stacked.columns if c not in (*index, "_draw")]
    grouped = stacked.groupby(index, dropna=False)[values] if index else stacked[values].groupby(lambda _: 0)
    mean, sd = grouped.mean(), grouped.std(ddof=1)
    out = mean.join(sd.add_suffix("_sd"))
    ordered = [c for v in values for c in (v, f"{v}_sd")]
    return out[ordered].reset_index() if index else out[ordered].reset_index(drop=True)


def hit_by_question(df: pd.DataFrame, by: Sequence[str] = ("agent",)) -> pd.DataFrame:
    """Per group and question: its true answer ``truth``, ``scale`` = sign(a)·log10(1 + |a|), the hit rate
    ``hit`` (×100) of its parsed intervals over every level and trial, and ``n`` (Figure 2's points)."""
    by = list(by)
    _check(df, [*by, "question"])
    s = scored(df)
    ok = s[s["parsed"]]
    out = ok.groupby([*by, "question"]).agg(truth=("truth", "first"), hit=("hit", "mean"), n=("hit", "size"))
    out["hit"] *= 100
    a = out["truth"].astype(float)
    out["scale"] = np.sign(a) * np.log10(1 + a.abs())
    return out.reset_index()
