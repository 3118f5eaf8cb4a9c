"""Two readings of Tang et al. RQ2 answers: the Methods' text ("text") and the authors' code ("authors").

- **text** (default for new studies): an answer is the one option it names, by letter or phrase (an answer that
  lists several options is unreadable and scores 0); a chain-of-thought (CoT) answer is read after its last
  "I choose:"; in the pair-wise metric a pair of complementary choices counts in either order, as the Methods
  say ("regardless of their order"). This is the choice the platform parsed and stored with the answer.
- **authors** (what the authors' analysis did; the shipped replication uses it):

  1. a *standard* answer that lists the options, i.e. two or more written as ``<letter>.is …`` (e.g.
     "A.is likely to be B.is maybe C.is unlikely to be", or the same reversed "A.is unlikely to be B.is maybe
     C.is likely to be"), is read as its first option's letter (A above, whatever phrase follows it);
  2. a *CoT* answer is read only from the option letter right after "I choose:" (the last one; spaces
     skipped; the letter must be one of the item's and not start a word, e.g. "I choose: B. is likely to be"
     → B, "I choose: C." → C); an answer with no such letter (no "I choose:", or a phrase, or a letter of
     another set) counts as the *lowest* option, the last letter of the set (E of 5, C of 3);
  3. in the pair-wise metric on 3 choices, the pair (unlikely, likely) — C for the first interval of a
     complementary pair (below low; between; below high) and A for the second — is *not* counted as
     complementary. This contradicts the Methods' "regardless of order": it is the authors' code, not the
     definition (:func:`analysis.metrics.tang_consistency.unit_scores`, ``reading="authors"``).

:func:`authors_choices` applies rules 1–2 to a table of answers and counts the answers each rule touched.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from .tang_consistency import LETTERS, READINGS
MARKER = "I choose:"
LISTED = re.compile(r"(?<![A-Za-z])([A-E])\.\s*is\b")
RULES = {
    "listed_first": "standard answers listing the options, read as their first option",
    "cot_letter": "CoT answers read from the letter after \"I choose:\" differently from the text reading",
    "cot_lowest": "CoT answers with no option letter after \"I choose:\", counted as the lowest option",
    "pair_order": "pair-wise units on 3 choices answered (unlikely, likely) in that order, not counted",
}


def standard_first_listed(raw: str, choices: int) -> str | None:
    """Rule 1: the first option's letter of a standard answer listing two or more options, else None."""
    found = [m.group(1) for m in LISTED.finditer(raw or "")]
    if len(set(found)) < 2 or found[0] not in LETTERS[:choices]:
        return None
    return found[0]


def cot_letter(raw: str, choices: int) -> str | None:
    """Rule 2: the option letter right after the last "I choose:", or None when there is none."""
    text = raw or ""
    at = text.lower().rfind(MARKER.lower())
    if at < 0:
        return None
    match = re.match(r"\s*([A-Za-z])(?![A-Za-z])", text[at + len(MARKER):])
    if not match or match.group(1) not in LETTERS[:choices]:
        return None
    return match.group(1)


@dataclass
class Reading:
    """Answers' letters under a reading and how many answers each of the authors' rules touched."""

    choice: pd.Series
    counts: dict[str, int]


def authors_choices(raw: pd.Series, style: pd.Series, choices: pd.Series, text_choice: pd.Series) -> Reading:
    """The authors' letter of each answer (rules 1–2 of the module docstring). ``raw``: the answer texts;
    ``style``: each answer's prompt style ("cot" or another); ``choices``: 5 or 3; ``text_choice``: the letter
    of the text reading (NaN/"" when unread), kept for standard answers that list no options."""
    out = text_choice.astype(object).where(text_choice.astype("string").fillna("") != "", None)
    listed = lowest = changed = 0
    for idx in raw.index:
        n = int(choices[idx])
        if style[idx] == "cot":
            letter = cot_letter(raw[idx], n)
            if letter is None:
                letter = LETTERS[n - 1]
                lowest += 1
            elif letter != out[idx]:
                changed += 1
            out[idx] = letter
        else:
            first = standard_first_listed(raw[idx], n)
            if first is not None:
                listed += 1
                out[idx] = first
    return Reading(choice=out, counts={"listed_first": listed, "cot_letter": changed, "cot_lowest": lowest})
