"""The exclusion rules' measures (surveys/definition/exclusion_rules.py names them; analysis/exclusions.py feeds them).

Each function takes one row per answer (or per participant) and returns, per respondent, the ``measure`` and
whether the rule ``excluded`` them. A respondent whose measure is undefined (no time recorded, too few answers)
is never excluded by that rule.

- failed checks: measure = number of failed checks; excluded when ≥ ``at_least``.
- too fast: measure = total seconds (first page to completion), or the median of the item pages' seconds;
  excluded when below the floor.
- straight-lining: measure = % of answers equal to the respondent's most frequent answer; excluded when
  ≥ ``percent`` (respondents with fewer than ``min_items`` answers are not judged).
- missing answers: measure = % of the respondent's items without an answer; excluded when > ``percent``.
"""
from __future__ import annotations

import numpy as np
import pandas as pd


def _table(measure: pd.Series, excluded: pd.Series) -> pd.DataFrame:
    return pd.DataFrame({"measure": measure.astype(float), "excluded": excluded.fillna(False).astype(bool)})


def failed_checks(checks: pd.DataFrame, at_least: int) -> pd.DataFrame:
    """``checks``: ``respondent``, ``passed`` (one row per answered check)."""
    failed = (~checks["passed"].astype(bool)).groupby(checks["respondent"]).sum()
    return _table(failed, failed >= at_least)


def too_fast(participants: pd.DataFrame, answers: pd.DataFrame, total_seconds: float | None = None,
             median_item_seconds: float | None = None) -> pd.DataFrame:
    """``participants``: ``respondent``, ``total_seconds`` (NaN when unknown); ``answers``: ``respondent``,
    ``time_taken_ms`` (NaN when unknown). Exactly one floor is given."""
    if total_seconds is not None:
        measure = participants.set_index("respondent")["total_seconds"].astype(float)
        floor = total_seconds
    else:
        seconds = answers["time_taken_ms"].astype(float) / 1000.0
        measure = seconds.groupby(answers["respondent"]).median()
        measure = measure.reindex(participants["respondent"])
        floor = float(median_item_seconds)
    return _table(measure, measure < floor)  # NaN compares False: undefined is never excluded


def straight_lining(answers: pd.DataFrame, percent: float, min_items: int = 3) -> pd.DataFrame:
    """``answers``: ``respondent``, ``answer`` (the value or option key; NaN/empty answers left out)."""
    given = answers[answers["answer"].notna() & (answers["answer"].astype(str) != "")]
    counts = given.groupby(["respondent", "answer"]).size()
    if counts.empty:
        return _table(pd.Series(dtype=float), pd.Series(dtype=bool))
    top = counts.groupby(level=0).max()
    total = counts.groupby(level=0).sum()
    share = 100.0 * top / total
    judged = total >= min_items
    return _table(share.where(judged, np.nan), judged & (share >= percent - 1e-9))


def missing_answers(slots: pd.DataFrame, percent: float) -> pd.DataFrame:
    """``slots``: ``respondent``, ``slots`` (items given), ``answered`` (items answered)."""
    frame = slots.set_index("respondent")
    total = frame["slots"].where(frame["slots"] > 0, frame["answered"]).astype(float)
    share = (100.0 * (total - frame["answered"]) / total).where(total > 0, 0.0).clip(lower=0)
    return _table(share, share > percent + 1e-9)
