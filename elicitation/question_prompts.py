"""Asking a model each question of an item (``[[questions]]``, issue 31 point 5): parsing and checks.

The kinds that word the prompts are in surveys/question_kinds.py (:func:`~surveys.question_kinds.asking_kind`:
the study's own for its one question, one per question asked separately, one for all asked together). Here:
a together reply is a JSON object keyed by question key; each value is parsed by its question's shape
(:func:`parse_together`), one row per question with the same raw output and its own parse error. The request is
made and counted once, on the row of the item's first question still pending (the others carry
``detail.asked_with``; elicitation/worker.py).

An agent whose ``[[agents]]`` table says ``checks = true`` is asked the study's attention checks too
(:func:`agent_asks_checks`, :func:`check_kind`): rows without an item, keyed by ``check_key``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from surveys.instruments import Instrument, ParsedAnswer
from surveys.instruments.generic import GenericInstrument
from surveys.question_kinds import asks_together, kind_cache, prompt_kind

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item, Study


def check_kind(study: "Study", key: str) -> Instrument:
    """The kind that asks an agent the study's attention check ``key`` (``[[agents]] checks = true``): the check's
    own wording and answer shape (surveys.checks.check_kind, as its page has them), under the study's ``[prompt]
    system`` text; KeyError for a check the study does not declare."""
    from surveys import checks

    cache = kind_cache(study)
    name = f"check:{key}"
    if name not in cache:
        declared = checks.by_key(study)
        if key not in declared:
            raise KeyError(f"study {study.slug} has no check {key!r} (checks: {', '.join(declared) or 'none'})")
        page_kind = checks.check_kind(study, declared[key])
        system = ((study.definition or {}).get("prompt") or {}).get("system")
        definition = {**page_kind.definition, "prompt": {"system": system} if system else {}}
        cache[name] = GenericInstrument(definition, study.slug)
    return cache[name]


def check_item(study: "Study", key: str) -> "Item":
    """The unsaved item standing for check ``key`` in its prompt (surveys.checks.check_item)."""
    from surveys import checks

    return checks.check_item(study, checks.by_key(study)[key])


def check_passed(study: "Study", key: str, value: float | None, choice: str) -> bool | None:
    """Whether an answer to check ``key`` passes (None: the check is no longer declared)."""
    from surveys import checks

    declared = checks.by_key(study).get(key)
    return None if declared is None else checks.passes(declared, value, choice)


def agent_asks_checks(run: Any) -> list[str]:
    """The check keys ``run`` asks besides its items: the study's ``[[checks]]`` when its agent says ``checks =
    true`` (a run started by hand, or a self-refinement, asks none)."""
    if getattr(run, "refines_id", None) is not None or not (run.agent_settings or {}).get("checks"):
        return []
    if run.mode == "likelihood":  # scores an item's candidate texts: a check has none
        return []
    return [c["key"] for c in (run.study.definition or {}).get("checks") or []]


@dataclass(frozen=True)
class QuestionAnswer:
    """One question's share of a together answer: its parsed answer, or why it could not be read."""

    key: str
    parsed: ParsedAnswer


def _json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text`` (a fenced code block or prose around it ignored), or None."""
    start = text.find("{")
    decoder = json.JSONDecoder()
    while start != -1:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None


def _as_text(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_as_text(v) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return f"{value:g}"
    return str(value)


def parse_together(kinds: list[Instrument], text: str, item: "Item | None" = None) -> list[QuestionAnswer]:
    """Each question's answer read from a together reply: the JSON object's value under the question's key,
    parsed by the question's kind (an error names what is missing)."""
    found = _json_object(text)
    out = []
    for kind in kinds:
        key = getattr(kind, "question_key", "")
        if found is None:
            out.append(QuestionAnswer(key, ParsedAnswer(raw=text, error="the reply holds no JSON object")))
        elif key not in found or found[key] is None:
            out.append(QuestionAnswer(key, ParsedAnswer(raw=text, error=f"the JSON object has no {key!r}")))
        else:
            parsed = kind.parse_model_answer(_as_text(found[key]), item)
            out.append(QuestionAnswer(key, parsed))
    return out


def question_outcome(study: "Study", question: str, completion: Any, item: "Item | None" = None) -> Any:
    """The outcome (elicitation.outcomes.Outcome) of a greedy or sampled ``completion`` for ``question`` of ``study``:
    parsed by the study's kind (question ""), by the question's, or, asked together, from the reply's JSON object."""
    from .modes import answered, parse_text
    from .outcomes import Outcome

    if not question or not asks_together(study):
        return parse_text(prompt_kind(study, question), completion, item)
    kind = prompt_kind(study, question)
    part = parse_together([kind], completion.text, item)[0]
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint,
                detail={"finish_reason": completion.finish_reason})
    if part.parsed.ok:
        return answered(kind, part.parsed.answer, "ok", **base)
    return Outcome(status="unparseable", parse_error=part.parsed.error[:300], **base)


__all__ = ["QuestionAnswer", "agent_asks_checks", "check_item", "check_kind", "check_passed", "parse_together",
           "question_outcome"]
