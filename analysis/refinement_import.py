"""Importing self-refinement answers produced elsewhere (Bahaj et al. Tables 7–8) as a refinement of an
imported (or live) run: ``import_model_answers STUDY FILE --model NAME --refines RUN [--refine-setting
single|mixed] [--candidates N]``.

The run made is an imported run (analysis/model_answer_import.py) that is also a self-refinement run
(``refines`` = RUN, prompt style ``refine``, ``refine_setting``, ``refine_shown`` = the number of candidates each
prompt showed, default 3 as the paper says; ``refine_seed`` 0: the draw was made elsewhere). Each answer is read
as a live refinement answer is (:func:`elicitation.refinement.refinement_outcome`): the proposed interval is the
answer, the chosen one goes to ``detail["chosen"]``. So the report puts the run in its self-refinement table,
not in Table 4.

The answer is the text of the reply (the answer column), or, in files that store the reply's keys as the
authors' ``selfrefine|…jsonl`` files do, the columns ``chosen_answer`` and ``proposed_answer`` (each an interval
``[lower, upper]``), from which the reply ``{"chosen_answer": …, "proposed_answer": …}`` is rebuilt and kept
as the raw text.
"""
from __future__ import annotations

from typing import Mapping

from elicitation.models import ElicitationRun
from elicitation.outcomes import Completion, Outcome
from elicitation.run_settings import REFINE_SETTINGS
from surveys.instruments import Instrument

REPLY_KEYS = ("chosen_answer", "proposed_answer")
REFINE_STYLE = "refine"
DEFAULT_CANDIDATES = 3  # the paper's n (§7 point 21 of the protocol: its Table 7 may come from n = 4)


def has_reply_keys(columns: Mapping[str, str] | list[str]) -> bool:
    """Whether a row (or header) holds the reply's keys instead of its text."""
    return all(k in columns for k in REPLY_KEYS)


def composed_reply(row: Mapping[str, str]) -> str:
    """The reply rebuilt from its keys: ``{"chosen_answer": [x, y], "proposed_answer": [x, y]}``."""
    return "{" + ", ".join(f'"{k}": {(row.get(k) or "null").strip()}' for k in REPLY_KEYS) + "}"


def source_problems(study, source_id: int, setting: str, candidates: int) -> list[str]:
    """What is wrong with refining run ``source_id`` of ``study`` (empty when it can be refined)."""
    source = ElicitationRun.objects.filter(pk=source_id).first()
    problems = []
    if source is None:
        problems.append(f"--refines {source_id}: no such run")
    elif source.study_id != study.pk:
        problems.append(f"--refines {source_id}: the run belongs to study {source.study.slug!r}, not {study.slug!r}")
    elif source.refines_id is not None:
        problems.append(f"--refines {source_id}: the run is itself a refinement; refine a run of answers")
    if study.kind.shape.name != "interval":
        problems.append(f"--refines: self-refinement needs interval answers, not {study.instrument} items")
    if setting not in REFINE_SETTINGS:
        problems.append(f"--refine-setting must be one of {', '.join(REFINE_SETTINGS)}, not {setting!r}")
    if candidates < 1:
        problems.append("--candidates: each prompt showed at least one candidate")
    return problems


def refinement_answer(kind: Instrument, raw: str) -> Outcome:
    """One imported refinement answer, read as a live one (the proposed interval the answer, the chosen one in
    ``detail``)."""
    from elicitation.refinement import refinement_outcome

    outcome = refinement_outcome(kind, Completion(raw, None, None, None, "", ""))
    outcome.detail.pop("finish_reason", None)
    return outcome


__all__ = ["DEFAULT_CANDIDATES", "REFINE_STYLE", "REPLY_KEYS", "composed_reply", "has_reply_keys", "refinement_answer",
           "source_problems"]
