"""Consistency of WEP choices (Tang et al. RQ2): an agent picks, for a sample of numbers and an interval, one of
3 or 5 WEP phrases; four consistency metrics, their random baseline and paired comparisons.

Design (one prompt per scenario × CHOICES set × NUMBERS set × confidence point × interval; 3 × 2 × 2 × 5 × 6 =
360): choice sets of 5 (A "is almost certainly", B "is likely to be", C "is maybe", D "is unlikely to be",
E "is almost certainly not") and 3 (A "is likely to be", B "is maybe", C "is unlikely to be"), listed from the
most to the least probable, so a letter's position r (A = 0) ranks the probability it conveys (lower r = more
probable). Intervals: below_low, above_low, between (low and high), outside (below low or above high),
below_high, above_high, with low/high the ends of the central interval of N(μ, σ) at the confidence point.

Input: a long table, one row per answer, columns ``agent``, ``scenario``, ``choices`` (5 or 3), ``numbers``
(e.g. "narrow"/"wide"), ``confidence`` (0.05 … 0.95), ``interval`` (the names above), ``choice`` (the chosen
letter; NaN/"" when the answer could not be parsed; :data:`NO_OPTION` for an answer read as naming no option,
which the authors' reading gives a CoT answer without a letter: a conveyed probability of 0, rank n, below the
least probable option) and the ground truth as ``truth_choice`` (letter) or as the
share of the sample inside the interval (``share`` or ``ground_truth``), from which the letter follows by
:func:`truth_choice`. One answer per agent and prompt.

Metrics (each unit scores 1 if correct, else 0; an unparsed answer in a unit makes it 0; a unit whose prompts
are not all in the table is not scored; scores are means ×100, so 0–100):

- **pair-wise** (180 units per agent: scenario × choices × numbers × confidence × 3 complementary interval pairs
  {below_low, above_low}, {between, outside}, {below_high, above_high}): correct iff the two answers are a
  complementary pair, {almost certainly, almost certainly not}, {likely, unlikely} or {maybe, maybe}, i.e.
  r₁ + r₂ = n − 1 for a set of n choices. With ``reading="authors"`` (the authors' code,
  families/tang/metrics/reading.py) a 3-choice pair answered (unlikely, likely) in that order, r₁ = 2 and
  r₂ = 0, is not correct; the Methods' "regardless of their order" (``reading="text"``, default) counts it.
- **monotonicity** (72 units: scenario × choices × numbers × interval; the 5 answers ordered by increasing
  confidence point): for below_low, outside and above_high the conveyed probability must not increase
  (r₁ ≤ r₂ ≤ … ≤ r₅); for above_low, between and below_high it must not decrease (r₁ ≥ … ≥ r₅). Ties allowed.
- **empirical** (360 units, one per prompt): correct iff the answer is the ground-truth letter: the choice
  whose probability range holds the share s of the sample strictly inside the interval; 5 choices
  A (0.92, 1], B (0.61, 0.92], C (0.41, 0.61], D (0.13, 0.41], E [0, 0.13]; 3 choices A (0.61, 1],
  B [0.41, 0.61], C [0, 0.41).
- **empirical monotonicity** (288 units: scenario × choices × numbers × interval × the 4 pairs of consecutive
  confidence points): correct iff sign(r₂ − r₁) of the answers equals sign(t₂ − t₁) of the ground-truth letters
  (decreasing, increasing or constant, as the ground truth goes).

Random baseline: a responder choosing uniformly among the n letters of each prompt; each metric's score is
averaged over ``draws`` (10) seeded draws. Analytic expectations: empirical and pair-wise 1/n; monotonicity
C(n+4, 5)/n⁵ (a weakly monotone 5-sequence); empirical monotonicity 1/n for a constant ground truth, else
(n − 1)/(2n).

Paired comparisons (two agents on the same units, or two levels of a condition — 5 vs 3 choices, narrow vs
wide numbers — on units matched on everything else, agents pooled): ``scipy.stats.ttest_rel(a, b)`` on the
units' 0/1 scores, df = m − 1 for m pairs, and Cohen's d_av = (ā − b̄) / ((s_a + s_b)/2): the mean difference over
the *average of the two sample standard deviations* (ddof 1), as the authors' analysis computes it (their
published d values; not the root mean square √((s²_a + s²_b)/2), which gives another d when s_a ≠ s_b).
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from analysis.metrics.answers import AnswersError
from families.tang import rq2_items as design
from families.tang.rq2_items import CHOICE_SETS, CONFIDENCES, INTERVALS, LETTERS  # the item design's

#: an answer read as naming no option (the authors' reading, families/tang/metrics/reading.py): rank n
NO_OPTION = "none"
COMPLEMENTS: tuple[tuple[str, str], ...] = (("below_low", "above_low"), ("between", "outside"),
                                            ("below_high", "above_high"))
# Intervals whose probability falls as the confidence point grows (the answers' rank must not fall).
DECREASING: frozenset[str] = frozenset({"below_low", "outside", "above_high"})
METRICS: tuple[str, ...] = ("pairwise", "monotonicity", "empirical", "empirical_monotonicity")
METRIC_TITLES = {"pairwise": "Pair-wise", "monotonicity": "Monotonicity", "empirical": "Empirical",
                 "empirical_monotonicity": "Empirical monotonicity"}
SET_KEYS = ["agent", "scenario", "choices", "numbers"]
REQUIRED = ("agent", "scenario", "choices", "numbers", "confidence", "interval", "choice")


def truth_choice(share: ArrayLike, choices: ArrayLike | int) -> NDArray[np.object_]:
    """Ground-truth letter(s) for share(s) of the sample inside the interval (ranges in the module docstring;
    families.tang.rq2_items.truth_choice, which the item generator uses too); AnswersError for a bad share or set."""
    try:
        return design.truth_choice(share, choices)
    except ValueError as exc:
        raise AnswersError(str(exc)) from None


def _rank(letters: pd.Series, n: pd.Series) -> pd.Series:
    """A letter's position (A = 0) within its set of n choices; NaN when missing or not one of the n;
    n (below the least probable option) for :data:`NO_OPTION`."""
    text = letters.astype("string").str.strip()
    pos = text.str.upper().map({c: float(i) for i, c in enumerate(LETTERS)}).astype(float)
    pos = pos.where(pos < n.astype(float))
    return pos.mask((text == NO_OPTION).fillna(False).to_numpy(dtype=bool), n.astype(float))


def prepare(df: pd.DataFrame) -> pd.DataFrame:
    """The checked table with ``rank`` (the answer) and ``truth_rank`` (the ground truth) positions."""
    missing = [c for c in REQUIRED if c not in df.columns]
    if missing:
        raise AnswersError(f"answers table lacks column(s) {', '.join(missing)}; has {', '.join(map(str, df.columns))}")
    data = df.loc[:, [c for c in df.columns if c in (*REQUIRED, "truth_choice", "share", "ground_truth")]].copy()
    data["choices"] = pd.to_numeric(data["choices"], errors="coerce")
    bad = ~data["choices"].isin(list(CHOICE_SETS))
    if bad.any():
        raise AnswersError(f"row {data.index[bad][0]}: choices must be 5 or 3, not {df.loc[data.index[bad][0], 'choices']!r}")
    data["choices"] = data["choices"].astype(int)
    data["confidence"] = pd.to_numeric(data["confidence"], errors="coerce").round(3)
    unknown = ~data["interval"].isin(INTERVALS)
    if unknown.any():
        raise AnswersError(f"row {data.index[unknown][0]}: unknown interval {data['interval'][unknown].iloc[0]!r}; "
                           f"expected one of {', '.join(INTERVALS)}")
    if "truth_choice" in data.columns:
        truth = data["truth_choice"]
    else:
        share_col = "share" if "share" in data.columns else "ground_truth" if "ground_truth" in data.columns else None
        if share_col is None:
            raise AnswersError("answers table needs the ground truth: a 'truth_choice', 'share' or 'ground_truth' column")
        truth = pd.Series(truth_choice(data[share_col].to_numpy(dtype=float), data["choices"].to_numpy()),
                          index=data.index)
    data["rank"] = _rank(data["choice"], data["choices"])
    data["truth_rank"] = _rank(truth, data["choices"])
    if data["truth_rank"].isna().any():
        raise AnswersError(f"row {data.index[data['truth_rank'].isna()][0]}: no valid ground-truth choice")
    keys = [*SET_KEYS, "confidence", "interval"]
    dup = data.duplicated(keys, keep=False)
    if dup.any():
        first = data.loc[dup, keys].iloc[0].to_dict()
        raise AnswersError(f"more than one answer per agent and prompt (e.g. {first}); give each sample its own agent")
    return data


def _wide(data: pd.DataFrame, index: list[str], column: str, value: str) -> pd.DataFrame:
    return data.set_index([*index, column])[value].unstack(column)


READINGS: tuple[str, ...] = ("text", "authors")


def _check_reading(reading: str) -> None:
    if reading not in READINGS:
        raise ValueError(f"unknown reading {reading!r} (known: {', '.join(READINGS)})")


def unit_scores(df: pd.DataFrame, reading: str = "text") -> pd.DataFrame:
    """Every scored unit of the four metrics: columns metric, agent, scenario, choices, numbers, unit (what
    the unit is within its set, e.g. "0.050|below_low+above_low"), correct (0/1). ``reading``: "text" (the
    Methods) or "authors" (their code's pair-wise order rule; module docstring)."""
    _check_reading(reading)
    data = prepare(df)
    data["present"] = 1.0
    parts = [_pairwise(data, reading), _monotonicity(data), _empirical(data), _empirical_monotonicity(data)]
    out = pd.concat([p for p in parts if len(p)], ignore_index=True)
    out["correct"] = out["correct"].astype(float)
    return out[["metric", *SET_KEYS, "unit", "correct"]]


def _reversed_three(rank: pd.DataFrame, a: str, b: str) -> np.ndarray:
    """Pairs on 3 choices answered (unlikely, likely) in that order (the authors' code does not count them)."""
    n = rank.index.get_level_values("choices").to_numpy()
    return (n == 3) & (rank[a].to_numpy() == 2) & (rank[b].to_numpy() == 0)


def _pairwise(data: pd.DataFrame, reading: str = "text") -> pd.DataFrame:
    index = [*SET_KEYS, "confidence"]
    rank = _wide(data, index, "interval", "rank").reindex(columns=list(INTERVALS))
    present = _wide(data, index, "interval", "present").reindex(columns=list(INTERVALS))
    n = rank.index.get_level_values("choices").to_numpy()
    frames = []
    for a, b in COMPLEMENTS:
        keep = (present[a].notna() & present[b].notna()).to_numpy()
        complementary = rank[a].to_numpy() + rank[b].to_numpy() == n - 1
        if reading == "authors":
            complementary &= ~_reversed_three(rank, a, b)
        correct = complementary[keep]
        idx = rank.index[keep].to_frame(index=False)
        idx["unit"] = [f"{c:.3f}|{a}+{b}" for c in idx.pop("confidence")]
        idx["correct"] = correct.astype(float)
        frames.append(idx)
    return pd.concat(frames, ignore_index=True).assign(metric="pairwise")


def reversed_pairs(df: pd.DataFrame) -> int:
    """How many pair-wise units on 3 choices are answered (unlikely, likely) in that order: the units the
    authors' reading scores 0 and the text reading 1."""
    data = prepare(df)
    rank = _wide(data, [*SET_KEYS, "confidence"], "interval", "rank").reindex(columns=list(INTERVALS))
    return int(sum(_reversed_three(rank, a, b).sum() for a, b in COMPLEMENTS))


def _by_confidence(data: pd.DataFrame, value: str) -> pd.DataFrame:
    wide = _wide(data, [*SET_KEYS, "interval"], "confidence", value)
    return wide.reindex(columns=sorted(wide.columns))


def _monotonicity(data: pd.DataFrame) -> pd.DataFrame:
    rank = _by_confidence(data, "rank")
    present = _by_confidence(data, "present").reindex(columns=rank.columns)
    keep = (present.notna().all(axis=1) & (present.shape[1] == len(CONFIDENCES))).to_numpy()
    steps = np.diff(rank.to_numpy(dtype=float), axis=1)
    decreasing = rank.index.get_level_values("interval").isin(list(DECREASING))
    with np.errstate(invalid="ignore"):
        ok = np.where(decreasing, (steps >= 0).all(axis=1), (steps <= 0).all(axis=1))
    idx = rank.index[keep].to_frame(index=False)
    idx["unit"] = idx.pop("interval")
    idx["correct"] = ok[keep].astype(float)
    return idx.assign(metric="monotonicity")


def _empirical(data: pd.DataFrame) -> pd.DataFrame:
    out = data[SET_KEYS].copy()
    out["unit"] = [f"{c:.3f}|{k}" for c, k in zip(data["confidence"], data["interval"])]
    out["correct"] = (data["rank"] == data["truth_rank"]).astype(float).to_numpy()
    return out.assign(metric="empirical").reset_index(drop=True)


def _empirical_monotonicity(data: pd.DataFrame) -> pd.DataFrame:
    rank = _by_confidence(data, "rank")
    truth = _by_confidence(data, "truth_rank").reindex(columns=rank.columns)
    present = _by_confidence(data, "present").reindex(columns=rank.columns)
    levels = list(rank.columns)
    frames = []
    for j in range(len(levels) - 1):
        a, b = levels[j], levels[j + 1]
        keep = (present[a].notna() & present[b].notna()).to_numpy()
        answer = rank[b].to_numpy() - rank[a].to_numpy()
        expected = np.sign(truth[b].to_numpy() - truth[a].to_numpy())
        with np.errstate(invalid="ignore"):
            ok = np.sign(answer) == expected  # NaN (an unparsed answer) compares False
        idx = rank.index[keep].to_frame(index=False)
        idx["unit"] = [f"{k}|{a:.3f}>{b:.3f}" for k in idx.pop("interval")]
        idx["correct"] = ok[keep].astype(float)
        frames.append(idx)
    if not frames:  # a single confidence point: no pairs
        return pd.DataFrame(columns=[*SET_KEYS, "unit", "correct"]).assign(metric="empirical_monotonicity")
    return pd.concat(frames, ignore_index=True).assign(metric="empirical_monotonicity")


def _as_by(by: str | Sequence[str] | None) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(by)


def scores_from_units(units: pd.DataFrame, by: str | Sequence[str] | None = None) -> pd.DataFrame:
    """Mean ×100 and count of unit scores per agent × ``by`` × metric."""
    keys = ["agent", *_as_by(by), "metric"]
    grouped = units.groupby(keys, sort=True, observed=True)["correct"]
    out = pd.DataFrame({"score": grouped.mean() * 100, "n": grouped.size()})
    return out


def consistency_scores(df: pd.DataFrame, by: str | Sequence[str] | None = None,
                       reading: str = "text") -> pd.DataFrame:
    """Score (0–100) and number of units of each metric per agent, overall (``by=None``) or per ``by``
    ("scenario", "choices", "numbers", or a list of them); index (agent, *by, metric)."""
    return scores_from_units(unit_scores(df, reading), by)


def design_items(df: pd.DataFrame) -> pd.DataFrame:
    """The distinct prompts of an answers table (or an item table): scenario … interval and the ground truth."""
    cols = [c for c in ("scenario", "choices", "numbers", "confidence", "interval", "truth_choice", "share",
                        "ground_truth") if c in df.columns]
    return df.loc[:, cols].drop_duplicates(["scenario", "choices", "numbers", "confidence", "interval"])


def random_answers(items: pd.DataFrame, draws: int = 10, seed: int = 0) -> pd.DataFrame:
    """``draws`` random responders (agents "random#0", …) answering every prompt of ``items`` with a letter
    drawn uniformly among its choices (numpy's default_rng(seed))."""
    rng = np.random.default_rng(seed)
    base = design_items(items).reset_index(drop=True)
    n = pd.to_numeric(base["choices"]).to_numpy(dtype=int)
    frames = []
    for d in range(draws):
        pick = np.floor(rng.random(len(base)) * n).astype(int)
        frames.append(base.assign(agent=f"random#{d}", choice=[LETTERS[i] for i in pick]))
    return pd.concat(frames, ignore_index=True)


def random_baseline(items: pd.DataFrame, by: str | Sequence[str] | None = None, draws: int = 10,
                    seed: int = 0, reading: str = "text") -> pd.DataFrame:
    """The random responder's score per ``by`` × metric, averaged over ``draws`` seeded draws (agent
    "random"); columns score (mean of the draws' scores), sd (their standard deviation), n (units per draw)."""
    per_draw = consistency_scores(random_answers(items, draws, seed), by, reading).reset_index()
    keys = [*_as_by(by), "metric"]
    grouped = per_draw.groupby(keys, sort=True)
    out = pd.DataFrame({"score": grouped["score"].mean(), "sd": grouped["score"].std(ddof=1),
                        "n": grouped["n"].first()}).reset_index()
    out.insert(0, "agent", "random")
    return out.set_index(["agent", *keys])


def expected_random(choices: int, metric: str, truth_step: int = 1) -> float:
    """Analytic expectation (0–1) of a uniform responder's unit score (module docstring); ``truth_step``
    (empirical monotonicity only): the sign of the ground truth's step (0 = constant)."""
    n = int(choices)
    if metric in ("pairwise", "empirical"):
        return 1 / n
    if metric == "monotonicity":
        return math.comb(n + len(CONFIDENCES) - 1, len(CONFIDENCES)) / n ** len(CONFIDENCES)
    if metric == "empirical_monotonicity":
        return 1 / n if truth_step == 0 else (n - 1) / (2 * n)
    raise ValueError(f"unknown metric {metric!r}")


def paired_test(a: ArrayLike, b: ArrayLike) -> dict[str, float]:
    """Paired t-test of a against b (t, df, p), Cohen's d_av = (ā − b̄)/((s_a + s_b)/2) (sample SDs), the
    means ×100, n. d is NaN when both SDs are 0."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = x.size
    if n < 2:
        return {"mean_a": float(np.mean(x) * 100) if n else math.nan, "mean_b": float(np.mean(y) * 100) if n else math.nan,
                "t": math.nan, "df": math.nan, "p": math.nan, "d": math.nan, "n": n}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_rel(x, y)
    spread = (np.std(x, ddof=1) + np.std(y, ddof=1)) / 2
    d = float((x.mean() - y.mean()) / spread) if spread > 0 else math.nan
    return {"mean_a": float(x.mean() * 100), "mean_b": float(y.mean() * 100), "t": float(res.statistic),
            "df": float(n - 1), "p": float(res.pvalue), "d": d, "n": n}


def compare_agents(df: pd.DataFrame, agent_a: str, agent_b: str, by: str | Sequence[str] | None = "scenario",
                   units: pd.DataFrame | None = None, reading: str = "text") -> pd.DataFrame:
    """Paired comparison of two agents (e.g. standard vs CoT prompt) on the same units, per metric × ``by``;
    columns mean_a, mean_b (×100), t, df, p, d, n. Positive t: agent_a more consistent."""
    units = unit_scores(df, reading) if units is None else units
    keys = ["scenario", "choices", "numbers", "metric", "unit"]
    a = units[units["agent"] == agent_a].set_index(keys)["correct"]
    b = units[units["agent"] == agent_b].set_index(keys)["correct"]
    if a.empty or b.empty:
        raise AnswersError(f"no answers of agent {agent_a if a.empty else agent_b!r}")
    both = pd.concat({"a": a, "b": b}, axis=1, join="inner").reset_index()
    group = [*_as_by(by), "metric"]
    rows = {key if isinstance(key, tuple) else (key,): paired_test(g["a"], g["b"])
            for key, g in both.groupby(group, sort=True)}
    out = pd.DataFrame(list(rows.values()), index=pd.MultiIndex.from_tuples(list(rows), names=group))
    return out


def compare_conditions(df: pd.DataFrame, factor: str, levels: Sequence | None = None,
                       agents: Iterable[str] | None = None, units: pd.DataFrame | None = None,
                       reading: str = "text") -> pd.DataFrame:
    """Paired comparison of two levels of ``factor`` ("choices": 5 vs 3; "numbers": e.g. narrow vs wide) per
    metric, on units matched on everything else (agent, the other factors, the unit), ``agents`` pooled (all
    by default). Columns as :func:`compare_agents` (a = ``levels[0]``)."""
    if factor not in ("choices", "numbers", "scenario"):
        raise ValueError(f"cannot compare levels of {factor!r}")
    units = unit_scores(df, reading) if units is None else units
    if agents is not None:
        units = units[units["agent"].isin(list(agents))]
    if levels is None:
        found = list(pd.unique(units[factor]))
        levels = sorted(found, reverse=True) if factor == "choices" else sorted(found)
    if len(levels) != 2:
        raise AnswersError(f"{factor} needs exactly two levels to compare, found {list(levels)}")
    match = [c for c in ("agent", "scenario", "choices", "numbers") if c != factor] + ["metric", "unit"]
    a = units[units[factor] == levels[0]].set_index(match)["correct"]
    b = units[units[factor] == levels[1]].set_index(match)["correct"]
    both = pd.concat({"a": a, "b": b}, axis=1, join="inner").reset_index()
    rows = {m: paired_test(g["a"], g["b"]) for m, g in both.groupby("metric", sort=True)}
    out = pd.DataFrame(list(rows.values()), index=pd.Index(list(rows), name="metric"))
    out.insert(0, "levels", f"{levels[0]} vs {levels[1]}")
    return out
