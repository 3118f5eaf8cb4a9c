"""Knowledge bias on verifiable statements (Belem et al. 2024, §5.2; SPEC §6).

gap = mean answer on true statements − mean answer on false statements, overall (over the expressions;
control items are not an expression) and per expression, with a 95% confidence interval:

- ``paired`` (humans, who see one true and one false statement per expression): per participant and
  expression d = mean(true answers) − mean(false answers), kept only where the participant answered
  both. Per expression: mean of d over participants ± t₀.₉₇₅,ₙ₋₁ · sd(d)/√n. Overall: each participant's
  d averaged over their expressions, then the same t interval over participants.
- ``welch`` (models, whose answers are not paired by participant): difference of the two means with a
  Welch (unequal-variance) t interval, df by Welch–Satterthwaite. Overall pools all answers to the
  expressions. When both samples are constant the interval collapses to the point estimate.

Uses the ``value`` column (answers without a value are left out).

ΔPA = PA(verifiable) − PA(non-verifiable): :func:`delta_pa`.
"""
from __future__ import annotations

from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from analysis.metrics.answers import HUMAN, check_answers, expressions_only

Method = Literal["paired", "welch"]
OVERALL = "overall"
COLUMNS = ["mean_true", "mean_false", "gap", "ci_low", "ci_high", "n", "method"]


def _t_interval(mean: pd.Series, sd: pd.Series, n: pd.Series, level: float) -> tuple[pd.Series, pd.Series]:
    se = sd / np.sqrt(n)
    q = pd.Series(stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), index=n.index).where(n > 1)
    half = (q * se).where(se > 0, 0.0).where(n > 1)
    return mean - half, mean + half


def _valid(df: pd.DataFrame) -> pd.DataFrame:
    check_answers(df, ("respondent", "label", "value", "truth"))
    data = expressions_only(df)
    data = data[data["truth"].isin(["true", "false"]) & data["value"].notna()]
    return data


def paired_gap(df: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Gap per expression and ``overall`` for paired (human) data; columns :data:`COLUMNS`, ``n`` = participants."""
    data = _valid(df)
    if data.empty:
        return _empty("paired")
    cell = data.pivot_table(index=["respondent", "label"], columns="truth", values="value", aggfunc="mean")
    cell = cell.reindex(columns=["true", "false"]).dropna()
    if cell.empty:
        return _empty("paired")
    cell["d"] = cell["true"] - cell["false"]
    per_u = cell.groupby(level="label", sort=False)
    per_person = cell.groupby(level="respondent", sort=False)[["true", "false", "d"]].mean()
    rows = pd.DataFrame({
        "mean_true": per_u["true"].mean(), "mean_false": per_u["false"].mean(),
        "gap": per_u["d"].mean(), "sd": per_u["d"].std(ddof=1), "n": per_u["d"].size(),
    })
    rows.loc[OVERALL] = [per_person["true"].mean(), per_person["false"].mean(), per_person["d"].mean(),
                         per_person["d"].std(ddof=1), len(per_person)]
    rows["ci_low"], rows["ci_high"] = _t_interval(rows["gap"], rows["sd"], rows["n"], level)
    rows["n"] = rows["n"].astype(int)
    rows["method"] = "paired"
    return _ordered(rows)


def welch_gap(df: pd.DataFrame, level: float = 0.95) -> pd.DataFrame:
    """Gap per expression and ``overall`` for unpaired (model) data, Welch t interval; ``n`` = answers."""
    data = _valid(df)
    if not {"true", "false"} <= set(data["truth"]):
        return _empty("welch")
    both = pd.concat([data.assign(group=data["label"]), data.assign(group=OVERALL)])
    g = both.groupby(["group", "truth"], sort=False)["value"].agg(["mean", "var", "size"]).unstack("truth")
    g = g.dropna(subset=[("mean", "true"), ("mean", "false")])
    m1, m0 = g[("mean", "true")], g[("mean", "false")]
    n1, n0 = g[("size", "true")].astype(float), g[("size", "false")].astype(float)
    v1, v0 = g[("var", "true")].fillna(0.0) / n1, g[("var", "false")].fillna(0.0) / n0
    se = np.sqrt(v1 + v0)
    with np.errstate(divide="ignore", invalid="ignore"):
        dof = (v1 + v0) ** 2 / (v1 ** 2 / np.maximum(n1 - 1, 1) + v0 ** 2 / np.maximum(n0 - 1, 1))
    q = pd.Series(stats.t.ppf(0.5 + level / 2, dof.where(dof > 0)), index=g.index)
    half = (q * se).where(se > 0, 0.0).where((n1 > 1) & (n0 > 1))
    gap = m1 - m0
    rows = pd.DataFrame({"mean_true": m1, "mean_false": m0, "gap": gap, "ci_low": gap - half,
                         "ci_high": gap + half, "n": (n1 + n0).astype(int), "method": "welch"})
    rows.index.name = "label"
    return _ordered(rows)


def _empty(method: str) -> pd.DataFrame:
    return pd.DataFrame(columns=COLUMNS, index=pd.Index([], name="label")).astype({"method": object})


def _ordered(rows: pd.DataFrame) -> pd.DataFrame:
    rows.index.name = "label"
    order = [OVERALL] + [u for u in rows.index if u != OVERALL]
    return rows.loc[[u for u in order if u in rows.index], COLUMNS]


def truth_gap(df: pd.DataFrame, method: Method, level: float = 0.95) -> pd.DataFrame:
    """Gap table of one agent's answers by ``method`` ("paired" or "welch")."""
    if method == "paired":
        return paired_gap(df, level)
    if method == "welch":
        return welch_gap(df, level)
    raise ValueError(f"method must be 'paired' or 'welch', not {method!r}")


def knowledge_bias_table(df: pd.DataFrame, human_agent: str = HUMAN, level: float = 0.95) -> pd.DataFrame:
    """Gap per agent × (overall, expressions): paired for ``human_agent``, Welch for every other agent.
    Pass attention-filtered answers of the verifiable study."""
    check_answers(df, ("agent",))
    parts = {agent: truth_gap(rows, "paired" if agent == human_agent else "welch", level)
             for agent, rows in df.groupby("agent", sort=True)}
    if not parts:
        return pd.DataFrame(columns=COLUMNS, index=pd.MultiIndex.from_tuples([], names=["agent", "label"]))
    return pd.concat(parts, names=["agent", "label"])


def delta_pa(pa_verifiable: pd.Series | float, pa_non_verifiable: pd.Series | float) -> pd.Series | float:
    """ΔPA = PA(verifiable) − PA(non-verifiable) (per agent when given Series)."""
    return pa_verifiable - pa_non_verifiable
