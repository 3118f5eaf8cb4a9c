"""Sileo & Moens (2023): verbalisation-validity accuracy, the human baseline's agreement, correct-WEP shares.

Input: a tidy table of answers with ``agent``, ``respondent``, ``item_id``, ``dataset`` (``wep-reasoning-1hop``,
``wep-reasoning-2hops``, ``wep-unli``), ``choice`` (the chosen option's key, "" or NaN when the answer could not
be read) and ``valid_key`` (the key of the valid verbalisation). Pure pandas/numpy/scipy; no Django.

- **Accuracy** of agent a on dataset d (SPEC §6, "verbalisation accuracy"): the share of a's answers to d's items
  that chose the valid verbalisation, acc = k / n (an unreadable answer counts as not choosing it; it stays in
  n). Shown ×100 with the **Wilson** 95% interval
  (p̂ + z²/2n ± z·√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n), z = Φ⁻¹(0.975), which stays inside [0, 1] at p̂ = 0 or 1.
- **Chance**: 50% (two options, one valid).
- **Human baseline**: the same accuracy over every participant's answers, and **Fleiss' κ** between the
  annotators on each item's chosen key: with n_i ratings of item i, n_ij of them for option j,
  P_i = Σ_j n_ij(n_ij − 1) / (n_i(n_i − 1)), P̄ = mean_i P_i, p_j = Σ_i n_ij / Σ_i n_i, P_e = Σ_j p_j²,
  κ = (P̄ − P_e) / (1 − P_e); items with fewer than two ratings are left out (with a constant n_i this is
  Fleiss' 1971 formula).
- **Correct-WEP distribution** (Appendix C): per dataset, the share (%) of items whose valid verbalisation uses
  each WEP.
"""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

CHANCE = 50.0
DATASETS: tuple[str, ...] = ("wep-reasoning-1hop", "wep-reasoning-2hops", "wep-unli")
DATASET_TITLES: dict[str, str] = {"wep-reasoning-1hop": "WEP-Reasoning (1 hop)",
                                  "wep-reasoning-2hops": "WEP-Reasoning (2 hops)", "wep-unli": "WEP-UNLI"}
Z95 = float(stats.norm.ppf(0.975))


def wilson_interval(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion k/n (NaNs when n = 0)."""
    if n <= 0:
        return math.nan, math.nan
    p = k / n
    centre = p + z * z / (2 * n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    denom = 1 + z * z / n
    return max(0.0, (centre - half) / denom), min(1.0, (centre + half) / denom)


def correct(answers: pd.DataFrame) -> pd.Series:
    """Whether each answer chose the valid verbalisation (False for an unreadable answer)."""
    return answers["choice"].fillna("").astype(str).eq(answers["valid_key"].astype(str))


def accuracy(answers: pd.DataFrame, by: tuple[str, ...] = ("agent", "dataset")) -> pd.DataFrame:
    """Accuracy (%) with its Wilson 95% interval per group: columns ``by`` + n, correct, unreadable, accuracy,
    ci_low, ci_high."""
    columns = [*by, "n", "correct", "unreadable", "accuracy", "ci_low", "ci_high"]
    if answers.empty:
        return pd.DataFrame(columns=columns)
    frame = answers.assign(_correct=correct(answers),
                           _unreadable=answers["choice"].fillna("").astype(str).eq(""))
    grouped = frame.groupby(list(by), sort=True)
    table = grouped.agg(n=("_correct", "size"), correct=("_correct", "sum"),
                        unreadable=("_unreadable", "sum")).reset_index()
    table["accuracy"] = 100 * table["correct"] / table["n"]
    bounds = [wilson_interval(int(k), int(n)) for k, n in zip(table["correct"], table["n"])]
    table["ci_low"] = [100 * lo for lo, _ in bounds]
    table["ci_high"] = [100 * hi for _, hi in bounds]
    return table[columns]


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' κ from an items × categories matrix of rating counts (formula in the module docstring; rows with
    fewer than two ratings are dropped). NaN when fewer than one item remains or P_e = 1."""
    counts = np.asarray(counts, dtype=float)
    n_i = counts.sum(axis=1)
    counts, n_i = counts[n_i >= 2], n_i[n_i >= 2]
    if len(counts) == 0:
        return math.nan
    p_i = (counts * (counts - 1)).sum(axis=1) / (n_i * (n_i - 1))
    p_bar = p_i.mean()
    p_j = counts.sum(axis=0) / n_i.sum()
    p_e = float((p_j ** 2).sum())
    if math.isclose(p_e, 1.0):
        return math.nan
    return float((p_bar - p_e) / (1 - p_e))


def annotator_agreement(humans: pd.DataFrame) -> pd.DataFrame:
    """Fleiss' κ between annotators per dataset, on each item's chosen key (unreadable answers left out):
    columns dataset, kappa, items (with ≥ 2 ratings), annotators."""
    rows = []
    for dataset, group in humans.groupby("dataset", sort=True):
        chosen = group[group["choice"].fillna("").astype(str) != ""]
        counts = pd.crosstab(chosen["item_id"], chosen["choice"])
        rated = counts[counts.sum(axis=1) >= 2]
        rows.append({"dataset": dataset, "kappa": fleiss_kappa(rated.to_numpy()), "items": len(rated),
                     "annotators": int(group["respondent"].nunique())})
    return pd.DataFrame(rows, columns=["dataset", "kappa", "items", "annotators"])


def wep_distribution(items: pd.DataFrame) -> pd.DataFrame:
    """Appendix C: per dataset, the share (%) of items whose valid WEP is each WEP (items: columns dataset,
    valid_wep). Columns dataset, wep, items, frequency; most frequent first within a dataset."""
    if items.empty:
        return pd.DataFrame(columns=["dataset", "wep", "items", "frequency"])
    counts = items.groupby(["dataset", "valid_wep"]).size().rename("items").reset_index()
    counts["frequency"] = 100 * counts["items"] / counts.groupby("dataset")["items"].transform("sum")
    counts = counts.rename(columns={"valid_wep": "wep"})
    return counts.sort_values(["dataset", "frequency", "wep"], ascending=[True, False, True]).reset_index(drop=True)


def table1(model_accuracy: pd.DataFrame, human_accuracy: pd.DataFrame, datasets: list[str]) -> pd.DataFrame:
    """The paper's Table 1 shaped: one row per agent (Chance, then Human baseline when there are human answers,
    then each model agent), one column per dataset holding "accuracy [ci_low, ci_high]"-ready numbers: for each
    dataset ``<title>`` (accuracy %) and ``<title> CI`` ("low–high")."""
    rows: list[dict[str, object]] = [{"agent": "Chance", **{DATASET_TITLES.get(d, d): CHANCE for d in datasets},
                                      **{f"{DATASET_TITLES.get(d, d)} CI": "" for d in datasets}}]
    parts = [("Human baseline", human_accuracy.assign(agent="Human baseline"))] if not human_accuracy.empty else []
    parts += [(agent, group) for agent, group in model_accuracy.groupby("agent", sort=True)]
    for agent, group in parts:
        row: dict[str, object] = {"agent": agent}
        by_dataset = group.set_index("dataset")
        for d in datasets:
            title = DATASET_TITLES.get(d, d)
            if d in by_dataset.index:
                r = by_dataset.loc[d]
                row[title] = float(r["accuracy"])
                row[f"{title} CI"] = f"{r['ci_low']:.1f}–{r['ci_high']:.1f} (n={int(r['n'])})"
            else:
                row[title], row[f"{title} CI"] = math.nan, ""
        rows.append(row)
    columns = ["agent"] + [c for d in datasets for c in (DATASET_TITLES.get(d, d), f"{DATASET_TITLES.get(d, d)} CI")]
    return pd.DataFrame(rows)[columns]


def score_accuracy(scored: pd.DataFrame, scores: tuple[str, ...], decides: str) -> pd.DataFrame:
    """Likelihood runs: the accuracy each score would give (§4.1 compares raw, length-normalised and calibrated
    likelihoods). ``scored`` has agent, dataset, valid_key and one column ``choice_<score>`` per score (the
    option that score ranks first, "" on a tie). Columns agent, dataset, score, decides, n, correct, accuracy,
    ci_low, ci_high."""
    parts = []
    for score in scores:
        frame = scored.assign(choice=scored[f"choice_{score}"])
        table = accuracy(frame)
        table.insert(2, "score", score)
        table.insert(3, "decides", score == decides)
        parts.append(table.drop(columns="unreadable"))
    columns = ["agent", "dataset", "score", "decides", "n", "correct", "accuracy", "ci_low", "ci_high"]
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True).sort_values(["agent", "dataset", "score"]).reset_index(drop=True)[columns]
