"""Metrics of the generic report section: any study's answers, each agent beside the humans (SPEC §6).

Every table function takes the tidy answers table (one row per answer) with ``agent`` (``"human"`` for people),
the grouping columns named by ``keys`` and the shape's answer columns, and compares each agent of a group with
the humans of the same group (the *human distribution* P). Human rows get NaN for the comparisons; a group
without humans gets NaN comparisons for every agent (the models are still described). Unparseable answers
(NaN value, empty choice, missing bound) are counted in ``unparsed`` and left out of every share.

**Scale** (:func:`scale_table`). Bins: for a scale of k points (min, min+step, …, max) the k points are the bins,
a value falling in the nearest point (a tie goes to the upper one: ⌊(v − min)/step + ½⌋); for the 0–100
scale the 21 answer bins 0, 5, …, 100 of :mod:`surveys.answer_bins` (:func:`answer_binning`). With
H_a(k) the share of agent a's answers in bin k and P(k) the humans':

- histogram H_a(k) (table :func:`scale_histograms`); mean and median of the raw values (not binned);
- Wasserstein-1 W(H_a, P) = Σ_{i<k} |F_H(c_i) − F_P(c_i)|·(c_{i+1} − c_i) over the bin values c
  (F = cumulative share; equals ``scipy.stats.wasserstein_distance(c, c, H_a, P)``), in the scale's units;
- KL D_KL(P ‖ H_a) = Σ_k P(k)·ln(P(k)/H_a(k)), natural log, the human distribution first; an empty agent
  bin is set to ε = 1e−10 (H_a is not renormalised afterwards) and bins with P(k) = 0 add 0;
- proportional agreement PA = Σ_k H_a(k)·P(k), the chance that one of the agent's answers and
  one human answer drawn at random fall in the same bin, ×100; %PA = PA / max_k P(k) ×100 (the PA of an
  agent always answering the humans' most frequent bin is 100%).

**Choice / pick** (:func:`choice_table`). S_a(o): share of agent a's readable answers choosing option o
(options outside the declared list are kept as their own category); M: the humans' majority option(s),
argmax_o S_human(o).

- agreement with the human majority = (1/|M|)·Σ_{o∈M} S_a(o): the share of the agent's answers that choose
  the majority option (with tied majority options, the mean share over them);
- Jensen–Shannon distance JSD(S_a, S_human) = √(½ KL₂(S_a ‖ m) + ½ KL₂(S_human ‖ m)), m = ½(S_a + S_human),
  base-2 logs, so 0 (same shares) ≤ JSD ≤ 1 (no option in common); ``scipy.spatial.distance.jensenshannon``
  with ``base=2``.

**Interval** (:func:`interval_table`): width = upper − lower; mean and median width; mean lower and upper
bound; coverage = share of the answers to items with a true value t whose interval holds it
(lower ≤ t ≤ upper), over those answers only (``n_truth`` of them; NaN when no item has a truth).

**Free text** (:func:`count_table`): the number of answers only; no metric.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy.spatial.distance import jensenshannon
from scipy.special import rel_entr

from .answers import HUMAN, AnswersError
from surveys.answer_bins import BIN_CENTRES, bin_index

EMPTY_BIN = 1e-10  # the smoothing of an empty agent bin in KL
TIE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Binning:
    """The bins of a scale: their values (centres) and how a value is put in one."""

    centres: NDArray[np.float64]
    name: str  # how the report describes it
    answer_bins: bool = False  # the 21 answer bins of surveys.answer_bins (their own rule of rounding)

    def index(self, values: ArrayLike) -> NDArray[np.int64]:
        """The bin index of each value; −1 for NaN and for values outside the scale."""
        v = np.asarray(values, dtype=float)
        if self.answer_bins:
            inside = np.isnan(v) | ((v >= 0) & (v <= 100))
            idx = np.full(v.shape, -1, dtype=np.int64)
            idx[inside] = bin_index(v[inside])
            return idx
        lo, hi = self.centres[0], self.centres[-1]
        step = (hi - lo) / (len(self.centres) - 1) if len(self.centres) > 1 else 1.0
        idx = np.full(v.shape, -1, dtype=np.int64)
        ok = ~np.isnan(v) & (v >= lo - TIE_TOLERANCE) & (v <= hi + TIE_TOLERANCE)
        idx[ok] = np.clip(np.floor((v[ok] - lo) / step + 0.5 + TIE_TOLERANCE), 0, len(self.centres) - 1)
        return idx


def answer_binning() -> Binning:
    """The 21 bins 0, 5, …, 100 of the 0–100 scale (surveys.answer_bins)."""
    return Binning(BIN_CENTRES.copy(), "the 21 answer bins 0, 5, …, 100", answer_bins=True)


def scale_binning(minimum: float, maximum: float, step: float = 1.0) -> Binning:
    """The points of a scale as its bins; the 0–100 scale in steps of 1 or 5 gets the 21 answer bins."""
    if not maximum > minimum or not step > 0:
        raise ValueError(f"a scale needs min < max and step > 0, not {minimum:g}–{maximum:g} step {step:g}")
    if minimum == 0 and maximum == 100 and step in (1, 5):
        return answer_binning()
    count = int(round((maximum - minimum) / step))
    centres = minimum + step * np.arange(count + 1, dtype=float)
    return Binning(centres, f"the {count + 1} points of the scale {minimum:g}–{maximum:g}")


# --- formula-level functions -------------------------------------------------------------------
def histogram(values: ArrayLike, binning: Binning) -> tuple[NDArray[np.float64], int]:
    """(shares per bin, answers counted): NaN and out-of-scale values are not counted; all-zero shares when
    none is."""
    idx = binning.index(values)
    idx = idx[idx >= 0]
    counts = np.bincount(idx, minlength=len(binning.centres)).astype(float)
    return (counts / idx.size if idx.size else counts), int(idx.size)


def wasserstein(h: ArrayLike, p: ArrayLike, centres: ArrayLike) -> float:
    """W1 between two histograms over ``centres``: Σ_{i<k} |F_h(c_i) − F_p(c_i)|·(c_{i+1} − c_i)."""
    h, p, c = (np.asarray(x, dtype=float) for x in (h, p, centres))
    if h.sum() <= 0 or p.sum() <= 0:
        return float("nan")
    fh, fp = np.cumsum(h / h.sum())[:-1], np.cumsum(p / p.sum())[:-1]
    return float(np.sum(np.abs(fh - fp) * np.diff(c)))


def kl_divergence(p: ArrayLike, q: ArrayLike) -> float:
    """D_KL(P ‖ Q) = Σ_k P(k)·ln(P(k)/Q(k)); empty Q bins set to 1e−10 (not renormalised); P(k)=0 adds 0."""
    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    if p.sum() <= 0 or q.sum() <= 0:
        return float("nan")
    return float(rel_entr(p, np.where(q == 0, EMPTY_BIN, q)).sum())


def proportional_agreement(h: ArrayLike, p: ArrayLike) -> float:
    """PA = Σ_k H(k)·P(k) (a fraction, 0–1)."""
    h, p = np.asarray(h, dtype=float), np.asarray(p, dtype=float)
    if h.sum() <= 0 or p.sum() <= 0:
        return float("nan")
    return float(h @ p)


def majority_options(shares: pd.Series) -> list[str]:
    """The option(s) with the largest share (ties all kept, in the series' order); none for no answers."""
    if shares.empty or not shares.max() > 0:
        return []
    top = shares.max()
    return [str(o) for o, s in shares.items() if abs(s - top) <= TIE_TOLERANCE]


def majority_agreement(shares: pd.Series, majority: Sequence[str]) -> float:
    """(1/|M|)·Σ_{o∈M} S(o): the agent's share choosing the humans' majority option (mean over tied ones)."""
    if not majority or not shares.sum() > 0:
        return float("nan")
    return float(shares.reindex(list(majority)).fillna(0.0).mean())


def js_distance(s: ArrayLike, t: ArrayLike) -> float:
    """Jensen–Shannon distance with base-2 logs (0–1) between two share vectors over the same options."""
    s, t = np.asarray(s, dtype=float), np.asarray(t, dtype=float)
    if s.sum() <= 0 or t.sum() <= 0:
        return float("nan")
    return float(jensenshannon(s, t, base=2))


# --- tables ------------------------------------------------------------------------------------
def _check(df: pd.DataFrame, keys: Sequence[str], columns: Sequence[str]) -> None:
    missing = [c for c in ("agent", *keys, *columns) if c not in df.columns]
    if missing:
        raise AnswersError(f"answers table lacks column(s) {', '.join(missing)}; has {', '.join(map(str, df.columns))}")


def _groups(df: pd.DataFrame, keys: Sequence[str]):
    """(group key tuple, the group's rows) per group of ``keys`` (one group of everything without keys)."""
    if not keys:
        yield (), df
        return
    for key, part in df.groupby(list(keys), sort=True, dropna=False):
        yield (key if isinstance(key, tuple) else (key,)), part


def _agents(part: pd.DataFrame) -> list[str]:
    """The humans first, then the other agents by name."""
    names = set(part["agent"].astype(str))
    return ([HUMAN] if HUMAN in names else []) + sorted(names - {HUMAN})


def scale_histograms(df: pd.DataFrame, binning: Binning, keys: Sequence[str] = ()) -> pd.DataFrame:
    """Long table: ``keys``, agent, bin (its value), count, share — one row per bin of every agent × group."""
    _check(df, keys, ("value",))
    rows = []
    for key, part in _groups(df, keys):
        for agent in _agents(part):
            values = part.loc[part["agent"] == agent, "value"].to_numpy(dtype=float)
            shares, n = histogram(values, binning)
            for centre, share in zip(binning.centres, shares):
                rows.append((*key, agent, float(centre), int(round(share * n)), float(share)))
    return pd.DataFrame(rows, columns=[*keys, "agent", "bin", "count", "share"])


SCALE_COLUMNS = ["answers", "unparsed", "mean", "median", "sd", "pa", "pct_pa", "wasserstein", "kl"]


def scale_table(df: pd.DataFrame, binning: Binning, keys: Sequence[str] = (), reference: str = HUMAN) -> pd.DataFrame:
    """Per ``keys`` group × agent: answers, unparsed, mean, median, sd (ddof 1) of the readable values, and
    against the ``reference`` agent's histogram of the same group: pa and pct_pa (×100), wasserstein, kl."""
    _check(df, keys, ("value",))
    rows = []
    for key, part in _groups(df, keys):
        hist = {}
        for agent in _agents(part):
            values = part.loc[part["agent"] == agent, "value"].to_numpy(dtype=float)
            shares, n = histogram(values, binning)
            readable = values[binning.index(values) >= 0]
            hist[agent] = shares
            rows.append([*key, agent, len(values), len(values) - n,
                         float(readable.mean()) if n else np.nan, float(np.median(readable)) if n else np.nan,
                         float(readable.std(ddof=1)) if n > 1 else np.nan])
        p = hist.get(reference)
        for row in rows[len(rows) - len(hist):]:
            agent = row[len(key)]
            h = hist[agent]
            if p is None or agent == reference:
                row += [np.nan] * 4
                continue
            pa = proportional_agreement(h, p)
            row += [pa * 100, pa / p.max() * 100 if p.max() > 0 else np.nan,
                    wasserstein(h, p, binning.centres), kl_divergence(p, h)]
    return pd.DataFrame(rows, columns=[*keys, "agent", *SCALE_COLUMNS])


def _choice_shares(part: pd.DataFrame, options: Sequence[str]) -> tuple[dict[str, pd.Series], dict[str, int]]:
    """Per agent of one group: the counts of each option (declared ``options`` first, in order, then any other
    option an answer names), and the agent's unparsed answers (empty ``choice``)."""
    chosen = part["choice"].fillna("").astype(str)
    seen = [o for o in dict.fromkeys(chosen[chosen != ""]) if o not in options]
    order = [*options, *sorted(seen)]
    counts, unparsed = {}, {}
    for agent in _agents(part):
        mine = chosen[(part["agent"] == agent).to_numpy()]
        counts[agent] = mine[mine != ""].value_counts().reindex(order, fill_value=0)
        unparsed[agent] = int((mine == "").sum())
    return counts, unparsed


def _shares(counts: pd.Series) -> pd.Series:
    total = counts.sum()
    return counts / total if total else counts.astype(float)


def option_shares(df: pd.DataFrame, options: Sequence[str], keys: Sequence[str] = ()) -> pd.DataFrame:
    """Long table: ``keys``, agent, option, count, share of the readable choices (``choice`` not empty).
    Declared ``options`` first, in order, then any other option an answer names."""
    _check(df, keys, ("choice",))
    rows = []
    for key, part in _groups(df, keys):
        counts, _ = _choice_shares(part, options)
        for agent, c in counts.items():
            for option, share in _shares(c).items():
                rows.append((*key, agent, option, int(c[option]), float(share)))
    return pd.DataFrame(rows, columns=[*keys, "agent", "option", "count", "share"])


CHOICE_COLUMNS = ["answers", "unparsed", "top_option", "human_majority", "majority_agreement", "js_distance"]


def choice_table(df: pd.DataFrame, options: Sequence[str], keys: Sequence[str] = (),
                 reference: str = HUMAN) -> pd.DataFrame:
    """Per ``keys`` group × agent: answers, unparsed, the agent's most chosen option(s) (``A|B`` when tied),
    the reference's majority option(s), agreement with it (0–1) and the Jensen–Shannon distance (base 2)."""
    _check(df, keys, ("choice",))
    rows = []
    for key, part in _groups(df, keys):
        counts, unparsed = _choice_shares(part, options)
        ref = _shares(counts[reference]) if reference in counts else None
        majority = majority_options(ref) if ref is not None else []
        for agent, c in counts.items():
            s = _shares(c)
            row = [*key, agent, int(c.sum()) + unparsed[agent], unparsed[agent],
                   "|".join(majority_options(s)), "|".join(majority)]
            if ref is None or agent == reference:
                row += [np.nan, np.nan]
            else:
                row += [majority_agreement(s, majority), js_distance(s.to_numpy(), ref.to_numpy())]
            rows.append(row)
    return pd.DataFrame(rows, columns=[*keys, "agent", *CHOICE_COLUMNS])


INTERVAL_COLUMNS = ["answers", "unparsed", "mean_lower", "mean_upper", "mean_width", "median_width", "coverage",
                    "n_truth"]


def interval_table(df: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """Per ``keys`` group × agent: answers, unparsed (a bound missing), mean lower and upper bound, mean and
    median width (upper − lower), and coverage over the answers to items with a true value (column
    ``truth_value``, NaN when the item has none): share with lower ≤ truth ≤ upper, and how many (n_truth)."""
    _check(df, keys, ("lower", "upper", "truth_value"))
    rows = []
    for key, part in _groups(df, keys):
        for agent in _agents(part):
            mine = part[part["agent"] == agent]
            lower, upper = mine["lower"].to_numpy(dtype=float), mine["upper"].to_numpy(dtype=float)
            truth = mine["truth_value"].to_numpy(dtype=float)
            ok = ~np.isnan(lower) & ~np.isnan(upper)
            width = upper[ok] - lower[ok]
            judged = ok & ~np.isnan(truth)
            hit = (lower[judged] <= truth[judged]) & (truth[judged] <= upper[judged])
            rows.append([*key, agent, len(mine), int((~ok).sum()),
                         float(lower[ok].mean()) if ok.any() else np.nan,
                         float(upper[ok].mean()) if ok.any() else np.nan,
                         float(width.mean()) if ok.any() else np.nan,
                         float(np.median(width)) if ok.any() else np.nan,
                         float(hit.mean()) if judged.any() else np.nan, int(judged.sum())])
    return pd.DataFrame(rows, columns=[*keys, "agent", *INTERVAL_COLUMNS])


def count_table(df: pd.DataFrame, keys: Sequence[str] = ()) -> pd.DataFrame:
    """Per ``keys`` group × agent: the number of answers (free text: no metric)."""
    _check(df, keys, ())
    rows = [(*key, agent, int((part["agent"] == agent).sum()))
            for key, part in _groups(df, keys) for agent in _agents(part)]
    return pd.DataFrame(rows, columns=[*keys, "agent", "answers"])
