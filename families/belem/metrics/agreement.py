"""Agreement of an agent's answers with the human reference (Belem et al. 2024, §4.3 and App. D; SPEC §6).

Notation: bins k ∈ {0, 5, …, 100}; expressions u (control items are not an expression).

- H_a(k|u): share of agent a's answers to u falling in bin k (:func:`histograms`); a
  distribution-mode answer contributes its whole distribution.
- P(k|u): the reference, the histogram of the attention-filtered human answers to the non-verifiable
  items (:func:`reference_distribution`). Verifiable-set answers are scored against it too.
- PA(a,u) = Σ_k H_a(k|u)·P(k|u) (:func:`pa_by_expression`); PA(a) = mean over u, shown ×100.
- Human Mode: max_k P(k|u) (:func:`mode_pa`); %PA(a) = mean over u of PA(a,u) / max_k P(k|u), ×100.
- MAE = mean over u of |Σ_k k·H_a(k|u) − Σ_k k·P(k|u)| (:func:`mae_by_expression`).
- Wasserstein-1 per u between H_a(·|u) and P(·|u) on the bin values, averaged over u
  (:func:`wasserstein_by_expression`; equals ``scipy.stats.wasserstein_distance(bins, bins, H, P)``).
- Human Individual: per filtered participant × expression, their own histogram scored against the full
  reference (no leave-one-out), averaged over all pairs (:func:`human_individual`).
- Random: a responder uniform over the 21 bins (:func:`random_baseline`); its expected PA is 1/21 ≈ 4.8
  against any reference.

Tables returned by the ``*_table`` / ``agreement_by_expression`` functions show PA and %PA ×100;
the formula-level functions return fractions. Everything is vectorised over groups.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from analysis.metrics.answers import AnswersError, check_answers, dist_matrix, expressions_only, has_dist
from surveys.answer_bins import BIN_CENTRES, BIN_WIDTH, N_BINS, bin_index

NonNumber = Literal["renormalise", "miss"]
BIN_COLUMNS: list[int] = [int(c) for c in BIN_CENTRES]
UNIFORM: NDArray[np.float64] = np.full(N_BINS, 1.0 / N_BINS)


# --- histograms --------------------------------------------------------------------------------
def _group_codes(df: pd.DataFrame, keys: Sequence[str]) -> tuple[NDArray[np.int64], pd.Index]:
    """Group number of each row and the sorted index of the groups."""
    grouped = df.groupby(list(keys), sort=True, observed=True, dropna=False)
    return grouped.ngroup().to_numpy(dtype=np.int64), grouped.size().index


def bin_mass(df: pd.DataFrame, keys: Sequence[str], non_number: NonNumber = "renormalise"
             ) -> tuple[pd.Index, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Summed bin mass per group: (group index, mass G×21, answers counted G, non-number mass G).

    A single value adds 1 to its bin; NaN values (unparseable) add nothing and are not counted.
    A distribution answer adds its numeric masses: with ``non_number="renormalise"`` (default) scaled
    to sum 1, i.e. the answer's distribution given that it is a number; with ``"miss"`` as they are, so
    its non-number mass counts as an answer that agrees with nobody (PA) — MAE and Wasserstein always
    use the renormalised histogram. An answer whose mass is all non-number is not counted under
    "renormalise".
    """
    if non_number not in ("renormalise", "miss"):
        raise ValueError(f"non_number must be 'renormalise' or 'miss', not {non_number!r}")
    codes, index = _group_codes(df, keys)
    groups = len(index)
    is_dist = has_dist(df)
    single = ~is_dist
    idx = bin_index(df["value"].to_numpy(dtype=float)[single])
    codes_single = codes[single]
    ok = idx >= 0
    flat = np.bincount(codes_single[ok] * N_BINS + idx[ok], minlength=groups * N_BINS)
    mass = flat.reshape(groups, N_BINS).astype(float)
    counted = np.bincount(codes_single[ok], minlength=groups).astype(float)
    other = np.zeros(groups)
    if is_dist.any():
        numeric, rest = dist_matrix(df["dist"].to_numpy()[is_dist], index=df.index[is_dist])
        codes_dist = codes[is_dist]
        sums = numeric.sum(axis=1)
        if non_number == "renormalise":
            use = sums > 0
            contrib = np.divide(numeric, sums[:, None], out=np.zeros_like(numeric), where=use[:, None])
        else:
            use = np.ones(len(sums), dtype=bool)
            contrib = numeric
        np.add.at(mass, codes_dist, contrib)
        counted += np.bincount(codes_dist[use], minlength=groups)
        other += np.bincount(codes_dist, weights=rest, minlength=groups)
    return index, mass, counted, other


def histograms(df: pd.DataFrame, keys: Sequence[str] = ("agent", "label"), *,
               non_number: NonNumber = "renormalise", include_control: bool = False) -> pd.DataFrame:
    """H(k|group): share of each group's answers per bin; index = ``keys``, columns = 0, 5, …, 100.

    Controls are left out unless ``include_control``. Groups with no countable answer are dropped.
    See :func:`bin_mass` for distribution answers and ``non_number``.
    """
    return _histograms_and_counts(df, keys, non_number, include_control)[0]


def _histograms_and_counts(df: pd.DataFrame, keys: Sequence[str], non_number: NonNumber,
                           include_control: bool) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    check_answers(df, ("value", *keys))
    data = df if include_control else expressions_only(df)
    index, mass, counted, _ = bin_mass(data, keys, non_number)
    keep = counted > 0
    shares = mass[keep] / counted[keep, None]
    return pd.DataFrame(shares, index=index[keep], columns=BIN_COLUMNS), counted[keep].astype(np.int64)


def answer_counts(df: pd.DataFrame, keys: Sequence[str] = ("agent", "label")) -> pd.DataFrame:
    """Per group: ``answers`` (rows), ``unparsed`` (no value and no distribution), ``non_number_mass``
    (mean over distribution answers of their non-number mass; NaN without any)."""
    check_answers(df, ("value", *keys))
    is_dist = has_dist(df)
    frame = pd.DataFrame({k: df[k].to_numpy() for k in keys})
    frame["answers"] = 1
    frame["unparsed"] = (np.isnan(df["value"].to_numpy(dtype=float)) & ~is_dist).astype(int)
    frame["non_number_mass"] = np.nan
    if is_dist.any():
        _, rest = dist_matrix(df["dist"].to_numpy()[is_dist], index=df.index[is_dist])
        frame.loc[is_dist, "non_number_mass"] = rest
    return frame.groupby(list(keys), sort=True, observed=True).agg(
        answers=("answers", "sum"), unparsed=("unparsed", "sum"), non_number_mass=("non_number_mass", "mean"))


def reference_distribution(humans_nv: pd.DataFrame) -> pd.DataFrame:
    """P(k|u): the histogram of the (attention-filtered) human answers to the non-verifiable items,
    one row per expression. Pass only the included humans' non-verifiable answers."""
    if humans_nv.empty:
        raise AnswersError("no human answers to build the reference distribution from")
    ref = histograms(humans_nv, ("label",))
    if ref.empty:
        raise AnswersError("no human answers to an expression (controls only?) for the reference")
    return ref


# --- scoring against the reference ---------------------------------------------------------------
def _labels(h: pd.DataFrame) -> pd.Index:
    return h.index.get_level_values("label") if "label" in (h.index.names or []) else h.index


def _aligned_reference(h: pd.DataFrame, reference: pd.DataFrame) -> NDArray[np.float64]:
    """The reference row of each histogram row's label (NaN rows for labels the reference lacks)."""
    return reference.reindex(_labels(h)).to_numpy(dtype=float)


def _normalised(h: NDArray[np.float64]) -> NDArray[np.float64]:
    sums = h.sum(axis=1, keepdims=True)
    return np.divide(h, sums, out=np.full_like(h, np.nan), where=sums > 0)


def expected_value(h: NDArray[np.float64] | pd.DataFrame) -> NDArray[np.float64]:
    """Mean answer Σ_k k·h(k) of each (normalised) histogram row."""
    return _normalised(np.asarray(h, dtype=float)) @ BIN_CENTRES


def wasserstein_rows(h: NDArray[np.float64], p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Wasserstein-1 between matching rows of two histograms over the bins 0, 5, …, 100:
    Σ_k |F_h(k) − F_p(k)|·5 over the first 20 bins (F = cumulative share). Same as
    ``scipy.stats.wasserstein_distance(BIN_CENTRES, BIN_CENTRES, h_row, p_row)``."""
    ch = np.cumsum(_normalised(np.atleast_2d(h)), axis=1)[:, :-1]
    cp = np.cumsum(_normalised(np.atleast_2d(p)), axis=1)[:, :-1]
    return np.abs(ch - cp).sum(axis=1) * BIN_WIDTH


def pa_by_expression(h: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """PA(a,u) = Σ_k H_a(k|u)·P(k|u) for each histogram row (a fraction, 0–1)."""
    p = _aligned_reference(h, reference)
    return pd.Series((h.to_numpy(dtype=float) * p).sum(axis=1), index=h.index, name="pa")


def mode_pa(reference: pd.DataFrame) -> pd.Series:
    """Human Mode per expression: max_k P(k|u), the PA of an agent always answering the mode."""
    return reference.max(axis=1).rename("mode_pa")


def mae_by_expression(h: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """|Σ_k k·H_a(k|u) − Σ_k k·P(k|u)| for each histogram row."""
    p = _aligned_reference(h, reference)
    return pd.Series(np.abs(expected_value(h.to_numpy(dtype=float)) - expected_value(p)), index=h.index, name="mae")


def wasserstein_by_expression(h: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """Wasserstein-1 between H_a(·|u) and P(·|u) for each histogram row."""
    p = _aligned_reference(h, reference)
    return pd.Series(wasserstein_rows(h.to_numpy(dtype=float), p), index=h.index, name="wasserstein")


def percent_pa(pa_u: pd.Series, mode_u: pd.Series) -> float:
    """%PA = mean over u of PA(a,u) / max_k P(k|u), ×100. Both series indexed by expression
    (same scale, fractions or ×100); expressions missing from either are skipped."""
    ratio = (pa_u / mode_u.reindex(pa_u.index)).dropna()
    return float(ratio.mean() * 100) if len(ratio) else float("nan")


def score_histograms(h: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Per histogram row: ``pa`` (×100), ``pct_pa`` (PA / mode ×100), ``mae``, ``wasserstein``."""
    modes = _aligned_reference(h, reference).max(axis=1)
    pa = pa_by_expression(h, reference).to_numpy()
    return pd.DataFrame({
        "pa": pa * 100,
        "pct_pa": pa / modes * 100,
        "mae": mae_by_expression(h, reference).to_numpy(),
        "wasserstein": wasserstein_by_expression(h, reference).to_numpy(),
    }, index=h.index)


def agreement_by_expression(df: pd.DataFrame, reference: pd.DataFrame, *,
                            non_number: NonNumber = "renormalise") -> pd.DataFrame:
    """Per agent × expression: ``n`` (answers scored), ``pa`` (×100), ``pct_pa``, ``mae``, ``wasserstein``,
    pooling all of each agent's answers into H_a(·|u). Expressions absent from the reference get NaN."""
    h, counted = _histograms_and_counts(df, ("agent", "label"), non_number, False)
    table = score_histograms(h, reference)
    table.insert(0, "n", counted)
    return table


def average_over_expressions(by_expression: pd.DataFrame, level: str = "agent") -> pd.DataFrame:
    """Mean of each metric over the expressions of each ``level`` group, with ``n_expressions``
    (expressions that could be scored). PA(a) = mean over u of PA(a,u), and so on."""
    metrics = [c for c in ("pa", "pct_pa", "mae", "wasserstein") if c in by_expression.columns]
    grouped = by_expression[metrics].groupby(level=level, sort=False)
    out = grouped.mean()
    out["n_expressions"] = by_expression["pa"].notna().groupby(level=level, sort=False).sum()
    return out


# --- baselines ----------------------------------------------------------------------------------
def human_individual(humans: pd.DataFrame, reference: pd.DataFrame) -> pd.DataFrame:
    """Human Individual per (respondent, expression) pair: that participant's own histogram (usually
    2 answers) scored against the full reference, no leave-one-out. Columns as :func:`score_histograms`.
    Pass only the attention-filtered humans' answers (either statement set)."""
    h = histograms(humans, ("respondent", "label"))
    return score_histograms(h, reference)


def human_individual_summary(pairs: pd.DataFrame, reference: pd.DataFrame) -> pd.Series:
    """Human Individual PA, MAE and Wasserstein averaged over all participant–expression pairs;
    %PA = mean over u of (mean PA over pairs of u) / max_k P(k|u) (SPEC's %PA definition)."""
    by_u = pairs.groupby(level="label", sort=False)["pa"].mean()
    return pd.Series({
        "pa": pairs["pa"].mean(),
        "pct_pa": percent_pa(by_u, mode_pa(reference) * 100),
        "mae": pairs["mae"].mean(),
        "wasserstein": pairs["wasserstein"].mean(),
        "n_expressions": by_u.notna().sum(),
    })


def random_baseline(reference: pd.DataFrame) -> pd.DataFrame:
    """Expected scores of a responder uniform over the 21 bins, per expression: ``pa`` = 100/21 ≈ 4.76
    whatever the reference, ``pct_pa``, ``mae`` = |50 − mean P(·|u)|, ``wasserstein`` to the uniform."""
    uniform = pd.DataFrame(np.tile(UNIFORM, (len(reference), 1)), index=reference.index, columns=BIN_COLUMNS)
    return score_histograms(uniform, reference)


def mode_responder(reference: pd.DataFrame) -> pd.DataFrame:
    """The histogram of an agent that always answers argmax_k P(k|u) (first mode on ties)."""
    out = np.zeros(reference.shape)
    out[np.arange(len(reference)), reference.to_numpy().argmax(axis=1)] = 1.0
    return pd.DataFrame(out, index=reference.index, columns=BIN_COLUMNS)
