"""Reading an interval from the text a model writes (the interval answers of any kind, refinements included):
the platform's reading (a family may add its own, e.g. a paper's authors' cleaner, in its package).

Named bound lines win: when the text has a line ``lower_bound: x`` (or ``Lower bound = x``, ``**lower
bound**: x``, ``- lower_bound: x``, ``1. lower_bound: x``) and a line ``upper_bound: y``, the last line of each
gives the interval, whatever other numbers the text holds (the format interval prompts usually ask for).
Otherwise, of the shapes below the last one written wins (a chain of thought ends with its final answer); when
the text has ``Answer:`` only what follows its last occurrence counts:

- brackets: ``[12, 18]``, ``(12; 18)``, ``[12 - 18]``, ``[12 to 18]`` (but ``(21,527 ft)`` is one number)
- words: ``between 12 and 18``, ``from 12 to 18``
- a range: ``12 - 18``, ``12–18``, ``12 to 18``, ``-3 to 5``
- named bounds on one line: ``lower bound: 12 … upper bound: 18``

Numbers may carry thousands separators (``8,849``), a currency sign (``$1,200``), an exponent (``2.5e6``), a
unit after them (``12 km``, ``100 °C``, ``45%``) and a scale word (``1.5 million``, ``3 billion``); signs may
be ``-`` or ``−``.
Nothing else is guessed: a reversed interval (lower > upper) or a single number is *not* an interval, and the
reason says which (the caller keeps the text and counts it as unparseable).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
# a number: optional currency sign, sign, digits with optional thousands groups, decimals, optional scale word
_NUM = (r"[$€£]?\s?[-−]?\s?[$€£]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][+-]?\d+\b)?"
        r"(?:\s?(?:thousand|million|billion|trillion)\b)?")
_UNIT = r"(?:\s?(?:%|°\s?[CF]?|[A-Za-z]{1,12}\.?(?:\s?[A-Za-z]{1,12})?))?"  # "km", "°C", "metres", "square km"
_SEP = r"\s*(?:,|;|\bto\b|-|–|—|\band\b)\s*"
BRACKETS = re.compile(rf"[\[(]\s*({_NUM}){_UNIT}{_SEP}({_NUM}){_UNIT}\s*[\])]", re.IGNORECASE)
WORDS = re.compile(rf"\b(?:between|from)\s+({_NUM}){_UNIT}\s+(?:and|to)\s+({_NUM})", re.IGNORECASE)
RANGE = re.compile(rf"(?<![\w.,])({_NUM}){_UNIT}\s*(?:-|–|—|\bto\b)\s*({_NUM})(?!\d|[.,]\d)", re.IGNORECASE)
NAMED = re.compile(rf"lower(?:[\s_]bound)?\W{{0,3}}\s*[:=]?\s*({_NUM}).*?upper(?:[\s_]bound)?\W{{0,3}}\s*[:=]?\s*"
                   rf"({_NUM})", re.IGNORECASE | re.DOTALL)
ANY_NUMBER = re.compile(_NUM, re.IGNORECASE)
# a line naming one bound: "lower_bound: 12", "**Lower Bound**: 12", "- upper_bound = 18", "1. lower bound: 12"
NAMED_LINE = re.compile(r"^[\s>*#_-]*(?:\d{1,2}[.)]\s*)?[*_\s]*(lower|upper)[\s_]?bound[*_\s]*[:=][*_\s]*(.*)$",
                        re.IGNORECASE | re.MULTILINE)
ANSWER_MARK = re.compile(r"\banswer\s*:", re.IGNORECASE)


@dataclass(frozen=True)
class IntervalReading:
    """An interval read from text, or the reason there is none."""

    lower: float | None = None
    upper: float | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.lower is not None


def to_number(text: str) -> float:
    """``"$1,200"`` → 1200, ``"−3.5"`` → -3.5, ``"1.5 million"`` → 1.5e6."""
    text = text.replace("−", "-").replace(",", "").replace("$", "").replace("€", "").replace("£", "")
    text = text.replace(" ", "").lower()
    factor = 1.0
    for word, scale in SCALES.items():
        if text.endswith(word):
            text, factor = text[: -len(word)], scale
    return float(text) * factor


def plain(value: float) -> str:
    """A number as a prompt writes it: no exponent, no trailing zeros (31536000, 0.25, -273.15)."""
    if float(value).is_integer() and abs(value) < 1e18:
        return str(int(value))
    return f"{value:.12f}".rstrip("0").rstrip(".")


def after_answer_mark(text: str) -> str:
    """The text after the last ``Answer:`` when a number follows it, else the whole text."""
    marks = list(ANSWER_MARK.finditer(text))
    if marks:
        tail = text[marks[-1].end():]
        if ANY_NUMBER.search(tail):
            return tail
    return text


ONE_NUMBER = re.compile(rf"\(\s*{_NUM}{_UNIT}\s*\)", re.IGNORECASE)


def one_number_in_parentheses(match: re.Match) -> bool:
    """``(21,527 ft)`` is one number with a thousands separator, not the interval 21–527: in round brackets a
    content that reads as a single number is one (square brackets, the format the prompt asks for, are read as
    an interval: ``[120,180]``)."""
    return ONE_NUMBER.fullmatch(match.group(0)) is not None


def named_lines(text: str) -> IntervalReading | None:
    """The interval of the last ``lower_bound:`` and the last ``upper_bound:`` line that hold a number (None
    unless both do)."""
    bounds: dict[str, float] = {}
    for match in NAMED_LINE.finditer(text):
        number = ANY_NUMBER.search(match.group(2))
        if number is not None:
            bounds[match.group(1).lower()] = to_number(number.group(0))
    if len(bounds) < 2:
        return None
    return checked(bounds["lower"], bounds["upper"])


def checked(lower: float, upper: float) -> IntervalReading:
    if lower > upper:
        return IntervalReading(lower, upper, f"reversed interval: lower bound {lower:g} > upper bound {upper:g}")
    return IntervalReading(lower, upper)


def read_interval(raw: str) -> IntervalReading:
    """The interval written in ``raw`` (see the module docstring), or why there is none."""
    named = named_lines(raw or "")
    if named is not None:
        return named
    text = after_answer_mark(raw or "")
    matches = [m for pattern in (BRACKETS, WORDS, NAMED, RANGE) for m in pattern.finditer(text)
               if not (pattern is BRACKETS and one_number_in_parentheses(m))]
    if matches:  # the last written: the latest end, and of those the longest (``[12 - 18]`` over ``12 - 18``)
        last = max(matches, key=lambda m: (m.end(), -m.start()))
        lower, upper = (to_number(g) for g in last.groups())
        return checked(lower, upper)
    numbers = ANY_NUMBER.findall(text)
    if not numbers:
        return IntervalReading(error="no number in the answer")
    if len(numbers) == 1:
        return IntervalReading(error=f"a single number ({to_number(numbers[0]):g}), not an interval")
    return IntervalReading(error="no interval (two bounds) in the answer")
