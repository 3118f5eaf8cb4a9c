"""The tables of Belem et al. 2024 (Tables 1, 2, 5, 6, 7) from answers tables, as DataFrames.

:func:`analyse_belem` runs the whole pipeline on the non-verifiable (NV) answers and, optionally, the
verifiable (V) answers of the same instrument:

1. label ranking from all NV human participants; attention filter of both sets with that ranking;
2. reference P(k|u) from the included NV humans;
3. per expression and per agent: Human Mode, Human Individual, Random, each model agent (every agent
   other than ``human_agent``), on each set, all scored against the NV reference;
4. the summary (rows Human Mode, Human Individual, Random, models; columns ``pa_nv``, ``pct_pa_nv``,
   ``mae_nv``, ``wasserstein_nv`` and the same with ``_v``, plus ``delta_pa``) and the knowledge-bias gaps;
5. the coverage of each summary row: the expressions it was scored on per set, out of the reference's. A row
   that misses an expression (a model asked about a few expressions only) averages over fewer expressions
   and is not ``comparable`` with the complete rows.

PA and %PA are ×100; MAE and Wasserstein are on the 0–100 answer scale. As in the paper, the Human
Mode row has no MAE/Wasserstein/ΔPA. The Random row holds expected values (the paper shows one sampled
draw, e.g. PA 5.1 instead of the expected 4.8).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from analysis.metrics.answers import HUMAN, check_answers, compact, of_agent
from families.belem.metrics.attention import DEFAULT_THRESHOLD, attention_filter, keep_included, label_ranking
from families.belem.metrics.agreement import (NonNumber, agreement_by_expression, average_over_expressions,
                                              human_individual, human_individual_summary, mode_pa, random_baseline,
                                              reference_distribution)
from families.belem.metrics.knowledge_bias import knowledge_bias_table

HUMAN_MODE = "Human Mode"
HUMAN_INDIVIDUAL = "Human Individual"
RANDOM = "Random"
METRICS = ("pa", "pct_pa", "mae", "wasserstein")


@dataclass
class SetScores:
    """Everything scored on one statement set."""

    filter: pd.DataFrame           # per human participant: rho, n_answers, included
    by_expression: pd.DataFrame    # index (agent, label): n, pa, pct_pa, mae, wasserstein (models)
    individual_pairs: pd.DataFrame # index (respondent, label): pa, pct_pa, mae, wasserstein
    summary: pd.DataFrame          # rows: Human Mode, Human Individual, Random, models; METRICS + n_expressions
    pa_per_expression: pd.DataFrame  # Table 6/7: rows Avg PA + expressions; columns as summary rows


@dataclass
class BelemAnalysis:
    ranking: pd.DataFrame
    reference: pd.DataFrame
    nv: SetScores
    v: SetScores | None = None
    knowledge_bias: pd.DataFrame | None = None
    summary: pd.DataFrame = field(default_factory=pd.DataFrame)
    coverage: pd.DataFrame = field(default_factory=pd.DataFrame)  # index as summary; see coverage_table


def _order(reference: pd.DataFrame, order: list[str] | None) -> list[str]:
    if order:
        return [u for u in order if u in reference.index] + [u for u in reference.index if u not in order]
    means = reference.to_numpy() @ reference.columns.to_numpy(dtype=float)
    return list(reference.index[np.argsort(-means, kind="stable")])


def score_set(df: pd.DataFrame, reference: pd.DataFrame, ranking: pd.DataFrame, *, human_agent: str = HUMAN,
              threshold: float = DEFAULT_THRESHOLD, non_number: NonNumber = "renormalise",
              order: list[str] | None = None) -> SetScores:
    """Score one statement set (NV or V) against the NV ``reference``; humans filtered with ``ranking``."""
    check_answers(df)
    flt = attention_filter(df, ranking, threshold=threshold, human_agent=human_agent)
    humans = keep_included(of_agent(df, human_agent), flt, human_agent)
    models = df[df["agent"] != human_agent]
    labels = _order(reference, order)

    modes = mode_pa(reference).reindex(labels) * 100
    rnd = random_baseline(reference).reindex(labels)
    pairs = human_individual(humans, reference) if not humans.empty else pd.DataFrame(columns=list(METRICS))
    by_expr = agreement_by_expression(models, reference, non_number=non_number) if not models.empty else \
        pd.DataFrame(columns=["n", *METRICS], index=pd.MultiIndex.from_tuples([], names=["agent", "label"]))

    rows = {HUMAN_MODE: pd.Series({"pa": modes.mean(), "pct_pa": 100.0, "mae": np.nan, "wasserstein": np.nan,
                                   "n_expressions": int(modes.notna().sum())})}
    rows[HUMAN_INDIVIDUAL] = human_individual_summary(pairs, reference) if len(pairs) else \
        pd.Series({m: np.nan for m in METRICS} | {"n_expressions": 0})
    rows[RANDOM] = pd.Series({m: rnd[m].mean() for m in METRICS} | {"n_expressions": len(rnd)})
    if len(by_expr):
        for agent, r in average_over_expressions(by_expr).iterrows():
            rows[agent] = r
    summary = pd.DataFrame(rows).T
    summary["n_expressions"] = summary["n_expressions"].astype(int)

    per_u = pd.DataFrame({HUMAN_MODE: modes,
                          HUMAN_INDIVIDUAL: pairs.groupby(level="label")["pa"].mean() if len(pairs) else np.nan},
                         index=labels)
    if len(by_expr):
        per_u = per_u.join(by_expr["pa"].unstack("agent").reindex(labels))
    per_u[RANDOM] = rnd["pa"]
    avg = pd.DataFrame([summary["pa"].reindex(per_u.columns)], index=["Avg PA"])
    return SetScores(filter=flt, by_expression=by_expr, individual_pairs=pairs, summary=summary,
                     pa_per_expression=pd.concat([avg, per_u]))


def analyse_belem(nv: pd.DataFrame, v: pd.DataFrame | None = None, *, human_agent: str = HUMAN,
                  threshold: float | None = DEFAULT_THRESHOLD, non_number: NonNumber = "renormalise",
                  order: list[str] | None = None) -> BelemAnalysis:
    """The full Belem report from NV answers (and V answers): see the module docstring.

    ``order``: the expressions' display order (default: by the reference's mean, high to low).
    """
    check_answers(nv)
    nv = compact(nv)
    v = compact(v) if v is not None else None
    ranking = label_ranking(nv, human_agent=human_agent)
    nv_filter = attention_filter(nv, ranking, threshold=threshold, human_agent=human_agent)
    nv_humans = keep_included(of_agent(nv, human_agent), nv_filter, human_agent)
    reference = reference_distribution(nv_humans)
    kwargs = dict(human_agent=human_agent, threshold=threshold, non_number=non_number, order=order)
    nv_scores = score_set(nv, reference, ranking, **kwargs)
    result = BelemAnalysis(ranking=ranking, reference=reference.reindex(_order(reference, order)), nv=nv_scores)
    summary = nv_scores.summary[list(METRICS)].add_suffix("_nv")
    if v is not None:
        check_answers(v, ("respondent", "agent", "label", "value", "truth"))
        v_scores = score_set(v, reference, ranking, **kwargs)
        result.v = v_scores
        v_kept = keep_included(v, v_scores.filter, human_agent)
        result.knowledge_bias = knowledge_bias_table(v_kept, human_agent=human_agent)
        summary = summary.join(v_scores.summary[list(METRICS)].add_suffix("_v"), how="outer")
        summary["delta_pa"] = summary["pa_v"] - summary["pa_nv"]
        summary.loc[HUMAN_MODE, "delta_pa"] = np.nan
        head = [HUMAN_MODE, HUMAN_INDIVIDUAL, RANDOM]
        summary = summary.loc[head + [r for r in summary.index if r not in head]]
    result.summary = summary.astype(float)
    result.coverage = coverage_table(result)
    return result


def coverage_table(analysis: BelemAnalysis) -> pd.DataFrame:
    """Per summary row: ``expressions_nv`` (and ``expressions_v``), the expressions scored on each set (null
    where the agent has no answers in that set: its columns there are empty anyway), ``expressions_total``
    (the reference's expressions) and ``comparable`` (scored on all of them in every set it has answers in)."""
    total = len(analysis.reference.index)
    sets = [("nv", analysis.nv)] + ([("v", analysis.v)] if analysis.v is not None else [])
    table = pd.DataFrame(index=analysis.summary.index)
    for name, scores in sets:
        table[f"expressions_{name}"] = scores.summary["n_expressions"].reindex(table.index).astype("Int64")
    table["expressions_total"] = total
    counts = table[[f"expressions_{name}" for name, _ in sets]]
    table["comparable"] = (counts.isna() | (counts >= total)).all(axis=1).astype(bool)
    return table
