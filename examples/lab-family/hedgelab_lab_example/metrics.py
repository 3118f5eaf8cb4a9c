"""The lab's metric: the interquartile range Q3 − Q1 of each agent's readable answer values (NaN without any)."""
from __future__ import annotations

import math

import pandas as pd


def iqr(answers: pd.DataFrame) -> dict[str, float]:
    """Agent → Q3 − Q1 of its ``value`` column (pandas' linear quantiles), unreadable answers left out."""
    out: dict[str, float] = {}
    values = pd.to_numeric(answers["value"], errors="coerce")
    for agent, group in values.groupby(answers["agent"], sort=False):
        group = group.dropna()
        out[str(agent)] = float(group.quantile(0.75) - group.quantile(0.25)) if len(group) else math.nan
    return out
