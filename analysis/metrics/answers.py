"""The tidy answers table every metric takes, and its checks.

One row per answer, humans and models together. Columns:

- ``respondent`` (str): participant or model-run id;
- ``agent`` (str): ``"human"`` or a model run name (one row per agent in the reports);
- ``label`` (str): the expression, or ``"control"``;
- ``value`` (float 0–100, NaN for an unparseable answer);
- ``truth`` (``"true"`` / ``"false"`` / ``""`` for non-verifiable);
- ``dist`` (optional): a distribution-mode answer. Either a sequence of 21 probabilities over the
  bins 0, 5, …, 100, or 22 where the last is the mass on non-numbers (the paper's "-1" bin), or a
  mapping from bin ("0", "5", …, "100", "-1"; strings or numbers) to probability, as elicitation stores
  it. Mass missing from a distribution without "-1" (1 − sum) counts as non-number mass. A total above
  1.001 or a negative entry is refused, naming the row. A row whose ``dist`` is None/NaN is a
  single-value answer.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from surveys.answer_bins import N_BINS

CONTROL = "control"
HUMAN = "human"
REQUIRED = ("respondent", "agent", "label", "value")
KEY_COLUMNS = ("respondent", "agent", "label", "truth")
NON_NUMBER_KEY = "-1"
_TOLERANCE = 1e-9
_SUM_TOLERANCE = 1e-3  # estimated distributions (top-k logprobs, corrected probabilities) may overshoot a little


class AnswersError(ValueError):
    """An answers table that does not follow the contract; the message says what and where."""


def check_answers(df: pd.DataFrame, required: Iterable[str] = REQUIRED) -> None:
    """AnswersError if a required column is missing or ``value`` is not numeric."""
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise AnswersError(f"answers table lacks column(s) {', '.join(missing)}; has {', '.join(map(str, df.columns))}")
    if "value" in df.columns and not pd.api.types.is_numeric_dtype(df["value"]):
        raise AnswersError(f"column 'value' must be numeric (NaN for unparseable), not {df['value'].dtype}")


def compact(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with its key columns (respondent, agent, label, truth) as categoricals: the same table,
    but filtering and grouping a million rows get several times faster."""
    keys = [c for c in KEY_COLUMNS if c in df.columns and not isinstance(df[c].dtype, pd.CategoricalDtype)]
    return df.astype({c: "category" for c in keys}) if keys else df


def expressions_only(df: pd.DataFrame) -> pd.DataFrame:
    """The rows whose label is an expression (control items are not an expression)."""
    return df[df["label"] != CONTROL]


def of_agent(df: pd.DataFrame, agent: str | None) -> pd.DataFrame:
    """The rows of one agent (all rows when ``agent`` is None)."""
    return df if agent is None else df[df["agent"] == agent]


def has_dist(df: pd.DataFrame) -> NDArray[np.bool_]:
    """Which rows carry a distribution-mode answer."""
    if "dist" not in df.columns:
        return np.zeros(len(df), dtype=bool)
    return df["dist"].notna().to_numpy()


def _one_dist(d: Any) -> tuple[NDArray[np.float64], float]:
    """(21 numeric masses, non-number mass) of one distribution answer."""
    if isinstance(d, Mapping):
        numeric = np.zeros(N_BINS)
        other = None
        for key, p in d.items():
            k = str(key).strip()
            if k in (NON_NUMBER_KEY, "-1.0"):
                other = float(p)
                continue
            centre = float(k)
            i = int(round(centre / 5))
            if not (0 <= i < N_BINS and abs(i * 5 - centre) < 1e-9):
                raise ValueError(f"bin {key!r} is not one of 0, 5, …, 100 or -1")
            numeric[i] += float(p)
    elif isinstance(d, (Sequence, np.ndarray)) and not isinstance(d, str):
        arr = np.asarray(d, dtype=float)
        if arr.shape == (N_BINS,):
            numeric, other = arr, None
        elif arr.shape == (N_BINS + 1,):
            numeric, other = arr[:N_BINS], float(arr[N_BINS])
        else:
            raise ValueError(f"has {arr.size} entries; expected 21 bins (+ an optional non-number mass)")
    else:
        raise ValueError(f"is a {type(d).__name__}; expected a sequence of 21 or 22 numbers or a mapping")
    numeric = np.asarray(numeric, dtype=float)
    total = numeric.sum() + (other or 0.0)
    if not np.all(np.isfinite(numeric)) or (other is not None and not np.isfinite(other)):
        raise ValueError("has a non-finite probability")
    if (numeric < -_TOLERANCE).any() or (other is not None and other < -_TOLERANCE):
        raise ValueError("has a negative probability")
    if total > 1 + _SUM_TOLERANCE:
        raise ValueError(f"sums to {total:.6g} > 1")
    numeric = np.clip(numeric, 0.0, None)
    if other is None:
        other = max(0.0, 1.0 - float(numeric.sum()))
    return numeric, max(0.0, other)


def _stack(items: list[Any]) -> NDArray[np.float64] | None:
    """All distributions as an n × 22 array (last column: the given non-number mass, NaN if not given),
    or None when they cannot be stacked in one go (mixed or malformed: parsed row by row instead)."""
    if all(isinstance(d, Mapping) for d in items):
        frame = pd.DataFrame.from_records(items)
        out = np.full((len(items), N_BINS + 1), np.nan)
        out[:, :N_BINS] = 0.0
        for key in frame.columns:
            k = str(key).strip()
            if k in (NON_NUMBER_KEY, "-1.0"):
                out[:, N_BINS] = frame[key].to_numpy(dtype=float)
                continue
            try:
                centre = float(k)
            except ValueError:
                return None
            i = int(round(centre / 5))
            if not (0 <= i < N_BINS and abs(i * 5 - centre) < 1e-9):
                return None
            out[:, i] += np.nan_to_num(frame[key].to_numpy(dtype=float))
        return out
    if any(isinstance(d, Mapping) for d in items):
        return None
    try:
        arr = np.array(items, dtype=float)
    except (TypeError, ValueError):
        return None
    if arr.ndim != 2 or arr.shape[1] not in (N_BINS, N_BINS + 1):
        return None
    if arr.shape[1] == N_BINS:
        arr = np.column_stack([arr, np.full(len(arr), np.nan)])
    return arr


def dist_matrix(dists: Iterable[Any], index: Sequence[Any] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Stack distribution answers: (n × 21 numeric masses, n non-number masses), vectorised.

    AnswersError names the row (its index label) of a malformed distribution.
    """
    items = list(dists)
    if not items:
        return np.zeros((0, N_BINS)), np.zeros(0)
    stacked = _stack(items)
    if stacked is not None:
        numeric, given = stacked[:, :N_BINS], stacked[:, N_BINS]
        has_given = ~np.isnan(given)
        total = numeric.sum(axis=1) + np.where(has_given, given, 0.0)
        ok = (np.isfinite(numeric).all(axis=1) & (numeric >= -_TOLERANCE).all(axis=1)
              & (~has_given | (given >= -_TOLERANCE)) & (total <= 1 + _SUM_TOLERANCE))
        if ok.all():
            numeric = np.clip(numeric, 0.0, None)
            other = np.where(has_given, np.clip(given, 0.0, None), np.clip(1.0 - numeric.sum(axis=1), 0.0, None))
            return numeric, other
    rows: list[NDArray[np.float64]] = []  # slow path, only to name the faulty row
    other_list: list[float] = []
    for pos, d in enumerate(items):
        try:
            numeric_row, rest = _one_dist(d)
        except (TypeError, ValueError) as exc:
            where = index[pos] if index is not None else pos
            raise AnswersError(f"row {where!r}: column 'dist' {exc}") from None
        rows.append(numeric_row)
        other_list.append(rest)
    return np.vstack(rows), np.asarray(other_list)
