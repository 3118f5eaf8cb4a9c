"""The Spearman attention filter (Belem et al. 2024, App. A; SPEC §6).

1. Rank the 15 labels (14 expressions and ``control``) by their mean answer over **all** human
   participants of the non-verifiable study, before any filtering (:func:`label_ranking`).
   A verifiable-set study uses the ranking of its non-verifiable companion: pass it as ``ranking``.
2. For each participant, ρ = Spearman correlation (``scipy.stats.spearmanr``: Pearson correlation of
   average ranks) between all of their answers, control items included, and the rank of each answer's
   label (:func:`spearman_by_respondent`, vectorised over participants).
3. Keep participants with ρ > threshold (default 0.2). A participant whose answers (or labels) are all
   equal has no defined ρ (NaN) and is excluded. Excluded participants are reported, never deleted.
   (The paper words it as removing ρ < 0.2; the two differ only at ρ = 0.2 exactly, excluded here.)
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from analysis.metrics.answers import HUMAN, AnswersError, check_answers, of_agent

DEFAULT_THRESHOLD = 0.2


def label_ranking(df: pd.DataFrame, human_agent: str | None = HUMAN) -> pd.DataFrame:
    """Mean answer per label over all participants (``mean``) and its rank (``rank``, 1 = lowest mean,
    ties averaged), sorted from highest to lowest mean. Unparseable (NaN) answers are ignored."""
    check_answers(df, ("respondent", "label", "value"))
    humans = of_agent(df, human_agent)
    means = humans.groupby("label", sort=True)["value"].mean().dropna()
    if means.empty:
        raise AnswersError("no answers to rank the labels by")
    table = pd.DataFrame({"mean": means, "rank": means.rank(method="average")})
    return table.sort_values("mean", ascending=False)


def spearman_by_respondent(df: pd.DataFrame, ranking: pd.DataFrame | pd.Series) -> pd.DataFrame:
    """Per respondent: ``rho`` (Spearman ρ between answers and their labels' rank) and ``n_answers``.

    ``ranking``: :func:`label_ranking` output (its ``mean`` column) or a Series label → score; only the
    order matters. Answers whose label is not ranked, and NaN answers, are left out.
    """
    scores = ranking["mean"] if isinstance(ranking, pd.DataFrame) else ranking
    data = pd.DataFrame({
        "respondent": df["respondent"].to_numpy(),
        "x": df["value"].to_numpy(dtype=float),
        "y": df["label"].map(scores).to_numpy(dtype=float),
    }).dropna(subset=["x", "y"])
    grouped = data.groupby("respondent", sort=True)
    data["rx"] = grouped["x"].rank(method="average")
    data["ry"] = grouped["y"].rank(method="average")
    data["rxy"] = data["rx"] * data["ry"]
    data["rxx"] = data["rx"] ** 2
    data["ryy"] = data["ry"] ** 2
    sums = data.groupby("respondent", sort=True)[["rx", "ry", "rxy", "rxx", "ryy"]].sum()
    n = grouped.size().astype(float)
    cov = sums["rxy"] - sums["rx"] * sums["ry"] / n
    var_x = sums["rxx"] - sums["rx"] ** 2 / n
    var_y = sums["ryy"] - sums["ry"] ** 2 / n
    # Ranks are multiples of 0.5, so the sums are exact; a zero variance means a constant sample.
    denom = np.sqrt(var_x * var_y)
    rho = (cov / denom).where((var_x > 1e-9) & (var_y > 1e-9))
    return pd.DataFrame({"rho": rho.clip(-1.0, 1.0), "n_answers": n.astype(int)})


def attention_filter(df: pd.DataFrame, ranking: pd.DataFrame | pd.Series | None = None, *,
                     threshold: float | None = DEFAULT_THRESHOLD, human_agent: str | None = HUMAN) -> pd.DataFrame:
    """Per human participant: ``rho``, ``n_answers`` and ``included`` (ρ > ``threshold``; every participant
    when ``threshold`` is None, i.e. the filter is not applied: ρ is still reported).

    ``df``: the answers of one study (rows of other agents are ignored). ``ranking``: the label ranking
    of the non-verifiable study; computed from ``df`` when None (only right for a non-verifiable study).
    """
    check_answers(df, ("respondent", "agent", "label", "value") if human_agent else ("respondent", "label", "value"))
    humans = of_agent(df, human_agent)
    if ranking is None:
        ranking = label_ranking(humans, human_agent=None)
    table = spearman_by_respondent(humans, ranking)
    if threshold is None:
        table["included"] = True
    else:
        table["included"] = table["rho"] > threshold  # NaN compares False: excluded
    return table


def included_respondents(filter_table: pd.DataFrame) -> pd.Index:
    """The respondents an :func:`attention_filter` table keeps."""
    return filter_table.index[filter_table["included"].to_numpy(dtype=bool)]


def keep_included(df: pd.DataFrame, filter_table: pd.DataFrame, human_agent: str | None = HUMAN) -> pd.DataFrame:
    """``df`` without the excluded humans' answers (other agents' rows untouched)."""
    excluded = filter_table.index[~filter_table["included"].to_numpy(dtype=bool)]
    drop = df["respondent"].isin(excluded)
    if human_agent is not None:
        drop &= df["agent"] == human_agent
    return df[~drop]
