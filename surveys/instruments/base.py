"""What every item kind (instrument) defines, once, for both people and models."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

if TYPE_CHECKING:  # pragma: no cover
    from surveys.models import Item

Speaker = tuple[str, str]  # (name, gender)


class AnswerError(ValueError):
    """A submitted or generated answer that the instrument cannot accept."""


class ImportRowError(ValueError):
    """A row of an item file that cannot be imported; names the column at fault."""

    def __init__(self, column: str, message: str):
        super().__init__(message)
        self.column = column
        self.message = message


@dataclass(frozen=True)
class ParsedAnswer:
    """The outcome of parsing a model's raw text: a value, or the reason there is none."""

    raw: str
    value: float | None
    error: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


@dataclass
class Prompt:
    """A model prompt in both API styles, built from one text."""

    text: str  # completions style: the whole prompt, ending where the answer starts
    messages: list[dict[str, str]] = field(default_factory=list)  # chat style

    def for_style(self, style: str) -> Any:
        return self.messages if style == "chat" else self.text


class Instrument:
    """Base class of an item kind. Subclasses live one per module in this package."""

    name: ClassVar[str]
    label: ClassVar[str]
    template_name: ClassVar[str]
    # CSV columns the item importer requires.
    import_columns: ClassVar[tuple[str, ...]] = ()
    # Answer scale for numeric kinds.
    scale_min: ClassVar[float] = 0
    scale_max: ClassVar[float] = 100
    scale_step: ClassVar[float] = 5

    # --- wording -----------------------------------------------------------------
    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        raise NotImplementedError

    def page_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """Everything the participant page template needs for one item."""
        raise NotImplementedError

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True) -> Prompt:
        """The model prompt for ``item`` in both API styles, from the same wording as the page."""
        raise NotImplementedError

    # --- answers -------------------------------------------------------------------
    def answer_options(self) -> list[float]:
        """The values a participant can choose."""
        count = int(round((self.scale_max - self.scale_min) / self.scale_step))
        return [self.scale_min + i * self.scale_step for i in range(count + 1)]

    def validate(self, raw: str) -> float:
        """A submitted form value as a number on the scale; AnswerError otherwise."""
        raise NotImplementedError

    def parse_model_answer(self, raw: str) -> ParsedAnswer:
        """A model's raw output as a value (or the reason it has none). The raw text is kept."""
        raise NotImplementedError

    def score(self, value: float) -> float:
        """The bin (answer category) a value falls in."""
        raise NotImplementedError

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Model fields for one row of an item file; ImportRowError names the bad column."""
        raise NotImplementedError

    def item_key(self, fields: Mapping[str, Any]) -> str:
        raise NotImplementedError

    # --- attention ---------------------------------------------------------------
    def canonical_order(self) -> list[str]:
        """Labels from highest to lowest expected answer, for the live attention check."""
        return []


FIRST_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")


def first_number(text: str) -> float | None:
    """The first number written in ``text`` (digits, optional decimals), or None."""
    match = FIRST_NUMBER.search(text)
    return float(match.group(0)) if match else None
