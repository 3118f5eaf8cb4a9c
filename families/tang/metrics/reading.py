"""Two readings of Tang et al. RQ2 answers: the Methods' text ("text") and the authors' code ("authors").

- **text** (default for new studies): an answer is the one option it names, by letter or phrase (an answer that
  lists several options is unreadable and scores 0); a chain-of-thought (CoT) answer is read after its last
  "I choose:"; in the pair-wise metric a pair of complementary choices counts in either order, as the Methods
  say ("regardless of their order"). This is the choice the platform parsed and stored with the answer.
- **authors** (what the authors' analysis did; the shipped replication uses it):

  1. a *standard* answer is read by the letter of the first option it writes as ``<letter>.is …``, whatever
     phrase follows: an answer listing the options ("A.is likely to be B.is maybe C.is unlikely to be", or
     reversed, "A.is unlikely to be B.is maybe C.is likely to be") is A, and so is "A.is unlikely to be" on 3
     choices (the letter of "likely" with the phrase of C); the text reading finds such answers unreadable.
     (Checked against the authors' published t and d: without the second case their monotonicity
     comparisons are not reproduced.) An answer without such a letter keeps the text reading;
  2. a *CoT* answer is read only from the option letter right after "I choose:" (the last one; spaces
     skipped; the letter must be one of the item's and not start a word, e.g. "I choose: B. is likely to be"
     → B, "I choose: C." → C); an answer with no such letter (no "I choose:", or a phrase, or a sentence
     such as "I choose: If one additional score …") names no option: :data:`NO_OPTION`, a conveyed
     probability of 0, below the least probable option, as the authors' lookup of a letter's probability
     (``{"A": …, "B": …, "C": …}.get(letter, 0)``) gives. It is never the ground truth nor half of a
     complementary pair, and ranks below the last option in the monotonicity metrics. (Checked against the
     authors' published t, p and d: reading those answers as A, or as the least probable option, C or E, leaves
     8 empirical-monotonicity cells — Score standard vs CoT, 5 vs 3 choices, narrow vs wide — unreproduced;
     probability 0 reproduces them);
  3. in the pair-wise metric on 3 choices, the pair (unlikely, likely) — C for the first interval of a
     complementary pair (below low; between; below high) and A for the second — is *not* counted as
     complementary. This contradicts the Methods' "regardless of order": it is the authors' code, not the
     definition (:func:`families.tang.metrics.consistency.unit_scores`, ``reading="authors"``).

:func:`authors_choices` applies rules 1–2 to a table of answers and counts the answers each rule touched.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import pandas as pd

from .consistency import LETTERS, NO_OPTION, READINGS
MARKER = "I choose:"
LISTED = re.compile(r"(?<![A-Za-z])([A-E])\.\s*is\b")
RULES = {
    "standard_first": "standard answers read by the first option letter they write (a list of the options, or a "
                      "letter with another option's phrase) where the text reading differs",
    "cot_letter": "CoT answers read from the letter after \"I choose:\" differently from the text reading",
    "cot_none": "CoT answers with no option letter after \"I choose:\", counted as naming no option (conveyed "
                "probability 0, below the least probable option)",
    "pair_order": "pair-wise units on 3 choices answered (unlikely, likely) in that order, not counted",
}


def standard_first_option(raw: str, choices: int) -> str | None:
    """Rule 1: the letter of the first option a standard answer writes as ``<letter>.is …``, else None."""
    match = LISTED.search(raw or "")
    if match is None or match.group(1) not in LETTERS[:choices]:
        return None
    return match.group(1)


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
    first = no_letter = changed = 0
    for idx in raw.index:
        n = int(choices[idx])
        if style[idx] == "cot":
            letter = cot_letter(raw[idx], n)
            if letter is None:
                letter = NO_OPTION
                no_letter += 1
            elif letter != out[idx]:
                changed += 1
            out[idx] = letter
        else:
            letter = standard_first_option(raw[idx], n)
            if letter is not None:
                first += letter != out[idx]
                out[idx] = letter
    return Reading(choice=out, counts={"standard_first": first, "cot_letter": changed, "cot_none": no_letter})
