"""Overprecision metrics of Bahaj et al. (§3.3, Appendix D): how often intervals given at an imposed confidence
contain the true answer, and whether their length follows the confidence.

Input: a tidy table with one row per interval answer and the columns ``lower`` (x), ``upper`` (y), ``truth``
(the true answer a), ``confidence`` (the imposed level c in %), plus the grouping columns (e.g. ``agent``,
``source``). An unparsed answer (no interval) has NaN bounds; it is counted in ``unparsed``.

Two readings (the report option ``reading``), which differ in what an unparsed answer counts as and in the
hit average:

- **text** (a reading of the paper's prose): the scores are over the parsed intervals Â^c only;
  hit@c% = (1/|Â^c|) Σ_i I(a_i ∈ [x_i^c, y_i^c]) ×100; **hit-avg** = the mean of hit@c over the levels answered.
- **authors** (the authors' notebooks, T2:27 ``get_general_stats``): an unparsed answer is a **miss and stays
  in the denominator**; hit@c% = (hits at c) / (answers at c) ×100 and **hit-avg** = (hits) / (answers) ×100
  pooled over every level — a pooled proportion, equal to the mean of the hit@c only when every level has as
  many answers.

In both, a hit is x ≤ a ≤ y (both bounds included; a reversed interval, x > y, can never hit; a point interval
hits only on equality), and **corr** = Pearson's r between c and the raw length d = y − x (answer units, not
normalised, negative when reversed) over the answers with a length (NaN when either is constant or n < 2).

- **DS**^c = (1/|Â^c|) Σ_i (max(m_i, 0) / (|m_i| + 1))², m_i = max(x_i − a_i, a_i − y_i): 0 when a lies in the
  interval, growing towards 1 the further it lies outside.
- **ILS**^c = (1/|Â^c|) Σ_i (y_i − x_i) / max(|y_i|, |x_i|): the length relative to the scale of the bounds
  (a point interval at 0, where the ratio is 0/0, scores 0).
  DS and ILS are the paper's Eq. 10–11 (Appendix D) over the parsed intervals: the authors' code for them is not
  published (its notebook is missing), so they are the same under both readings.
- **hit by scale** (Figure 2, text reading): the hit rate of the intervals whose true answer lies in a band of
  s = sign(a)·log10(1 + |a|), bands of width 1 (…, [−1, 0), [0, 1), [1, 2), …).
- **answer histogram** (Figure 2 as the authors drew it, T2:56 ``scale_vs_precision``): over every answer of an
  agent (every try and level, unparsed answers as misses), the **count** of hits and of misses per bin of the
  true answer a, bins ``linspace(−20, 20, 50)`` (49 bins of width 40/49, the last one closed); answers outside
  [−20, 20] are not counted.
- Repeated trials: :mod:`families.bahaj.metrics.draws` (one seeded generator per agent).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .draws import draw_from, resampled

LEVELS: tuple[int, ...] = (95, 90, 80, 70, 60)  # the paper's column order
REQUIRED = ("lower", "upper", "truth", "confidence")
READINGS: tuple[str, ...] = ("text", "authors")
HISTOGRAM_BINS = np.linspace(-20, 20, 50)  # the authors' Figure 2 bins
one_per_item = draw_from  # k rows per group without replacement (draws.py)


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


def _reading(reading: str) -> str:
    if reading not in READINGS:
        raise OverprecisionError(f"unknown reading {reading!r} (known: {', '.join(READINGS)})")
    return reading


def hit_table(df: pd.DataFrame, by: Sequence[str] = ("agent",), levels: Sequence[int] = LEVELS,
              reading: str = "text") -> pd.DataFrame:
    """Per group: ``hit@c`` for each level (×100), ``hit_avg``, ``corr``, ``n`` (parsed intervals) and
    ``unparsed`` — one row per group (Table 4's columns). ``reading`` "text": over the parsed intervals, hit-avg
    the mean of the hit@c; "authors": unparsed answers are misses in the denominators, hit-avg pooled (module
    docstring)."""
    by = list(by)
    _check(df, by)
    _reading(reading)
    if not by:
        return hit_table(df.assign(_all=0), ["_all"], levels, reading).drop(columns="_all")
    s = scored(df)
    ok = s[s["parsed"]]
    counted = s.assign(hit=s["hit"].fillna(0.0)) if reading == "authors" else ok
    per_level = counted.groupby([*by, "confidence"])["hit"].mean().unstack("confidence") * 100
    corr = grouped_pearson(ok, by, "confidence", "length")
    counts = s.groupby(by).agg(n=("parsed", "sum"), answers=("parsed", "size"))
    out = pd.DataFrame(index=counts.index)
    for c in levels:
        out[f"hit@{c}"] = per_level[c] if c in per_level.columns else np.nan
    if reading == "authors":
        out["hit_avg"] = counted.groupby(by)["hit"].mean().reindex(out.index) * 100
    else:
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


def answer_histogram(df: pd.DataFrame, by: Sequence[str] = ("agent",),
                     bins: np.ndarray = HISTOGRAM_BINS) -> pd.DataFrame:
    """Figure 2 as the authors drew it: per group and bin of the true answer, ``hits`` and ``misses`` (counts
    over every answer; unparsed answers are misses; answers outside the bins are left out), with the bin's
    ``bin_low`` and ``bin_high`` (module docstring)."""
    by = list(by)
    _check(df, by)
    s = scored(df)
    a = s["truth"].astype(float).to_numpy()
    inside = (a >= bins[0]) & (a <= bins[-1])
    index = np.clip(np.searchsorted(bins, a, side="right") - 1, 0, len(bins) - 2)
    hit = s["hit"].fillna(0.0).to_numpy() == 1
    frame = pd.DataFrame({**{b: s[b].to_numpy() for b in by}, "bin": index, "hits": hit.astype(int),
                          "misses": (~hit).astype(int)})[inside]
    counts = frame.groupby([*by, "bin"])[["hits", "misses"]].sum()
    every_bin = pd.DataFrame({"bin": np.arange(len(bins) - 1)})
    full = s[by].drop_duplicates().sort_values(by).merge(every_bin, how="cross") if by else every_bin
    out = full.join(counts, on=[*by, "bin"]).fillna({"hits": 0, "misses": 0})
    out[["hits", "misses"]] = out[["hits", "misses"]].astype(int)
    out["bin_low"], out["bin_high"] = bins[out["bin"]], bins[out["bin"] + 1]
    return out[[*by, "bin", "bin_low", "bin_high", "hits", "misses"]].reset_index(drop=True)
