"""The questions a study asks about each item (``[[questions]]``, schema in surveys/definition/schema.py).

A study without ``[[questions]]`` asks one question, keyed ``""``: its ``[answer]`` worded by ``[page] question``
(a seed family's kind asks its own; its ``answer`` is then None). A generic study with ``[[questions]]`` asks each
of them on every item page, in the file's order; each is its own variable (``Response.question`` holds its key).

:func:`question_definition` gives a question as a one-question definition (its answer as ``[answer]``, its
wording as ``[page] question``, its prompt templates over ``[prompt]``'s), so a generic instrument built from it
(:func:`question_kind`) renders, validates and parses that question exactly as a one-question study's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from surveys.instruments.generic import GenericInstrument
    from surveys.models import Study

#: The key of the one question of a study without ``[[questions]]``.
SINGLE = ""
PROMPT_KEYS = ("system", "block", "text", "user", "answer")


@dataclass(frozen=True)
class Question:
    """One question of an item page: its ``key`` (``""`` for a study's single question), its wording (a Jinja2
    template, as ``[page] question``), its answer table (a dumped ``AnswerTable``, as ``definition["answer"]``;
    None for a seed family's own question), whether it must be answered, and its own prompt templates (only
    those it sets)."""

    key: str
    question: str
    answer: Mapping[str, Any] | None
    required: bool = True
    prompt: Mapping[str, str] = field(default_factory=dict)

    @property
    def single(self) -> bool:
        """The study's only question (no ``[[questions]]``)."""
        return self.key == SINGLE


def definition_of(study: "Study") -> Mapping[str, Any]:
    """The study's stored definition (a dumped ``Definition``; ``{}`` for a study never loaded from a file)."""
    return study.definition or {}


def questions_in(definition: Mapping[str, Any]) -> list[Question]:
    """The questions a stored definition asks (see :func:`questions_of`)."""
    declared = definition.get("questions") or []
    if not declared:
        page = definition.get("page") or {}
        return [Question(key=SINGLE, question=page.get("question") or "", answer=definition.get("answer"))]
    return [Question(key=q["key"], question=q["question"], answer=dict(q["answer"]), required=q.get("required", True),
                     prompt={k: v for k, v in (q.get("prompt") or {}).items() if k in PROMPT_KEYS and v})
            for q in declared]


def questions_of(study: "Study") -> list[Question]:
    """The questions ``study`` asks about each item, in order: its ``[[questions]]``, else one question keyed
    ``""`` (its ``[answer]`` and ``[page] question``)."""
    return questions_in(definition_of(study))


def keys_of(study: "Study") -> list[str]:
    """The keys of the study's questions (``[""]`` for a one-question study)."""
    return [q.key for q in questions_of(study)]


def written_key(cell: str | None, keys: Sequence[str]) -> str:
    """A question's key as an imported file writes it (one of ``keys``); ValueError saying what is wrong."""
    key = (cell or "").strip()
    if key not in keys:
        raise ValueError(f"{key[:40]!r} is not a question of the study ({', '.join(keys)})" if key
                         else "is empty (the question's key)")
    return key


def question_column_problem(study: "Study", column: str | None, option: str) -> str:
    """What is wrong with an imported file's question column (given with ``option``) for ``study``'s answers:
    several questions need one, one question takes none; ``""`` when it fits."""
    if several(study) and not column:
        return (f"study {study.slug!r} asks several questions per item ({', '.join(keys_of(study))}): give the "
                f"column that names each answer's question ({option})")
    if column and not several(study):
        return f"study {study.slug!r} asks one question per item: leave out the question column"
    return ""


def several(study: "Study") -> bool:
    """The study declares ``[[questions]]``."""
    return bool(definition_of(study).get("questions"))


def prompt_mode(study: "Study") -> str:
    """``[prompt] questions``: ``separate`` (one prompt per question) or ``together`` (one prompt for all)."""
    return (definition_of(study).get("prompt") or {}).get("questions") or "separate"


def question_definition(definition: Mapping[str, Any], question: Question) -> dict[str, Any]:
    """``definition`` as a one-question definition asking ``question``: its answer as ``[answer]``, its wording
    as ``[page] question`` (``[page] sentence`` and ``hints`` kept), its prompt templates over ``[prompt]``'s.
    ``[[questions]]`` and ``[prompt] questions`` are left out."""
    if question.single:
        return dict(definition)
    out = {k: v for k, v in definition.items() if k != "questions"}
    out["answer"] = dict(question.answer or {})
    out["page"] = {**(definition.get("page") or {}), "question": question.question}
    prompt = {k: v for k, v in (definition.get("prompt") or {}).items() if k != "questions"}
    prompt.update(question.prompt)
    out["prompt"] = prompt
    return out


def question_kind(study: "Study", question: Question) -> "GenericInstrument":
    """A generic instrument that words, validates and parses ``question`` of ``study`` (a generic study)."""
    from surveys.instruments.generic import GenericInstrument

    return GenericInstrument(question_definition(definition_of(study), question), study.slug)
