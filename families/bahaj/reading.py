"""How the Bahaj et al. report reads its answers under the report option ``reading`` (families/bahaj/report.py).

- Generation answers of model runs (:func:`read_model_answers`): under ``text`` the bounds the platform stored
  when the answer came in (``lower``/``upper``, read by the kind's parser); under ``authors`` every model answer's
  ``raw_output`` is read again with the authors' cleaner (:func:`families.bahaj.instrument.read_answer` with
  ``"authors"``: lossy cases included, reversed and point intervals kept as answers, an unparsed answer a miss).
  Participants' answers are numbers typed into two fields: both readings take them as they are.
  Under both readings the report counts the model answers each of the cleaner's cases (:data:`CASES`) touched
  (under ``text``: the answers the authors' reading would change), per agent: :func:`case_table`.
- Refinement answers (:func:`refinement_pair`): the authors' refinement runs (prompt style ``authors-refine``)
  keep the chosen and the proposed intervals in ``detail["chosen"]`` / ``detail["proposed"]``; a reply that gave
  no Python literal, or not two lists of two bounds, has neither and is unparsed (dropped from the refinement
  scores and counted). Under ``authors`` a kept reply's bounds are scored as they are (a reversed interval or a
  bound that is no number: a miss); under ``text`` such an interval is unread. Other refinement runs store the
  proposed interval in ``lower``/``upper`` and the chosen one in ``detail["chosen"]``.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from elicitation.models import ModelResponse
from families.bahaj.authors import CASES
from families.bahaj.instrument import AUTHORS_REFINE, read_answer

Bounds = tuple[float | None, float | None]
CASE_COLUMNS = ["agent", "case", "rule", "answers"]


def raw_outputs(answers: pd.DataFrame) -> pd.Series:
    """The ``raw_output`` of each model answer of ``answers`` (rows with a ``run_id``), "" for the others."""
    runs = sorted({int(r) for r in answers["run_id"].dropna()}) if "run_id" in answers.columns else []
    raw = pd.DataFrame(list(ModelResponse.objects.filter(run_id__in=runs, check_key="")
                            .values_list("run_id", "item_id", "sample_index", "raw_output")),
                       columns=["run_id", "item_id", "sample_index", "raw_output"])
    if raw.empty:
        return pd.Series("", index=answers.index, dtype=object)
    keys = answers[["run_id", "item_id", "sample_index"]].reset_index()
    merged = keys.merge(raw.astype({"run_id": float, "sample_index": float}),
                        on=["run_id", "item_id", "sample_index"], how="left")
    return pd.Series(merged["raw_output"].fillna("").to_numpy(), index=merged["index"].to_numpy(), dtype=object)


def read_model_answers(answers: pd.DataFrame, reading: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``answers`` (agent, run_id, item_id, sample_index, lower, upper; humans with no run_id) with the bounds
    of ``reading`` (module docstring), and the case table (:func:`case_table`)."""
    answers = answers.copy()
    model = answers["run_id"].notna() if "run_id" in answers.columns else pd.Series(False, index=answers.index)
    raws = raw_outputs(answers[model]) if model.any() else pd.Series(dtype=object)
    readings = {index: read_answer(raw, "authors") for index, raw in raws.items()}
    if reading == "authors":
        for column, bound in (("lower", "lower"), ("upper", "upper")):
            answers.loc[list(readings), column] = [float("nan") if getattr(r, bound) is None else getattr(r, bound)
                                                   for r in readings.values()]
        answers[["lower", "upper"]] = answers[["lower", "upper"]].astype(float)
    agents = answers.loc[list(readings), "agent"] if readings else pd.Series(dtype=object)
    return answers, case_table(list(zip(agents, readings.values())))


def case_table(read: list[tuple[str, Any]]) -> pd.DataFrame:
    """Per model agent and case of :data:`CASES`: how many of its answers the case touched (every case listed)."""
    rows = []
    for agent in sorted({a for a, _ in read}):
        counts = dict.fromkeys(CASES, 0)
        for _, reading in (p for p in read if p[0] == agent):
            for case in reading.cases:
                counts[case] += 1
        rows += [{"agent": agent, "case": case, "rule": CASES[case], "answers": n} for case, n in counts.items()]
    return pd.DataFrame(rows, columns=CASE_COLUMNS)


def _pair(value: Any) -> Bounds | None:
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    return tuple(None if v is None else float(v) for v in value)  # type: ignore[return-value]


def _text(bounds: Bounds) -> Bounds:
    """An interval as the text reading takes it: unread when a bound is missing or the bounds are reversed."""
    lower, upper = bounds
    if lower is None or upper is None or lower > upper:
        return None, None
    return lower, upper


def refinement_pair(style: str, lower: float | None, upper: float | None, detail: dict | None,
                    reading: str) -> tuple[Bounds, Bounds, bool]:
    """(chosen, proposed, kept) of one refinement answer (module docstring): ``kept`` is False for an answer the
    authors' scoring drops (dropped and counted under the authors' reading)."""
    detail = detail or {}
    if style == AUTHORS_REFINE:
        chosen, proposed = _pair(detail.get("chosen")), _pair(detail.get("proposed"))
        if chosen is None or proposed is None:
            return (None, None), (None, None), False
        if reading == "text":
            return _text(chosen), _text(proposed), True
        return chosen, proposed, True
    chosen = _pair(detail.get("chosen")) or (None, None)
    both = None not in (*chosen, lower, upper)
    return chosen, (lower, upper), both
