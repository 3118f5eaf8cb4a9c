"""The kinds that ask a model the questions of a study with ``[[questions]]`` (issue 31 point 5).

A study without ``[[questions]]`` asks one question (key ""): its kind (``Study.kind``) builds the prompt.
With ``[[questions]]``, ``[prompt] questions`` says how a model is asked them:

- ``"separate"`` (default): one prompt per question, built by :func:`prompt_kind` — the study's generic kind
  whose ``[answer]`` is the question's, whose page question is the question's text (``question`` in the
  templates, as on the page) and whose ``[prompt]`` templates are the question's ``[questions.prompt]`` ones over
  the study's; a demonstration's answer is its field ``answer_<key>`` (:func:`demo_answer`);
- ``"together"``: one prompt asking every question (:func:`together_kind`: the templates see ``questions``, each
  with its ``key``, ``question`` and ``instruction``), answered by a JSON object keyed by question key.

:func:`asking_kind` picks among them; the worker (elicitation/) asks and parses with it and ``check_study``
(surveys/definition/preview.py) previews the same prompts.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from surveys.instruments import Instrument
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


def asks_together(study: "Study") -> bool:
    """Whether a model is asked all of an item's questions in one prompt (a study with ``[[questions]]``)."""
    return several(study) and prompt_mode(study) == TOGETHER


def kind_cache(study: "Study") -> dict[str, Instrument]:
    """The study's per-question kinds, made once per definition (a changed definition starts afresh)."""
    key = id(study.definition)
    cached = study.__dict__.get("_question_kinds")
    if cached is None or cached[0] != key:
        cached = (key, {})
        study.__dict__["_question_kinds"] = cached
    return cached[1]


def prompt_kind(study: "Study", key: str) -> Instrument:
    """The kind that asks and parses question ``key`` of ``study`` (the study's own kind for key ""): a generic
    instrument over the question's one-question definition (surveys.questions.question_definition)."""
    if not key:
        return study.kind
    cache = kind_cache(study)
    if key not in cache:
        found = {q.key: q for q in questions_of(study)}
        if key not in found:
            raise KeyError(f"study {study.slug} has no question {key!r} (questions: {', '.join(found) or 'none'})")
        cache[key] = QuestionInstrument(question_definition(study.definition or {}, found[key]), study.slug, key)
    return cache[key]


def together_kind(study: "Study") -> "TogetherInstrument":
    """The kind whose prompt asks every question of an item at once."""
    cache = kind_cache(study)
    if TOGETHER not in cache:
        kinds = [prompt_kind(study, key) for key in keys_of(study)]
        definition = {k: v for k, v in (study.definition or {}).items() if k != "questions"}
        definition["page"] = {**(definition.get("page") or {}), "question": ""}
        definition["prompt"] = {k: v for k, v in (definition.get("prompt") or {}).items() if k != "questions"}
        cache[TOGETHER] = TogetherInstrument(definition, study.slug, kinds)
    return cache[TOGETHER]  # type: ignore[return-value]


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


def asking_kind(study: "Study", question: str = "") -> Any:
    """The kind whose prompt asks ``question`` of ``study``'s items: the study's own for "" (its one question), the
    question's (``[prompt] questions = "separate"``), or the one asking every question at once (``together``)."""
    if not question:
        return study.kind
    if asks_together(study):
        return together_kind(study)
    return prompt_kind(study, question)


__all__ = ["QuestionInstrument", "SEPARATE", "TOGETHER", "TOGETHER_BLOCK", "TogetherInstrument", "asking_kind",
           "asks_together", "demo_answer", "kind_cache", "prompt_kind", "together_kind"]
