"""Answers grouped by a participant field (a questionnaire answer of a person, the same field of a model's
persona): per group, each agent's quantity beside the humans', and the between-group differences of each agent.
One implementation for every report section (analysis/reports/grouping.py); a section only chooses its
per-answer quantity q (a scale value, a 0–100 probability, a 0/1 hit or correct answer).

Input: the tidy table of one field, one row per answer, with ``agent`` (``"human"`` for people), ``group`` (the
answer's respondent's value of the field, as text), ``unit`` (the respondent: a participant; for a model, one
persona of one run, i.e. the answers asked under the same persona) and the quantity ``q`` (NaN for an
unreadable answer: counted in ``unparsed``, left out of every number).

Per (agent, group), :func:`group_table`:

- ``answers`` (readable ones), ``units`` (respondents with one);
- the distribution of the answers' q: ``median``, ``q25``, ``q75``, ``sd_answers``;
- the mean over respondents: each respondent's mean q, ū_r = (1/n_r)·Σ q, then the mean m = (1/k)·Σ_r ū_r over
  the k respondents of the group (each person, each persona, weighs the same), their standard deviation s
  (ddof 1) and the 95% t interval m ± t_{0.975, k−1}·s/√k (NaN below two respondents);
- ``vs_humans``: for a model, its mean minus the humans' mean of the same group (Welch, below), and the
  section's comparison of the two answer distributions (``compare``, e.g. W1, PA, KL of
  :func:`binned_comparison`).

Between groups, :func:`group_differences`: for each agent and each pair of groups a, b (in the order given,
a before b; "(no answer)" left out) the difference of means d = m_a − m_b with Welch's standard error
se = √(s_a²/k_a + s_b²/k_b), Welch–Satterthwaite degrees of freedom
ν = se⁴ / ((s_a²/k_a)²/(k_a − 1) + (s_b²/k_b)²/(k_b − 1)), and the 95% interval d ± t_{0.975, ν}·se (NaN when a
group has fewer than two respondents; when both variances are 0, se = 0 and the interval is [d, d]). For a
model, ``humans_difference`` is the humans' d of the same pair and ``gap`` = d_model − d_humans.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from .answers import HUMAN
from .generic import Binning, histogram, kl_divergence, proportional_agreement, wasserstein

LEVEL = 0.95
NO_ANSWER = "(no answer)"
NUMBER_GROUPS = 4  # a number field with more distinct values is cut into this many quantile ranges



@dataclass(frozen=True)
class Compare:
    """A section's comparison of a model's answers with the humans' of the same group: ``fn(model q, human q)``
    → {name: value} for the ``names`` (each answer's q, NaN left out; never called with an empty side)."""

    names: tuple[str, ...]
    fn: Callable[[np.ndarray, np.ndarray], dict[str, float]]

    def __call__(self, model: np.ndarray, human: np.ndarray) -> dict[str, float]:
        if not model.size or not human.size:
            return self.empty()
        return self.fn(model, human)

    def empty(self) -> dict[str, float]:
        return {name: math.nan for name in self.names}

GROUP_COLUMNS = ["agent", "group", "answers", "unparsed", "units", "mean", "sd", "ci_low", "ci_high", "median",
                 "q25", "q75", "sd_answers", "vs_humans"]
DIFFERENCE_COLUMNS = ["agent", "group_a", "group_b", "mean_a", "mean_b", "units_a", "units_b", "difference", "se",
                      "df", "ci_low", "ci_high", "humans_difference", "gap"]


# --- the groups of one field ----------------------------------------------------------------------
def value_groups(values: pd.Series, max_groups: int = NUMBER_GROUPS) -> pd.Series:
    """Each respondent's group for one field: the value as text; a number field with more than ``max_groups``
    distinct values cut into that many quantile ranges ("18–25", ``pd.qcut``); "(no answer)" when empty. Cut
    humans' and personas' values together, so that both are grouped by the same ranges."""
    numbers = pd.to_numeric(values, errors="coerce")
    answered = values.notna() & (values.astype(str) != "")
    if answered.any() and numbers[answered].notna().all() and numbers[answered].nunique() > max_groups:
        cut = pd.qcut(numbers[answered], max_groups, duplicates="drop")
        text = cut.map(lambda iv: f"{fmt(iv.left)}–{fmt(iv.right)}").astype(str)
        return text.reindex(values.index).fillna(NO_ANSWER)
    return values.map(fmt).where(answered, NO_ANSWER)


def fmt(value) -> str:
    """A field value as the name of its group (numbers without trailing zeros)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.number)):
        return str(value)
    return f"{float(value):g}"


def group_order(groups: Sequence[str], declared: Sequence[str] = ()) -> list[str]:
    """The groups present: the declared values first (a choice field's keys, in order), then the others sorted,
    "(no answer)" last."""
    present = set(groups)
    head = [g for g in declared if g in present]
    rest = sorted(present - set(head) - {NO_ANSWER})
    return head + rest + ([NO_ANSWER] if NO_ANSWER in present else [])


# --- formulas -------------------------------------------------------------------------------------
def mean_ci(unit_means: ArrayLike, level: float = LEVEL) -> tuple[float, float, float, float]:
    """(mean, sd, lower, upper) of respondents' means: m ± t_{(1+level)/2, k−1}·s/√k; NaN interval for k < 2."""
    x = np.asarray(unit_means, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (math.nan,) * 4
    m = float(x.mean())
    if x.size < 2:
        return m, math.nan, math.nan, math.nan
    s = float(x.std(ddof=1))
    half = float(stats.t.ppf((1 + level) / 2, x.size - 1)) * s / math.sqrt(x.size)
    return m, s, m - half, m + half


def welch_difference(a: ArrayLike, b: ArrayLike, level: float = LEVEL) -> dict[str, float]:
    """d = mean(a) − mean(b) with Welch's se, ν and the ``level`` interval (module docstring); NaN se, ν and
    interval when a side has fewer than two values."""
    x, y = (np.asarray(v, dtype=float) for v in (a, b))
    x, y = x[~np.isnan(x)], y[~np.isnan(y)]
    out = {"difference": math.nan, "se": math.nan, "df": math.nan, "ci_low": math.nan, "ci_high": math.nan}
    if x.size == 0 or y.size == 0:
        return out
    d = float(x.mean() - y.mean())
    out["difference"] = d
    if x.size < 2 or y.size < 2:
        return out
    va, vb = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = math.sqrt(va + vb)
    if se == 0:
        return {**out, "se": 0.0, "df": float(x.size + y.size - 2), "ci_low": d, "ci_high": d}
    nu = se ** 4 / (va ** 2 / (x.size - 1) + vb ** 2 / (y.size - 1))
    half = float(stats.t.ppf((1 + level) / 2, nu)) * se
    return {"difference": d, "se": se, "df": float(nu), "ci_low": d - half, "ci_high": d + half}


def binned_comparison(binning: Binning) -> Compare:
    """A ``compare`` for a quantity on a binned scale: with H the model's and P the humans' shares per bin
    (analysis.metrics.generic: the same bins and formulas as the generic section), ``w1`` = W1(H, P) in the
    scale's units, ``pa`` = Σ H(k)·P(k) ×100, ``percent_pa`` = PA / max_k P(k) ×100 and ``kl`` = D_KL(P ‖ H)
    (natural log, empty model bins 1e−10)."""
    names = ("w1", "pa", "percent_pa", "kl")

    def fn(model: np.ndarray, human: np.ndarray) -> dict[str, float]:
        h, nh = histogram(model, binning)
        p, npp = histogram(human, binning)
        if not nh or not npp:
            return {name: math.nan for name in names}
        pa = proportional_agreement(h, p)
        return {"w1": wasserstein(h, p, binning.centres), "pa": pa * 100, "percent_pa": pa / p.max() * 100,
                "kl": kl_divergence(p, h)}
    return Compare(names, fn)



# --- tables ---------------------------------------------------------------------------------------
def _check(df: pd.DataFrame) -> None:
    missing = [c for c in ("agent", "group", "unit", "q") if c not in df.columns]
    if missing:
        raise ValueError(f"grouped answers need the columns agent, group, unit and q; missing {', '.join(missing)}")


def _agents(df: pd.DataFrame) -> list[str]:
    names = set(df["agent"].astype(str))
    return ([HUMAN] if HUMAN in names else []) + sorted(names - {HUMAN})


def unit_means(df: pd.DataFrame) -> pd.DataFrame:
    """Each (agent, group, unit)'s mean q over its readable answers (column ``q``)."""
    readable = df[df["q"].notna()]
    return readable.groupby(["agent", "group", "unit"], sort=False, observed=True)["q"].mean().reset_index()


def group_table(df: pd.DataFrame, order: Sequence[str] | None = None, compare: Compare | None = None,
                level: float = LEVEL) -> pd.DataFrame:
    """Per agent (humans first) and group (``order``, else :func:`group_order`): the numbers of the module
    docstring (:data:`GROUP_COLUMNS`, then the ``compare`` metrics of a model against the same group's humans)."""
    _check(df)
    groups = list(order) if order is not None else group_order(df["group"].astype(str))
    means = unit_means(df)
    rows = []
    for agent in _agents(df):
        for group in groups:
            part = df[(df["agent"] == agent) & (df["group"] == group)]
            if part.empty:
                continue
            q = part["q"].to_numpy(dtype=float)
            readable = q[~np.isnan(q)]
            u = means.loc[(means["agent"] == agent) & (means["group"] == group), "q"].to_numpy(dtype=float)
            m, s, lo, hi = mean_ci(u, level)
            row = {"agent": agent, "group": group, "answers": int(readable.size), "unparsed": int(q.size - readable.size),
                   "units": int(u.size), "mean": m, "sd": s, "ci_low": lo, "ci_high": hi,
                   "median": float(np.median(readable)) if readable.size else math.nan,
                   "q25": float(np.quantile(readable, 0.25)) if readable.size else math.nan,
                   "q75": float(np.quantile(readable, 0.75)) if readable.size else math.nan,
                   "sd_answers": float(readable.std(ddof=1)) if readable.size > 1 else math.nan,
                   "vs_humans": math.nan}
            if agent != HUMAN:
                humans = df[(df["agent"] == HUMAN) & (df["group"] == group)]["q"].to_numpy(dtype=float)
                humans = humans[~np.isnan(humans)]
                hu = means.loc[(means["agent"] == HUMAN) & (means["group"] == group), "q"].to_numpy(dtype=float)
                row["vs_humans"] = welch_difference(u, hu, level)["difference"] if hu.size else math.nan
                if compare is not None:
                    row.update(compare(readable, humans))
            elif compare is not None:
                row.update(compare.empty())
            rows.append(row)
    extra = list(compare.names) if compare is not None else []
    return pd.DataFrame(rows, columns=GROUP_COLUMNS + extra)


def group_differences(df: pd.DataFrame, order: Sequence[str] | None = None, level: float = LEVEL) -> pd.DataFrame:
    """Per agent (humans first) and pair of groups a before b (``order``, else :func:`group_order`; "(no
    answer)" left out): Welch's difference of respondents' means m_a − m_b with its interval, and for a model
    the humans' difference of the same pair and the gap (:data:`DIFFERENCE_COLUMNS`)."""
    _check(df)
    groups = [g for g in (list(order) if order is not None else group_order(df["group"].astype(str)))
              if g != NO_ANSWER]
    means = unit_means(df)
    per = {(a, g): part["q"].to_numpy(dtype=float) for (a, g), part in means.groupby(["agent", "group"], sort=False)}
    rows, human_d = [], {}
    for agent in _agents(df):
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                if (agent, a) not in per or (agent, b) not in per:
                    continue
                ua, ub = per[(agent, a)], per[(agent, b)]
                w = welch_difference(ua, ub, level)
                if agent == HUMAN:
                    human_d[(a, b)] = w["difference"]
                hd = math.nan if agent == HUMAN else human_d.get((a, b), math.nan)
                rows.append({"agent": agent, "group_a": a, "group_b": b, "mean_a": float(ua.mean()),
                             "mean_b": float(ub.mean()), "units_a": int(ua.size), "units_b": int(ub.size), **w,
                             "humans_difference": hd, "gap": w["difference"] - hd})
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
