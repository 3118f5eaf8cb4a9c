"""What every item kind (instrument) defines, once, for both people and models."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Mapping, Sequence

from analysis.metrics.bins import bin_centre

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
    messages: list[dict[str, str]] = field(default_factory=list)  # chat style (elicitation.prompts.prompt_content picks one)


class Instrument:
    """Base class of an item kind. Subclasses live one per module in this package.

    The defaults below serve the numeric kinds (an answer from ``scale_min`` to ``scale_max``, scored in the
    21 bins of the analysis); a kind sets its own wording (``task_intro``, ``scale_ends``, ``sentence``,
    ``question``, ``prompt_block``, ``build_prompt``) and overrides what differs.
    """

    name: ClassVar[str]
    label: ClassVar[str]
    template_name: ClassVar[str]
    # CSV columns the item importer requires.
    import_columns: ClassVar[tuple[str, ...]] = ()
    # Answer scale for numeric kinds.
    scale_min: ClassVar[float] = 0
    scale_max: ClassVar[float] = 100
    scale_step: ClassVar[float] = 5
    # The task description shared by the instructions page and the prompt.
    task_intro: ClassVar[str] = ""
    scale_ends: ClassVar[tuple[str, ...]] = ()

    # --- wording -----------------------------------------------------------------
    def sentence(self, item: "Item", speaker: Speaker | None = None) -> str:
        raise NotImplementedError

    def question(self, item: "Item", speaker: Speaker | None = None) -> str:
        """The question asked about the sentence (the legend of the answer scale)."""
        raise NotImplementedError

    def hints(self, item: "Item", speaker: Speaker | None = None) -> list[str]:
        """Lines shown under the question; by default what the ends of the scale mean."""
        return list(self.scale_ends)

    def page_context(self, item: "Item", speaker: Speaker | None = None) -> dict[str, Any]:
        """Everything the participant page template needs for one item."""
        return {
            "sentence": self.sentence(item, speaker),
            "question": self.question(item, speaker),
            "hints": self.hints(item, speaker),
            "options": [int(v) for v in self.answer_options()],
        }

    def intro(self) -> dict[str, Any]:
        """The task description shared by the instructions page and the prompt."""
        return {"task": self.task_intro, "scale_ends": list(self.scale_ends)}

    def prompt_block(self, item: "Item", with_answer: bool) -> str:
        """One question of the prompt, ending where the answer starts (followed by a demonstration's
        answer when ``with_answer``)."""
        raise NotImplementedError

    def build_prompt(self, item: "Item", demonstrations: list["Item"], few_shot: bool = True) -> Prompt:
        """The model prompt for ``item`` in both API styles, from the same wording as the page."""
        raise NotImplementedError

    def chat_messages(self, system: str, demonstrations: Sequence["Item"], question: str) -> list[dict[str, str]]:
        """The chat form of a few-shot prompt: ``system``, then each demonstration as a user turn (its
        :meth:`prompt_block`) answered by the assistant with its answer, then ``question``."""
        messages = [{"role": "system", "content": system}]
        for demo in demonstrations:
            messages.append({"role": "user", "content": self.prompt_block(demo, with_answer=False)})
            messages.append({"role": "assistant", "content": f"{demo.demo_answer:g}"})
        messages.append({"role": "user", "content": question})
        return messages

    # --- answers -------------------------------------------------------------------
    def answer_options(self) -> list[float]:
        """The values a participant can choose."""
        count = int(round((self.scale_max - self.scale_min) / self.scale_step))
        return [self.scale_min + i * self.scale_step for i in range(count + 1)]

    def validate(self, raw: str) -> float:
        """A submitted form value as a number on the scale; AnswerError otherwise."""
        raise NotImplementedError

    def parse_model_answer(self, raw: str) -> ParsedAnswer:
        """A model's raw output as a value (or the reason it has none). The raw text is kept.

        Default: the first number written in the text, if it lies on the scale.
        """
        value = first_number(raw or "")
        if value is None:
            return ParsedAnswer(raw=raw, value=None, error="no number in the answer")
        if not self.scale_min <= value <= self.scale_max:
            return ParsedAnswer(raw=raw, value=None,
                                error=f"number {value:g} is outside {self.scale_min:g}–{self.scale_max:g}")
        return ParsedAnswer(raw=raw, value=value)

    def score(self, value: float) -> float:
        """The bin (answer category) a value falls in. Default: the centre c of the 0–100 bin with
        c − 2.5 ≤ v < c + 2.5, 97.5–100 → 100 (SPEC §6; ``analysis.metrics.bins``, the single source of binning)."""
        return bin_centre(value)

    # --- import --------------------------------------------------------------------
    def item_fields_from_row(self, row: Mapping[str, str]) -> dict[str, Any]:
        """Model fields for one row of an item file; ImportRowError names the bad column."""
        raise NotImplementedError

    def item_key(self, fields: Mapping[str, Any]) -> str:
        raise NotImplementedError

    def default_demonstrations(self, items: list["Item"]) -> list[dict[str, Any]]:
        """Fields of the two worked examples added to a study imported without any (none by default)."""
        return []

    # --- attention ---------------------------------------------------------------
    def canonical_order(self) -> list[str]:
        """Labels from highest to lowest expected answer, for the live attention check."""
        return []


PAGE_NUMBER = re.compile(r"\d+(?:\.\d+)?", re.ASCII)


def page_number(raw: str, allowed: Iterable[float] | None = None) -> float | None:
    """``raw`` as a number only if it is written the way the page itself writes one: ASCII digits and an
    optional decimal part (no sign, exponent, ``_``, other scripts' digits or spaces: ``1e2``, ``٥٠``,
    ``1_0``, `` 50.0 `` are not answers although ``float()`` takes them). With ``allowed``: exactly one of
    those values as the page writes it (``f"{v:g}"``). None otherwise."""
    text = str(raw)
    if allowed is not None:
        return next((float(v) for v in allowed if f"{v:g}" == text), None)
    return float(text) if PAGE_NUMBER.fullmatch(text) else None


FIRST_NUMBER = re.compile(r"(?<![\d.])-?\d+(?:\.\d+)?")


def first_number(text: str) -> float | None:
    """The first number written in ``text`` (digits, optional decimals), or None."""
    match = FIRST_NUMBER.search(text)
    return float(match.group(0)) if match else None
