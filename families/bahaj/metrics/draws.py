"""Seeded random draws for Bahaj et al.'s resampled tables, one generator per agent.

Every agent (the values of the ``stream`` column, ``agent`` by default) draws from its own generator,
``numpy.random.default_rng([seed, h(agent)])`` with h the first 8 bytes of SHA-256 of the agent's name: adding,
removing or renaming another agent never changes an agent's draws, hence its figures. Within an agent the rows
are taken in a canonical order: sorted by the group keys, then by level, lower and upper bound (unparsed last),
so the draws depend on the answers only, not on the order in which the table lists agents or rows.

- :func:`draw_per_group` — from each group of ``keys``, ``k`` rows: **without replacement** (the ``k`` rows
  with the smallest uniform keys; the whole group when it holds fewer), or **with replacement** (``k``
  independent uniform picks among the group's rows, so a row can come back: the authors'
  ``GroupBy.sample(k, replace=True)``).
- :func:`resampled` — ``draws`` times: draw, score the drawn table, then the mean and the sample standard
  deviation (ddof 1) of every score over the draws.
"""
from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pandas as pd


def agent_rng(seed: int, agent: object) -> np.random.Generator:
    """The generator of one agent: seeded by ``seed`` and a hash of the agent's name (module docstring)."""
    digest = hashlib.sha256(str(agent).encode("utf-8")).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "big")])


TIEBREAK = ("confidence", "lower", "upper")


def _ordered(df: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``df`` sorted by ``keys`` and then by level and bounds (stable; NaN last)."""
    columns = list(keys) + [c for c in TIEBREAK if c in df.columns and c not in keys]
    return df.sort_values(columns, kind="stable", na_position="last") if len(df) else df


def draw_from(df: pd.DataFrame, keys: Sequence[str], rng: np.random.Generator, k: int = 1,
              replace: bool = False) -> pd.DataFrame:
    """``k`` rows per group of ``keys`` of ``df`` (one agent's rows), drawn with ``rng`` (module docstring)."""
    keys = list(keys)
    df = _ordered(df, keys)
    if df.empty:
        return df
    if not replace:
        ranks = df.assign(_r=rng.random(len(df))).groupby(keys, sort=False)["_r"].rank(method="first")
        return df[ranks.to_numpy() <= k]
    codes = df.groupby(keys, sort=False).ngroup().to_numpy()
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    sizes = np.diff(np.r_[starts, len(df)])
    picks = (np.repeat(starts, k) + np.floor(rng.random(len(starts) * k) * np.repeat(sizes, k)).astype(int))
    return df.iloc[picks]


def agent_streams(df: pd.DataFrame, stream: str, seed: int) -> Iterator[tuple[pd.DataFrame, np.random.Generator]]:
    """(rows of one agent, its generator) for every agent of ``df`` (in order of their names)."""
    if stream not in df.columns:
        yield df, agent_rng(seed, "")
        return
    for agent, rows in df.groupby(stream, sort=True):
        yield rows, agent_rng(seed, agent)


def draw_per_group(df: pd.DataFrame, keys: Sequence[str], seed: int, k: int = 1, replace: bool = False,
                   draws: int = 1, stream: str = "agent") -> list[pd.DataFrame]:
    """``draws`` drawn tables of ``df``: each holds ``k`` rows per group of ``keys``, each agent drawn by its own
    generator (the draws of one agent follow one another in its generator)."""
    per_draw: list[list[pd.DataFrame]] = [[] for _ in range(draws)]
    for rows, rng in agent_streams(df, stream, seed):
        for d in range(draws):
            per_draw[d].append(draw_from(rows, keys, rng, k, replace))
    return [pd.concat(parts) if parts else df.iloc[:0] for parts in per_draw]


def resampled(df: pd.DataFrame, score: Callable[[pd.DataFrame], pd.DataFrame], keys: Sequence[str],
              index: Sequence[str], draws: int = 10, seed: int = 0, k: int = 1, replace: bool = False,
              stream: str = "agent") -> pd.DataFrame:
    """``draws`` times, draw ``k`` rows per group of ``keys`` (:func:`draw_per_group`) and score the drawn table
    with ``score`` (a table indexed by the columns ``index``); the mean and the sample standard deviation (ddof 1)
    of every score column over the draws, as columns ``<score>`` and ``<score>_sd``."""
    tables = [score(drawn).assign(_draw=d)
              for d, drawn in enumerate(draw_per_group(df, keys, seed, k, replace, draws, stream))]
    stacked = pd.concat(tables, ignore_index=True)
    index = list(index)
    values = [c for c in stacked.columns if c not in (*index, "_draw")]
    grouped = stacked.groupby(index, dropna=False)[values] if index else stacked[values].groupby(lambda _: 0)
    mean, sd = grouped.mean(), grouped.std(ddof=1)
    out = mean.join(sd.add_suffix("_sd"))
    ordered = [c for v in values for c in (v, f"{v}_sd")]
    return out[ordered].reset_index() if index else out[ordered].reset_index(drop=True)


__all__ = ["agent_rng", "draw_from", "draw_per_group", "resampled"]
