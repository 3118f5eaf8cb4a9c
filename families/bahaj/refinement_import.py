"""Importing self-refinement answers of interval answers produced elsewhere (Bahaj et al. Tables 7–8) as a
refinement of an imported (or live) run: ``import_model_answers STUDY FILE --model NAME --refines RUN [--refine-setting
single|mixed] [--candidates N]``.

The run made is an imported run (analysis/model_answer_import.py, which reaches this module through the kind's
refinement hook, families/bahaj/refinement_hook.py) that is also a self-refinement run
(``refines`` = RUN, prompt style ``refine``, ``refine_setting``, ``refine_shown`` = the number of candidates each
prompt showed, default 3 as the paper says; ``refine_seed`` 0: the draw was made elsewhere). Each answer is read
as a live refinement answer is (:func:`families.bahaj.refinement.refinement_outcome`): the proposed interval is the
answer, the chosen one goes to ``detail["chosen"]``. So the report puts the run in its self-refinement table,
not in Table 4.

The answer is the text of the reply (the answer column), or, in files that store the reply's keys as the
authors' ``selfrefine|…jsonl`` files do, the columns ``chosen_answer`` and ``proposed_answer`` (each an interval
``[lower, upper]``), from which the reply ``{"chosen_answer": …, "proposed_answer": …}`` is rebuilt and kept
as the raw text. Where a row has both keys, they are the reply, whatever else it holds: the authors' rows also
carry ``answer``, which is the question's **true** answer, not the reply.

Rows as the authors stored them (``id``, ``confidence_pct``, ``hint_type``, …, ``question``, ``answer``,
``chosen_answer``, …), given no key or field column, are matched by :func:`authors_record_item`: ``id`` is the
question's id (the items' ``statement_id``, as ``import_items`` sets it from an ``id`` column), ``hint_type`` its
hint condition (hint0 when absent), and the level is the first of ``confidence_pct`` (single: every candidate
shares it) — a mixed record is the question's first item, as a live authors' mixed refinement is asked.

Prompt style: ``refine`` (the platform's refinement) or ``authors-refine`` (the authors'); by default the one a
live refinement of the source run would take (:func:`elicitation.run_settings.refine_style`: ``authors-refine``
when the source run was asked with the authors' prompts). An ``authors-refine`` answer is read as the authors
read their records (:func:`families.bahaj.refinement.authors_outcome`): the reply a literal (JSON, as a rebuilt reply
is, or a Python literal), kept when ``chosen_answer`` and ``proposed_answer`` are both lists of two, its bounds
as they are — a reversed interval or a bound that is no number is kept and scored as a miss under the report's
``authors`` reading — and dropped (unparseable, counted) otherwise.
"""
from __future__ import annotations

import json
from typing import Any, Mapping

from elicitation.outcomes import Completion, Outcome
from elicitation.run_settings import REFINE_STYLE
from families.bahaj import authors as bahaj
from surveys.instruments import Instrument
from families.bahaj.instrument import AUTHORS_REFINE
from surveys.models import Item

from .refinement import Asked, authors_outcome, refinement_outcome

REPLY_KEYS = ("chosen_answer", "proposed_answer")
DEFAULT_CANDIDATES = 3  # the paper's n (§7 point 21 of the protocol: its Table 7 may come from n = 4)


def has_reply_keys(columns: Mapping[str, str] | list[str]) -> bool:
    """Whether a row (or header) holds the reply's keys instead of its text."""
    return all(k in columns for k in REPLY_KEYS)


def composed_reply(row: Mapping[str, str]) -> str:
    """The reply rebuilt from its keys: ``{"chosen_answer": [x, y], "proposed_answer": [x, y]}``."""
    return "{" + ", ".join(f'"{k}": {(row.get(k) or "null").strip()}' for k in REPLY_KEYS) + "}"


AUTHORS_RECORD = ("id", "confidence_pct")


def is_authors_record(row: Mapping[str, str]) -> bool:
    """Whether a row is one of the authors' ``selfrefine|…jsonl`` records (module docstring)."""
    return all(k in row for k in AUTHORS_RECORD) and has_reply_keys(row)


def authors_record_item(items: list[Item], row: Mapping[str, str], setting: str) -> Item:
    """The item an authors' record refines (module docstring); ``items``: the study's main items in id order.
    _CellError naming the column when none matches."""
    from surveys.answer_import import _CellError

    qid = (row.get("id") or "").strip()
    hint = (row.get("hint_type") or "").strip() or bahaj.NO_HINT
    same = [i for i in items if i.statement_id == qid and str((i.extra or {}).get("hint") or bahaj.NO_HINT) == hint]
    if not same:
        raise _CellError("id", f"no item of the study has question id {qid!r} (hint condition {hint})")
    if setting == "mixed":
        return same[0]
    try:
        levels = json.loads(row.get("confidence_pct") or "")
        level = float(levels[0] if isinstance(levels, list) else levels)
    except (ValueError, TypeError, IndexError):
        raise _CellError("confidence_pct", f"{row.get('confidence_pct')!r} is not a list of levels") from None
    for item in same:
        if float((item.extra or {}).get("confidence", -1)) == level:
            return item
    raise _CellError("confidence_pct", f"question {qid!r} has no item at level {level:g}")


def authors_reply(raw: str) -> dict[str, Any] | None:
    """An authors' refinement reply as a dict: JSON (a reply rebuilt from a record's keys), else a Python literal
    (their ``ast.literal_eval``); None when it is neither."""
    try:
        value = json.loads(raw)
    except ValueError:
        try:
            return bahaj.literal_reply(raw)
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def refinement_answer(kind: Instrument, raw: str, style: str = REFINE_STYLE) -> Outcome:
    """One imported refinement answer, read as a live one of prompt style ``style`` (the proposed interval the
    answer, the chosen one in ``detail``; the authors' style keeps both as the authors' scoring reads them)."""
    completion = Completion(raw, None, None, None, "", "")
    if style == AUTHORS_REFINE:
        reply = authors_reply(raw)
        errors = [] if reply is not None else ["neither JSON nor a Python literal"]
        outcome = authors_outcome(Asked(completion, 1, errors, reply))
        for key in ("asks", "ask_errors"):
            outcome.detail.pop(key, None)
        if reply is None:
            outcome.parse_error = "the reply is neither JSON nor a Python literal"
    else:
        outcome = refinement_outcome(kind, completion)
    outcome.detail.pop("finish_reason", None)
    return outcome


__all__ = ["AUTHORS_RECORD", "DEFAULT_CANDIDATES", "REPLY_KEYS", "authors_record_item", "authors_reply",
           "composed_reply", "has_reply_keys", "is_authors_record", "refinement_answer"]
