"""The answers of an item page that asks several questions (``[[questions]]``, surveys/questions.py).

Each question's widget posts its shape's fields prefixed with the question's key (``rating-value``,
``range-lower``): :func:`field_name`. :func:`read_page` reads and validates every question of the page with
that question's own shape (:func:`surveys.questions.question_kind`): an empty required question and a bad
answer are errors of that question (the page asks again, keeping what was entered); an empty optional
question has no answer. Nothing is stored here: surveys/flow.py stores a page's answers in one transaction.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterator, Mapping

from .instruments import AnswerError
from .instruments.shapes import Answer
from .questions import Question, question_kind, questions_of

if TYPE_CHECKING:  # pragma: no cover
    from .models import Item, Study


def field_name(key: str, name: str) -> str:
    """The posted name of a question's field: ``rating-value`` (the field as is for a study's only question)."""
    return f"{key}-{name}" if key else name


class Prefixed(Mapping[str, Any]):
    """The fields of one question in a posted form, read without their ``KEY-`` prefix (``getlist`` too, so a
    field sent twice is still refused by the shape)."""

    def __init__(self, data: Any, key: str):
        self.data, self.prefix = data, field_name(key, "")

    def __getitem__(self, name: str) -> Any:
        return self.data[self.prefix + name]

    def __iter__(self) -> Iterator[str]:
        return (k[len(self.prefix):] for k in self.data if k.startswith(self.prefix))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def getlist(self, name: str) -> list[Any]:
        if hasattr(self.data, "getlist"):
            return self.data.getlist(self.prefix + name)
        value = self.data.get(self.prefix + name)
        return [] if value is None else [value]


@dataclass(frozen=True)
class Given:
    """One question's answer as read from the page: the typed answer and the raw text stored with it."""

    question: Question
    answer: Answer
    raw: str


@dataclass
class PageAnswers:
    """What a page's submission holds: the answers given (in the questions' order) and, per question key, the
    message of a question that must be asked again (untranslated; surveys/flow.py translates it)."""

    given: list[Given] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.errors


def read_page(study: "Study", item: "Item", data: Any) -> PageAnswers:
    """Every question of ``study``'s page for ``item`` read from the posted ``data`` (see module docstring)."""
    out = PageAnswers()
    for question in questions_of(study):
        kind = question_kind(study, question)
        try:
            fields = kind.shape.form_data(Prefixed(data, question.key))
            if kind.shape.is_empty(fields):
                if question.required:
                    out.errors[question.key] = kind.shape.empty_message
                continue
            typed = kind.validate_answer(item, fields)
        except AnswerError as exc:
            out.errors[question.key] = str(exc)
            continue
        out.given.append(Given(question, typed, kind.shape.raw(fields)[:200]))
    return out


def selections(study: "Study", data: Any, errors: Mapping[str, str]) -> dict[str, Any]:
    """What each question's widget shows again after a refused page, by question key: a question the page
    accepted (not in ``errors``) as sent (a scale value, an option's key, bounds, text), a refused one as its
    shape says (bounds and free text as typed; nothing for a value the page does not offer)."""
    out: dict[str, Any] = {}
    for question in questions_of(study):
        shape = question_kind(study, question).shape
        fields = Prefixed(data, question.key)
        shown = shape.refused_selection(fields)
        if shown is None and question.key not in errors:
            try:
                shown = shape.raw(shape.form_data(fields)) or None
            except AnswerError:
                shown = None
        out[question.key] = shown
    return out


def question_pages(study: "Study", slot: Any, errors: Mapping[str, str], refused: Any = None) -> dict[str, Any]:
    """The item page of a study with several questions: the item's ``sentence`` and ``hints`` (shown once, above
    the questions) and, per question in order, what its widget needs: ``key``, ``q`` (its page context, worded
    by its own ``question``), ``shape``, ``name`` and ``field_prefix`` (its posted fields' names), ``prefix``
    (element ids), ``required``, ``error`` and ``selected`` (what a refused page shows again)."""
    shown = selections(study, refused, errors) if refused is not None else {}
    pages = []
    for question in questions_of(study):
        kind = question_kind(study, question)
        q = kind.slot_page_context(slot)
        pages.append({
            "key": question.key, "q": {**q, "hints": []}, "shape": kind.shape, "required": question.required,
            "name": field_name(question.key, kind.shape.fields[0]), "field_prefix": field_name(question.key, ""),
            "prefix": f"q-{question.key}", "error": errors.get(question.key, ""), "selected": shown.get(question.key),
            "sentence": q.get("sentence", ""), "hints": q.get("hints", []),
        })
    first = pages[0] if pages else {}
    return {"sentence": first.get("sentence", ""), "hints": first.get("hints", []), "each": pages,
            "has_errors": bool(errors)}
