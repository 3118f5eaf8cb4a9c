"""Aggregating several intervals of one question into one (Bahaj et al. §3.2.1, §4.1 phase 2, Tables 5–6).

For N intervals [x_i, y_i] given at levels c_i, with lengths d_i = y_i − x_i, a weighted aggregate is

    X = Σ w_i x_i / Σ w_i,   Y = Σ w_i y_i / Σ w_i

with the weights **MIA** (mean interval aggregation) w_i = 1; **LWA** (length weighted; the authors' tables say
LWM) w_i = d_i; **iLWA** (inverse length weighted; iLWM) w_i = 1/d_i; **CWA** (confidence weighted, mixed setting
only) w_i = c_i, the raw percent (60…95); and **Union**: X = min x_i, Y = max y_i.

Two readings (the report option ``reading``):

- **text** (the paper's Eq. 6 taken cleanly): only parsed intervals are drawn and aggregated; when every d_i = 0
  LWA takes equal weights (= MIA); when some d_i = 0, iLWA gives those point intervals all the weight, equally.
  Draws are **without** replacement.
- **authors** (T3:6, pandas semantics: sums and means skip NaN, a sum of nothing is 0). Every answer is drawn,
  unparsed ones (NaN bounds) included, **with** replacement, and

  - Union: X = min of the non-missing x, Y = max of the non-missing y (NaN when all are missing: a miss);
  - MIA: X = mean of the non-missing x_i, Y = mean of the non-missing y_i, each over **its own** subset;
  - LWA: S = Σ d_i over the intervals with both bounds; X = Σ (x_i d_i / S), Y = Σ (y_i d_i / S), NaN terms
    skipped. So all d_i = 0 gives 0/0 terms, all skipped: **[0, 0]**; no interval with both bounds: **[0, 0]**;
  - iLWA: the same with w_i = 1/d_i. **Any** d_i = 0 makes S = ∞: its own terms are ∞/∞ = NaN and the others
    0: **[0, 0]**; a reversed interval has a negative weight;
  - CWA: S = Σ c_i over **all** drawn rows, unparsed ones included; X = Σ x_i c_i / S over the rows with x
    (likewise Y): unparsed rows pull the bounds toward 0, and a bound missing everywhere is **0**.

  A [0, 0] aggregate is a hit only when the answer is exactly 0.

Protocol (:mod:`families.bahaj.metrics.draws`, one seeded generator per agent; ``draws`` = 10 runs, mean and
sample sd): **single-confidence** setting (Table 5), k = 3 answers per (agent, question, level) aggregated within
the level and scored per level (hit@c, hit-avg, r of the level and the aggregated length, as
:func:`~families.bahaj.metrics.overprecision.hit_table` under the same reading). **Mixed-confidence** setting
(Table 6), ``mixed`` = 15 (the authors': the same 3 per level, aggregated over the question's 5 levels, 15
intervals) or 9 (the paper's §5.4.1: 9 answers drawn among all of the question's answers across levels);
scored as the hit rate over questions only (under the authors' reading an aggregate without bounds is a miss).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .draws import resampled
from .overprecision import LEVELS, hit_table, scored

STRATEGIES: tuple[str, ...] = ("MIA", "LWA", "iLWA", "CWA", "Union")
SINGLE_STRATEGIES: tuple[str, ...] = ("MIA", "LWA", "iLWA", "Union")  # CWA = MIA when every c_i is the same
MIXED_SIZES: tuple[int, ...] = (15, 9)  # the authors' 3 per level × 5 levels; the paper's 9


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


def aggregate(df: pd.DataFrame, keys: Sequence[str], strategy: str, reading: str = "text") -> pd.DataFrame:
    """One interval per group of ``keys``: columns ``keys``, ``lower``, ``upper`` (and the group's first value of
    ``truth`` and ``confidence`` when present). ``reading`` "text": rows with NaN bounds are left out; "authors":
    every row counts, with the authors' edge cases (module docstring)."""
    if reading == "authors":
        return authors_aggregate(df, keys, strategy)
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


def authors_aggregate(df: pd.DataFrame, keys: Sequence[str], strategy: str) -> pd.DataFrame:
    """:func:`aggregate` as the authors' T3:6 computes it: every row of the group, NaN terms skipped, a sum of
    nothing 0 (the [0, 0] cases of the module docstring)."""
    keys = list(keys)
    x, y = df["lower"].astype(float), df["upper"].astype(float)
    groups = [df[k] for k in keys]
    if strategy == "Union":
        out = pd.DataFrame({"lower": x, "upper": y}).groupby(groups).agg(lower=("lower", "min"), upper=("upper", "max"))
    elif strategy == "MIA":
        out = pd.DataFrame({"lower": x, "upper": y}).groupby(groups).mean()
    else:
        d = y - x
        with np.errstate(divide="ignore", invalid="ignore"):
            if strategy == "LWA":
                w = d
            elif strategy == "iLWA":
                w = 1.0 / d
            elif strategy == "CWA":
                w = df["confidence"].astype(float)
            else:
                raise ValueError(f"unknown aggregation {strategy!r} (known: {', '.join(STRATEGIES)})")
            total = w.groupby(groups).transform("sum")  # NaN skipped; CWA: every row's c, unparsed ones too
            terms = pd.DataFrame({"lower": x * w / total, "upper": y * w / total})
        out = terms.groupby(groups).sum()  # NaN terms skipped; nothing left → 0
    extra = [c for c in ("truth", "confidence") if c in df.columns and c not in keys]
    if extra:
        out = out.join(df.groupby(groups)[extra].first())
    return out.reset_index()


def _single_scores(drawn: pd.DataFrame, by: list[str], strategies: Sequence[str], levels: Sequence[int],
                   reading: str) -> pd.DataFrame:
    parts = []
    for strategy in strategies:
        agg = aggregate(drawn, [*by, "question", "confidence"], strategy, reading)
        parts.append(hit_table(agg, by, levels, reading).assign(strategy=strategy))
    return pd.concat(parts, ignore_index=True)


def _drawn_rows(df: pd.DataFrame, reading: str) -> pd.DataFrame:
    return df if reading == "authors" else df[df["lower"].notna() & df["upper"].notna()]


def single_setting(df: pd.DataFrame, by: Sequence[str] = ("agent",), k: int = 3, draws: int = 10, seed: int = 0,
                   strategies: Sequence[str] = SINGLE_STRATEGIES, levels: Sequence[int] = LEVELS,
                   reading: str = "text") -> pd.DataFrame:
    """Table 5: per group of ``by`` and strategy, hit@c per level, hit-avg and corr of the aggregated intervals
    (k answers drawn per question and level), mean and sd over ``draws``. ``df`` needs a ``question`` column
    (the id shared by a question's levels)."""
    by = list(by)
    if reading == "authors" and "CWA" in strategies:
        raise ValueError("the authors compute CWA in the mixed setting only")
    return resampled(_drawn_rows(df, reading),
                     lambda drawn: _single_scores(drawn, by, strategies, levels, reading).drop(columns=["n", "unparsed"]),
                     keys=[*by, "question", "confidence"], index=[*by, "strategy"], draws=draws, seed=seed, k=k,
                     replace=reading == "authors")


def _mixed_scores(drawn: pd.DataFrame, by: list[str], strategies: Sequence[str], reading: str) -> pd.DataFrame:
    parts = []
    for strategy in strategies:
        agg = scored(aggregate(drawn, [*by, "question"], strategy, reading))
        hits = agg["hit"].fillna(0.0) if reading == "authors" else agg["hit"]
        table = hits.groupby([agg[b] for b in by]).mean().mul(100).rename("hit").to_frame() if by else \
            pd.DataFrame({"hit": [hits.mean() * 100]})
        parts.append(table.reset_index(drop=not by).assign(strategy=strategy))
    return pd.concat(parts, ignore_index=True)


def mixed_setting(df: pd.DataFrame, by: Sequence[str] = ("agent",), k: int | None = None, draws: int = 10,
                  seed: int = 0, strategies: Sequence[str] = STRATEGIES, reading: str = "text",
                  mixed: int = 9) -> pd.DataFrame:
    """Table 6: per group of ``by`` and strategy, the hit rate (×100) of the aggregated intervals, mean and sd
    over ``draws``. ``mixed`` = 15: 3 answers drawn per question and level (``k`` per level), aggregated over
    the levels; 9: 9 answers (``k``) drawn per question across levels (module docstring)."""
    by = list(by)
    if mixed not in MIXED_SIZES:
        raise ValueError(f"the mixed setting aggregates {' or '.join(map(str, MIXED_SIZES))} intervals, not {mixed}")
    per_level = mixed == 15
    keys = [*by, "question", "confidence"] if per_level else [*by, "question"]
    k = k or (3 if per_level else 9)
    return resampled(_drawn_rows(df, reading), lambda drawn: _mixed_scores(drawn, by, strategies, reading),
                     keys=keys, index=[*by, "strategy"], draws=draws, seed=seed, k=k, replace=reading == "authors")


__all__ = ["LEVELS", "MIXED_SIZES", "SINGLE_STRATEGIES", "STRATEGIES", "aggregate", "authors_aggregate",
           "mixed_setting", "single_setting", "weights"]
