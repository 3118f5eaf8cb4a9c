"""Asking a model each question of an item (``[[questions]]``, issue 31 point 5).

A study without ``[[questions]]`` asks one question (key ""): its kind (``Study.kind``) builds the prompt and
parses the answer, exactly as before. With ``[[questions]]`` every question is a row of its own
(``ModelResponse.question``), and ``[prompt] questions`` says how a model is asked them:

- ``"separate"`` (default): one prompt per question, built by :func:`question_kind` — the study's generic kind
  whose ``[answer]`` is the question's, whose page question is the question's text (``question`` in the
  templates, as on the page) and whose ``[prompt]`` templates are the question's ``[questions.prompt]`` ones over
  the study's; its answer is parsed by that question's shape;
- ``"together"``: one prompt asking every question (:func:`together_kind`: the templates see ``questions``, each
  with its ``key``, ``question`` and ``instruction``), answered by a JSON object keyed by question key; each
  value is parsed by its question's shape (:func:`parse_together`), one row per question with the same raw
  output and its own parse error. The request is made and counted once, on the row of the item's first
  question still pending (the others carry ``detail.asked_with``; elicitation/worker.py).

An agent whose ``[[agents]]`` table says ``checks = true`` is asked the study's attention checks too
(:func:`agent_asks_checks`, :func:`check_kind`): rows without an item, keyed by ``check_key``.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping

from surveys.instruments import Instrument, ParsedAnswer
from surveys.instruments.generic import GenericInstrument
from surveys.questions import keys_of, prompt_mode, question_definition, questions_of, several

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item, Study

SEPARATE, TOGETHER = "separate", "together"

#: The together prompt's question when ``[prompt] block`` is not set: the page's sentence and hints, each
#: question with its key and answer instruction, then what the JSON object holds.
TOGETHER_BLOCK = (
    "{% if sentence %}{{ sentence }}\n{% endif %}{% for hint in hints %}{{ hint }}\n{% endfor %}"
    "{% for q in questions %}\n{{ q.key }}: {{ q.question }}\n{{ q.instruction }}\n{% endfor %}\n"
    "Answer with a JSON object with the keys {{ questions | map(attribute='key') | join(', ') }}, each holding "
    "the answer to that question.\nAnswer:{% if with_answer %} {{ answer }}{% endif %}")


def question_keys(study: "Study") -> list[str]:
    """The keys of the questions a model is asked of every item: [""] for a study's one question."""
    return keys_of(study)


def asks_together(study: "Study") -> bool:
    """Whether a model is asked all of an item's questions in one prompt (a study with ``[[questions]]``)."""
    return several(study) and prompt_mode(study) == TOGETHER


def _cache(study: "Study") -> dict[str, Instrument]:
    key = id(study.definition)
    cached = study.__dict__.get("_question_kinds")
    if cached is None or cached[0] != key:
        cached = (key, {})
        study.__dict__["_question_kinds"] = cached
    return cached[1]


def question_kind(study: "Study", key: str) -> Instrument:
    """The kind that asks and parses question ``key`` of ``study`` (the study's own kind for key ""): a generic
    instrument over the question's one-question definition (surveys.questions.question_definition)."""
    if not key:
        return study.kind
    cache = _cache(study)
    if key not in cache:
        found = {q.key: q for q in questions_of(study)}
        if key not in found:
            raise KeyError(f"study {study.slug} has no question {key!r} (questions: {', '.join(found) or 'none'})")
        cache[key] = QuestionInstrument(question_definition(study.definition or {}, found[key]), study.slug, key)
    return cache[key]


def together_kind(study: "Study") -> "TogetherInstrument":
    """The kind whose prompt asks every question of an item at once."""
    cache = _cache(study)
    if TOGETHER not in cache:
        kinds = [question_kind(study, key) for key in question_keys(study)]
        definition = {k: v for k, v in (study.definition or {}).items() if k != "questions"}
        definition["page"] = {**(definition.get("page") or {}), "question": ""}
        definition["prompt"] = {k: v for k, v in (definition.get("prompt") or {}).items() if k != "questions"}
        cache[TOGETHER] = TogetherInstrument(definition, study.slug, kinds)
    return cache[TOGETHER]  # type: ignore[return-value]


def check_kind(study: "Study", key: str) -> Instrument:
    """The kind that asks an agent the study's attention check ``key`` (``[[agents]] checks = true``): the check's
    own wording and answer shape (surveys.checks.check_kind, as its page has them), under the study's ``[prompt]
    system`` text; KeyError for a check the study does not declare."""
    from surveys import checks

    cache = _cache(study)
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


def demo_answer(item: "Item", key: str) -> Any:
    """A demonstration's answer to question ``key``: its field ``answer_<key>``, else its ``answer``."""
    extra = item.extra or {}
    if f"answer_{key}" in extra:
        return extra[f"answer_{key}"]
    return extra.get("answer", extra.get("demo_choice", "" if item.demo_answer is None else f"{item.demo_answer:g}"))


class QuestionInstrument(GenericInstrument):
    """One question of a study with ``[[questions]]``: its shape, its page text, its prompt templates."""

    def __init__(self, definition: Mapping[str, Any], slug: str, key: str):
        super().__init__(definition, slug)
        self.question_key = key

    def _demo_context(self, item: "Item") -> dict[str, Any]:
        context = self.template_context(item)
        context["answer"] = demo_answer(item, self.question_key)
        return context


class TogetherInstrument(GenericInstrument):
    """Every question of an item in one prompt (``[prompt] questions = "together"``); the answer is a JSON
    object keyed by question key, each value parsed by its question's kind (:func:`parse_together`)."""

    def __init__(self, definition: Mapping[str, Any], slug: str, kinds: list[QuestionInstrument]):
        super().__init__({**definition, "answer": kinds[0].answer}, slug)
        self.kinds = kinds

    def template_context(self, item: "Item", speaker: Any = None) -> dict[str, Any]:
        """:meth:`GenericInstrument.template_context`, plus ``questions``: each question's ``key``, its text as
        its page shows it (``question``) and its answer instruction (``instruction``)."""
        context = super().template_context(item, speaker)
        context["questions"] = [{"key": k.question_key, "question": k.template_context(item, speaker)["question"],
                                 "instruction": k.answer_instruction(item)} for k in self.kinds]
        return context

    def prompt_wording(self) -> dict[str, Any]:
        wording = super().prompt_wording()
        if not (self.definition.get("prompt") or {}).get("block"):
            wording["prompt"]["block"] = TOGETHER_BLOCK
        return wording

    def _demo_context(self, item: "Item") -> dict[str, Any]:
        context = self.template_context(item)
        context["answer"] = json.dumps({k.question_key: demo_answer(item, k.question_key) for k in self.kinds},
                                       ensure_ascii=False)
        return context


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
        return parse_text(question_kind(study, question), completion, item)
    kind = question_kind(study, question)
    part = parse_together([kind], completion.text, item)[0]
    base = dict(raw_output=completion.text, prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens, system_fingerprint=completion.system_fingerprint,
                detail={"finish_reason": completion.finish_reason})
    if part.parsed.ok:
        return answered(kind, part.parsed.answer, "ok", **base)
    return Outcome(status="unparseable", parse_error=part.parsed.error[:300], **base)


__all__ = ["QuestionAnswer", "SEPARATE", "TOGETHER", "agent_asks_checks", "asks_together",
           "check_item", "check_kind", "check_passed",
           "parse_together", "question_keys", "question_outcome", "question_kind", "together_kind"]
