"""Answer shapes: what kind of answer an item asks for, declared once by its instrument.

A shape says which typed columns an answer fills (``value``; ``choice``; ``lower`` and ``upper``), which form
fields the participant page posts (the same names), which widget shows them
(``templates/surveys/answers/<name>.html``), and how a submitted form or a model's raw text becomes an
:class:`Answer`. Pages, storage, exports and the API follow from it; nothing else tests for a kind.

- :class:`ScaleShape`: a number on the instrument's scale (the 0–100 kinds).
- :class:`ChoiceShape`: one of the labelled options the item offers (``Option(key, text)``, e.g. "A" →
  "is likely to be").
- :class:`PickShape`: one of the alternatives the item presents (e.g. two verbalisations); a choice whose
  options are whole texts, shown as large buttons.
- :class:`IntervalShape`: a lower and an upper bound (lower ≤ upper).
- :class:`FreeTextShape`: the participant's own words (stored in ``text``, kept exactly; a model's answer is its
  raw text, stripped). Counted in no metric; exported.

A generic study (surveys/instruments/generic.py) configures its shape from its definition file: a
:class:`LabelledScaleShape` (any min/max/step, labels at any value, buttons or a slider), a choice whose options
may be shown in an order drawn per participant (``randomise``), a pick, an interval or free text.
"""
from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

    from .base import Instrument

ANSWER_COLUMNS = ("value", "choice", "lower", "upper", "text")


class AnswerError(ValueError):
    """A submitted or generated answer that the instrument cannot accept."""


@dataclass(frozen=True)
class Answer:
    """A typed answer: the fields its shape fills, empty elsewhere. ``free_text`` is stored in the ``text``
    column (the name ``text`` is this class's readable form, :meth:`text`)."""

    value: float | None = None
    choice: str = ""
    lower: float | None = None
    upper: float | None = None
    free_text: str = ""

    @classmethod
    def from_columns(cls, row: Mapping[str, Any]) -> "Answer":
        """The answer held in stored columns (``value``, ``choice``, ``lower``, ``upper``, ``text``)."""
        return cls(value=row.get("value"), choice=row.get("choice") or "", lower=row.get("lower"),
                   upper=row.get("upper"), free_text=row.get("text") or "")

    def columns(self) -> dict[str, Any]:
        """The stored columns (``Response``/``ModelResponse`` fields of the same names)."""
        return {"value": self.value, "choice": self.choice, "lower": self.lower, "upper": self.upper,
                "text": self.free_text}

    def text(self) -> str:
        """A short readable form: ``50``, ``B``, ``[12, 18]``, or the free text itself."""
        if self.lower is not None and self.upper is not None:
            return f"[{self.lower:g}, {self.upper:g}]"
        if self.choice:
            return self.choice
        if self.free_text:
            return self.free_text
        return "" if self.value is None else f"{self.value:g}"


@dataclass(frozen=True)
class Option:
    """One answer option of a choice item: the key stored (``A``) and the text shown (``is likely to be``)."""

    key: str
    text: str


@dataclass(frozen=True)
class ParsedAnswer:
    """The outcome of parsing a model's raw text: an answer, or the reason there is none."""

    raw: str
    answer: Answer | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.answer is not None

    @property
    def value(self) -> float | None:
        return self.answer.value if self.answer is not None else None


REPEATED_FIELD_MESSAGE = "Please give one answer only."


def _clean(data: Mapping[str, Any], name: str) -> str:
    """A posted field as sent (not stripped: a page never sends spaces, so a value with them is refused).
    A field posted more than once (a page sends each field once) is refused with AnswerError, instead of
    taking one of the values."""
    if hasattr(data, "getlist") and len(data.getlist(name)) > 1:
        raise AnswerError(REPEATED_FIELD_MESSAGE)
    value = data.get(name)
    return "" if value is None else str(value)


class AnswerShape:
    """Base of the answer shapes. ``fields``: the form fields posted (named after the stored columns)."""

    name: ClassVar[str]
    fields: ClassVar[tuple[str, ...]]
    empty_message: ClassVar[str] = "Please choose an answer before continuing."
    number_message: ClassVar[str] = ""
    order_message: ClassVar[str] = ""
    category_name: ClassVar[str] = "category"  # what one of :meth:`categories` is called on admin pages
    whole_reply: ClassVar[bool] = False  # a model's answer is its whole reply (greedy and sampled modes only)

    @property
    def widget(self) -> str:
        return f"surveys/answers/{self.name}.html"

    def form_data(self, source: Any) -> dict[str, str]:
        """This shape's fields from a POST (or any mapping); a plain value stands for a one-field shape's field."""
        if not isinstance(source, Mapping) and not hasattr(source, "getlist"):
            source = {self.fields[0]: source}
        return {f: _clean(source, f) for f in self.fields}

    def is_empty(self, data: Mapping[str, Any]) -> bool:
        return not any(_clean(data, f).strip() for f in self.fields)

    def raw(self, data: Mapping[str, Any]) -> str:
        """The submission as stored in ``raw`` (one field: its text; several: ``lower=…;upper=…``)."""
        if len(self.fields) == 1:
            return _clean(data, self.fields[0])
        return ";".join(f"{f}={_clean(data, f)}" for f in self.fields)

    def page_options(self, kind: "Instrument", item: "Item") -> list[Any]:
        """What the widget offers (none by default)."""
        return []

    def refused_selection(self, data: Mapping[str, Any]) -> Any:
        """What the widget shows again after a refused submission ``data`` (the POST as sent): nothing by
        default (a refused choice or scale value is not one the page offers)."""
        return None

    def validate(self, kind: "Instrument", item: "Item", data: Mapping[str, Any]) -> Answer:
        raise NotImplementedError

    def parse(self, kind: "Instrument", item: "Item | None", raw: str) -> ParsedAnswer:
        raise NotImplementedError

    def from_columns(self, row: Mapping[str, Any]) -> Answer:
        """The answer held in stored columns (``value``, ``choice``, ``lower``, ``upper``, ``text``)."""
        return Answer.from_columns(row)

    def from_cell(self, kind: "Instrument", item: "Item", cell: str) -> Answer:
        """An answer collected elsewhere, written in one cell of an imported file (surveys/answer_import.py),
        checked as the page checks it; AnswerError saying what is wrong with the cell. A shape of one field reads
        the cell as that field."""
        if not cell.strip():
            raise AnswerError("is empty")
        if len(self.fields) != 1:
            raise AnswerError(f"answers of the {self.name} shape cannot be read from one cell")
        return self.validate(kind, item, {self.fields[0]: cell})

    def categories(self, kind: "Instrument", item: "Item") -> list[tuple[str, str]]:
        """The categories answers to ``item`` are counted in, as (key, label); none for shapes without."""
        return []

    def category(self, kind: "Instrument", answer: Answer) -> str | None:
        """The key of the category ``answer`` falls in (one of :meth:`categories`), or None."""
        return None

    def mean_text(self, answers: list[Answer]) -> str | None:
        """The answers' mean as a short text (``62.5``; ``[10.2, 18.4]``), or None when it has no meaning."""
        return None


class ScaleShape(AnswerShape):
    """A number on the instrument's scale; the instrument's ``validate(raw)`` says which numbers it takes."""

    name = "scale"
    fields = ("value",)
    category_name = "bin"

    def page_options(self, kind: "Instrument", item: "Item") -> list[Any]:
        return [int(v) for v in kind.answer_options()]

    def validate(self, kind: "Instrument", item: "Item", data: Mapping[str, Any]) -> Answer:
        return Answer(value=kind.validate(_clean(data, "value")))

    def categories(self, kind: "Instrument", item: "Item") -> list[tuple[str, str]]:
        """The scale's bins (``kind.score``)."""
        bins = dict.fromkeys(f"{kind.score(v):g}" for v in kind.answer_options())
        return [(b, b) for b in bins]

    def category(self, kind: "Instrument", answer: Answer) -> str | None:
        return None if answer.value is None else f"{kind.score(answer.value):g}"

    def mean_text(self, answers: list[Answer]) -> str | None:
        values = [a.value for a in answers if a.value is not None]
        return f"{sum(values) / len(values):.1f}" if values else None

    def from_cell(self, kind: "Instrument", item: "Item", cell: str) -> Answer:
        """Any number on the scale, not only the steps the page offers (answers collected elsewhere, e.g. a
        survey's 0–100 typed freely), written as the page's rule reads numbers (not 1e2, ٥٠, 1_0)."""
        text = cell.strip()
        if not text:
            raise AnswerError("is empty")
        value = plain_number(text)
        if value is None:
            raise AnswerError(f"{text!r} is not a number")
        if not kind.scale_min <= value <= kind.scale_max:
            raise AnswerError(f"{text} is outside {kind.scale_min:g}–{kind.scale_max:g}")
        return Answer(value=value)

    def parse(self, kind: "Instrument", item: "Item | None", raw: str) -> ParsedAnswer:
        value = first_number(raw or "")
        if value is None:
            return ParsedAnswer(raw=raw, error="no number in the answer")
        if not kind.scale_min <= value <= kind.scale_max:
            return ParsedAnswer(raw=raw, error=f"number {value:g} is outside {kind.scale_min:g}–{kind.scale_max:g}")
        return ParsedAnswer(raw=raw, answer=Answer(value=value))


class ChoiceShape(AnswerShape):
    """One of the item's options (``kind.options(item)``), stored by its key.

    Parsing a model's text: the text after the last ``final_marker`` (e.g. "I choose:") when the marker is
    there (the instrument's ``final_choice_marker``), else the whole text; in it, a standalone option key ("B",
    "B.", "(B)") or an option's text (case and spacing ignored; a phrase inside a longer matching one does not
    count, so "is almost certainly not" is E, not also A). Several different letters or phrases (an answer
    that lists the options) → unreadable (kept and counted by the caller).
    """

    name = "choice"
    fields = ("choice",)
    category_name = "option"

    def page_options(self, kind: "Instrument", item: "Item") -> list[Any]:
        return kind.options(item)

    def validate(self, kind: "Instrument", item: "Item", data: Mapping[str, Any]) -> Answer:
        key = _clean(data, "choice")
        if key not in {o.key for o in kind.options(item)}:
            raise AnswerError("Please choose one of the options shown.")
        return Answer(choice=key)

    def from_cell(self, kind: "Instrument", item: "Item", cell: str) -> Answer:
        """An option of the item, by its key (``B``) or its text as shown (case and spacing ignored)."""
        text = cell.strip()
        if not text:
            raise AnswerError("is empty")
        options = kind.options(item)
        wanted = " ".join(text.split()).casefold()
        for option in options:
            if text == option.key or wanted == " ".join(option.text.split()).casefold():
                return Answer(choice=option.key)
        shown = "; ".join(f"{o.key} ({o.text})" for o in options)
        raise AnswerError(f"{text[:80]!r} is not an option of item {item.key} (its options: {shown})")

    def categories(self, kind: "Instrument", item: "Item") -> list[tuple[str, str]]:
        """The item's options."""
        return [(o.key, f"{o.key}: {o.text}") for o in kind.options(item)]

    def category(self, kind: "Instrument", answer: Answer) -> str | None:
        return answer.choice or None

    def parse(self, kind: "Instrument", item: "Item | None", raw: str) -> ParsedAnswer:
        if item is None:
            return ParsedAnswer(raw=raw, error="the options of a choice depend on the item")
        text = raw or ""
        marker = kind.final_choice_marker
        if marker:
            at = text.lower().rfind(marker.lower())
            if at >= 0:
                text = text[at + len(marker):]
        key = self.read(text, kind.options(item))
        if key is None:
            return ParsedAnswer(raw=raw, error="no single option in the answer")
        return ParsedAnswer(raw=raw, answer=Answer(choice=key))


    def read(self, text: str, options: list[Option]) -> str | None:
        """The one option ``text`` names (:func:`read_option`), or None."""
        return read_option(text, options)


class PickShape(ChoiceShape):
    """One of the alternatives the item presents (whole texts, shown as large buttons)."""

    name = "pick"


class IntervalShape(AnswerShape):
    """A lower and an upper bound, lower ≤ upper (decimals and negatives allowed)."""

    name = "interval"
    fields = ("lower", "upper")
    empty_message = "Please enter a lower and an upper bound before continuing."
    number_message = "Each bound must be a number (for example 12 or -3.5)."
    order_message = "The lower bound must not be greater than the upper bound."

    def validate(self, kind: "Instrument", item: "Item", data: Mapping[str, Any]) -> Answer:
        bounds = []
        for name, label in (("lower", "lower bound"), ("upper", "upper bound")):
            text = _clean(data, name)
            if not text.strip():
                raise AnswerError(f"Please enter a {label}.")
            number = plain_number(text)
            if number is None:
                raise AnswerError(self.number_message)
            bounds.append(number)
        if bounds[0] > bounds[1]:
            raise AnswerError(self.order_message)
        return Answer(lower=bounds[0], upper=bounds[1])

    def from_cell(self, kind: "Instrument", item: "Item", cell: str) -> Answer:
        """Both bounds in one cell, as the export's readable form writes them (``[12, 18]``) or bare
        (``12, 18``; ``12;18``)."""
        text = cell.strip()
        if not text:
            raise AnswerError("is empty")
        bounds = re.split(r"\s*[,;]\s*", text[1:-1].strip() if text[:1] + text[-1:] == "[]" else text)
        if len(bounds) != 2:
            raise AnswerError(f"{text[:80]!r} is not an interval: write it as [lower, upper]")
        try:
            return self.validate(kind, item, dict(zip(self.fields, bounds)))
        except AnswerError as exc:
            raise AnswerError(f"{text[:80]!r}: {exc}") from None

    def refused_selection(self, data: Mapping[str, Any]) -> Any:
        """Both bounds as typed, so that a participant corrects one instead of typing both again (a field sent
        twice shows its last value; it was refused anyway)."""
        return {name: str(data.get(name) or "") for name in self.fields}

    def mean_text(self, answers: list[Answer]) -> str | None:
        """The mean lower and the mean upper bound."""
        pairs = [(a.lower, a.upper) for a in answers if a.lower is not None and a.upper is not None]
        if not pairs:
            return None
        return f"[{sum(p[0] for p in pairs) / len(pairs):.1f}, {sum(p[1] for p in pairs) / len(pairs):.1f}]"

    def parse(self, kind: "Instrument", item: "Item | None", raw: str) -> ParsedAnswer:
        return kind.parse_interval(raw)


class LabelledScaleShape(ScaleShape):
    """A number on a scale of any size (a generic study's ``[answer]``: min, max, step), with labels at any of
    its values (``labels``: value → text, shown by the buttons or under the slider) and shown as buttons
    (``widget="buttons"``) or as a slider (``widget="slider"``; its value counts only once the participant moved
    it or confirmed it: the posted field stays empty until then, so an untouched slider is no answer)."""

    def __init__(self, labels: Mapping[float, str] | None = None, widget: str = "buttons"):
        self.labels = dict(labels or {})
        self.widget_name = widget

    @property
    def widget(self) -> str:
        return "surveys/answers/slider.html" if self.widget_name == "slider" else "surveys/answers/labelled_scale.html"

    def page_options(self, kind: "Instrument", item: "Item") -> list[Any]:
        """Each value of the scale with its label ("" when it has none): ``{"value": 4, "label": "Neutral"}``."""
        return [{"value": _number_text(v), "label": self.labels.get(v, "")} for v in kind.answer_options()]

    def refused_selection(self, data: Mapping[str, Any]) -> Any:
        return None


class OrderedChoiceShape(ChoiceShape):
    """A choice among the researcher's own options (a generic study), read by key or label; with
    ``randomise`` each participant sees them in an order drawn for their slot (:meth:`draw_order`, stored in
    ``Assignment.option_order``). Keys need not be letters: an answer that is exactly a key (case and
    surrounding punctuation ignored) is that option, and so is a key standing alone as a word when no other key
    or label does."""

    def __init__(self, randomise: bool = False, name: str = "choice"):
        self.randomise = randomise
        self.name = name  # "choice" or "pick": the widget and the reports' name for it

    @property
    def widget(self) -> str:
        """A pick's large buttons; a choice's options by their labels only (keys are the researcher's codes)."""
        return "surveys/answers/pick.html" if self.name == "pick" else "surveys/answers/options.html"

    def draw_order(self, keys: Sequence[str], seed: str) -> list[str]:
        """The option keys in the order one slot shows them: shuffled by a generator seeded with ``seed``
        (reproducible), or as declared when the shape does not randomise."""
        order = list(keys)
        if self.randomise:
            random.Random(int.from_bytes(hashlib.sha256(seed.encode("utf-8")).digest()[:8], "big")).shuffle(order)
        return order

    def read(self, text: str, options: list[Option]) -> str | None:
        bare = _norm(text)
        exact = [o.key for o in options if _norm(o.key) == bare]
        if len(exact) == 1:
            return exact[0]
        key = read_option(text, options)
        if key is not None:
            return key
        words = f" {bare} "
        named = {o.key for o in options if _norm(o.key) and f" {_norm(o.key)} " in words}
        return named.pop() if len(named) == 1 else None


class FreeTextShape(AnswerShape):
    """The participant's own words, up to ``max_length`` characters, stored exactly as typed in ``text``
    (line breaks and spaces kept; an answer of only spaces is no answer; a NUL character, which no text column
    can store, is refused). A model's answer is its raw text, stripped (an empty reply has no answer). Free
    text is in no metric: it has no categories and no mean, and is exported as written."""

    name = "free_text"
    fields = ("text",)
    whole_reply = True
    empty_message = "Please write an answer before continuing."

    def __init__(self, max_length: int = 2000):
        self.max_length = max_length

    def validate(self, kind: "Instrument", item: "Item", data: Mapping[str, Any]) -> Answer:
        text = _clean(data, "text")
        if not text.strip():
            raise AnswerError(self.empty_message)
        if "\x00" in text:
            raise AnswerError("Your answer holds a character that cannot be stored (NUL); please remove it.")
        length = len(text.replace("\r\n", "\n"))  # a browser counts a line break once, and posts it as CR LF
        if length > self.max_length:
            raise AnswerError("Please shorten your answer: it is longer than this question allows.")
        return Answer(free_text=text)

    def refused_selection(self, data: Mapping[str, Any]) -> Any:
        """The text as typed, so that a participant shortens it instead of writing it again."""
        return str(data.get("text") or "")

    def parse(self, kind: "Instrument", item: "Item | None", raw: str) -> ParsedAnswer:
        text = (raw or "").strip()
        if not text:
            return ParsedAnswer(raw=raw, error="empty answer")
        return ParsedAnswer(raw=raw, answer=Answer(free_text=text))


def _number_text(value: float) -> str:
    """A scale value as the page writes it (``f"{v:g}"``: 1, 2.5, -3)."""
    return f"{value:g}"


# --- helpers shared by the shapes -------------------------------------------------------------------
FIRST_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")
PLAIN_NUMBER = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")  # the whole text (fullmatch: "5\n" is not a number)


def first_number(text: str) -> float | None:
    """The first number written in ``text`` (digits, optional decimals), or None."""
    match = FIRST_NUMBER.search(text)
    return float(match.group(0)) if match else None


def plain_number(text: str, allowed: Iterable[float] | None = None) -> float | None:
    """``text`` as a number only if it is written plainly, the way a page writes one: ASCII digits with an
    optional minus sign and decimal part (no exponent, ``_``, other scripts' digits, spaces or line breaks:
    ``1e2``, ``٥٠``, ``1_0``, `` 50.0 ``, ``5\n`` are not answers although ``float()`` takes them). With
    ``allowed``: exactly one of those values as the page writes it (``f"{v:g}"``). None otherwise.
    The one rule for reading an answer's number: the participant pages and the answer importers
    (surveys.answer_import) both read numbers with it."""
    text = str(text)
    if allowed is not None:
        return next((float(v) for v in allowed if f"{v:g}" == text), None)
    if not PLAIN_NUMBER.fullmatch(text):
        return None
    number = float(text)
    return number if math.isfinite(number) else None


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.lower()).split())


def read_option(text: str, options: list[Option]) -> str | None:
    """The one option ``text`` names, by key or by text (see :class:`ChoiceShape`), or None."""
    found: set[str] = set()
    keys = {o.key for o in options}
    for match in re.finditer(r"(?<![A-Za-z])\(?([A-Za-z])\)?(?=[.):]|\s|$)", text):
        if match.group(1) in keys:
            found.add(match.group(1))
    if len(found) == 1:
        return found.pop()
    if len(found) > 1:
        return None  # several letters: the answer lists the options rather than choosing one
    norm = f" {_norm(text)} "
    hits = {o.key: f" {_norm(o.text)} " for o in options if _norm(o.text) and f" {_norm(o.text)} " in norm}
    # a phrase inside a longer one that also matched ("is almost certainly" in "is almost certainly not") is
    # not a choice of its own; what remains must be one option
    chosen = {key for key, phrase in hits.items()
              if not any(phrase != other and phrase in other for other in hits.values())}
    return chosen.pop() if len(chosen) == 1 else None
