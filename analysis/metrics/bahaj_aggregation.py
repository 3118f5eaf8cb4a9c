"""Aggregating several intervals of one question into one (Bahaj et al. §3.2.1, §4.1 phase 2, Tables 5–6).

For N intervals [x_i, y_i] given at levels c_i, with lengths d_i = y_i − x_i, a weighted aggregate is

    X = Σ w_i x_i / Σ w_i,   Y = Σ w_i y_i / Σ w_i

with the weights
- **MIA** (mean interval aggregation): w_i = 1;
- **LWA** (length weighted): w_i = d_i (when every d_i = 0 the weights are all 0: equal weights, = MIA);
- **iLWA** (inverse length weighted): w_i = 1/d_i (when some d_i = 0, the limit d → 0: those point intervals
  share all the weight equally);
- **CWA** (confidence weighted, mixed setting): w_i = c_i;
and **Union**: X = min x_i, Y = max y_i.

Protocol (§4.1, §5.4.1): in the **single-confidence** setting, k = 3 answers are drawn at random (without
replacement) from the trials of each (agent, question, level) and aggregated, then scored per level as hit@c
(analysis.metrics.bahaj_overprecision); in the **mixed-confidence** setting, k = 9 answers are drawn from all the
trials of each (agent, question) across levels, aggregated, and scored as the hit rate over questions. Each is
repeated ``draws`` = 10 times with a seeded generator; the mean and standard deviation are reported.
Unparseable answers (NaN bounds) are never drawn.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .bahaj_overprecision import LEVELS, hit_table, one_per_item, resampled, scored

STRATEGIES: tuple[str, ...] = ("MIA", "LWA", "iLWA", "CWA", "Union")
SINGLE_STRATEGIES: tuple[str, ...] = ("MIA", "LWA", "iLWA", "Union")  # CWA = MIA when every c_i is the same


def weights(df: pd.DataFrame, keys: Sequence[str], strategy: str) -> pd.Series:
    """The weight w_i of each interval within its group of ``keys`` (see the module docstring)."""
    d = (df["upper"] - df["lower"]).astype(float)
    if strategy == "MIA":
        return pd.Series(1.0, index=df.index)
    if strategy == "CWA":
        return df["confidence"].astype(float)
    if strategy == "LWA":
        all_zero = d.groupby([df[k] for k in keys]).transform("sum") == 0
        return d.where(~all_zero, 1.0)
    if strategy == "iLWA":
        has_zero = (d == 0).groupby([df[k] for k in keys]).transform("any")
        inverse = 1.0 / d.where(d > 0)
        return (d == 0).astype(float).where(has_zero, inverse)
    raise ValueError(f"unknown weighting {strategy!r} (known: MIA, LWA, iLWA, CWA)")


def aggregate(df: pd.DataFrame, keys: Sequence[str], strategy: str) -> pd.DataFrame:
    """One interval per group of ``keys``: columns ``keys``, ``lower``, ``upper`` (and the group's first value of
    ``truth`` and ``confidence`` when present). Rows with NaN bounds are left out."""
    keys = list(keys)
    ok = df[df["lower"].notna() & df["upper"].notna()]
    grouped = ok.groupby(keys)
    if strategy == "Union":
        out = grouped.agg(lower=("lower", "min"), upper=("upper", "max"))
    else:
        w = weights(ok, keys, strategy)
        sums = ok.assign(_w=w, _wx=w * ok["lower"], _wy=w * ok["upper"]).groupby(keys)[["_w", "_wx", "_wy"]].sum()
        out = pd.DataFrame({"lower": sums["_wx"] / sums["_w"], "upper": sums["_wy"] / sums["_w"]})
    extra = [c for c in ("truth", "confidence") if c in ok.columns and c not in keys]
    if extra:
        out = out.join(grouped[extra].first())
    return out.reset_index()


def _single_scores(drawn: pd.DataFrame, by: list[str], strategies: Sequence[str],
                   levels: Sequence[int]) -> pd.DataFrame:
    parts = []
    for strategy in strategies:
        agg = aggregate(drawn, [*by, "question", "confidence"], strategy)
        parts.append(hit_table(agg, by, levels).assign(strategy=strategy))
    return pd.concat(parts, ignore_index=True)


def single_setting(df: pd.DataFrame, by: Sequence[str] = ("agent",), k: int = 3, draws: int = 10, seed: int = 0,
                   strategies: Sequence[str] = SINGLE_STRATEGIES, levels: Sequence[int] = LEVELS) -> pd.DataFrame:
    """Table 5: per group of ``by`` and strategy, hit@c per level, hit-avg and corr of the aggregated intervals
    (k answers drawn per question and level), mean and sd over ``draws``. ``df`` needs a ``question`` column
    (the id shared by a question's levels)."""
    by = list(by)
    ok = df[df["lower"].notna() & df["upper"].notna()]
    return resampled(ok, lambda drawn: _single_scores(drawn, by, strategies, levels).drop(columns=["n", "unparsed"]),
                     keys=[*by, "question", "confidence"], index=[*by, "strategy"], draws=draws, seed=seed, k=k)


def _mixed_scores(drawn: pd.DataFrame, by: list[str], strategies: Sequence[str]) -> pd.DataFrame:
    parts = []
    for strategy in strategies:
        agg = scored(aggregate(drawn, [*by, "question"], strategy))
        table = agg.groupby(by)["hit"].mean().mul(100).rename("hit").to_frame() if by else \
            pd.DataFrame({"hit": [agg["hit"].mean() * 100]})
        parts.append(table.reset_index(drop=not by).assign(strategy=strategy))
    return pd.concat(parts, ignore_index=True)


def mixed_setting(df: pd.DataFrame, by: Sequence[str] = ("agent",), k: int = 9, draws: int = 10, seed: int = 0,
                  strategies: Sequence[str] = STRATEGIES) -> pd.DataFrame:
    """Table 6: per group of ``by`` and strategy, the hit rate (×100) of the aggregated intervals (k answers
    drawn per question across levels), mean and sd over ``draws``."""
    by = list(by)
    ok = df[df["lower"].notna() & df["upper"].notna()]
    return resampled(ok, lambda drawn: _mixed_scores(drawn, by, strategies), keys=[*by, "question"],
                     index=[*by, "strategy"], draws=draws, seed=seed, k=k)


__all__ = ["LEVELS", "SINGLE_STRATEGIES", "STRATEGIES", "aggregate", "mixed_setting", "one_per_item",
           "single_setting", "weights"]
