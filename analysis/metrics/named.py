"""Metrics a study file may name in ``[report] metrics`` (the core's own; a family contributes more through
config.registry, kind ``metrics``). No Django.

A named metric is ``metric(answers) -> {agent: number}``: ``answers`` is the tidy answers table of the study
(analysis/dataset.py: one row per answer, ``agent`` ``"human"`` for people, ``value`` a scale's number, ``choice``
an option's key, ``lower``/``upper`` an interval's bounds), the people the study's exclusion rules exclude left
out; the result has one number per agent (NaN when it does not apply). The report's ``metrics`` section
(analysis/reports/metrics.py) puts one column per named metric beside each agent.

- ``answer-count``: the number of answers of the agent (unparseable ones included);
- ``mean-value``: the mean of the agent's readable ``value`` (NaN for choices);
- ``majority-choice``: the share of the agent's readable choices (``choice`` ≠ "") that choose the agent's own
  most frequent option (1 when it always chooses the same; NaN without choices).
"""
from __future__ import annotations

import math

import pandas as pd


def answer_count(answers: pd.DataFrame) -> dict[str, float]:
    return {str(agent): float(n) for agent, n in answers.groupby("agent", sort=False).size().items()}


def mean_value(answers: pd.DataFrame) -> dict[str, float]:
    values = pd.to_numeric(answers["value"], errors="coerce")
    return {str(agent): float(v) if not math.isnan(v) else math.nan
            for agent, v in values.groupby(answers["agent"], sort=False).mean().items()}


def majority_choice(answers: pd.DataFrame) -> dict[str, float]:
    out: dict[str, float] = {}
    for agent, group in answers.groupby("agent", sort=False):
        chosen = group["choice"].fillna("")
        chosen = chosen[chosen != ""]
        out[str(agent)] = float(chosen.value_counts().iloc[0] / len(chosen)) if len(chosen) else math.nan
    return out
