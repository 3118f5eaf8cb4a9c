"""The 19 words of estimative probability of Sileo & Moens (2023): consensual probabilities and templates.

- :data:`WEP_MEDIANS`: Appendix A, Table 2 — the median probability (percent) that the 123 respondents of the
  Fagen-Ulmschneider (2015) survey gave each WEP (``tests/test_sileo_scale.py`` recomputes them from the survey
  file), plus Kent's (1964) anchors *certain* = 100 and *impossible* = 0.
- :data:`WEP_TEMPLATES`: Appendix B, Table 3 — the modal sentence built from a WEP and a fact.
- :func:`closest_weps`: the WEPs whose median is closest to a probability p (the valid verbalisation, §3.1).
- :func:`distractor_weps`: the WEPs whose median differs from p by at least 40 points (the invalid one).

Plain Python (no Django), so that designs, instruments and metrics share one copy.
"""
from __future__ import annotations

import random
import re

# Appendix A, Table 2 (percent), in the table's order (highest first; ties in the table's order).
WEP_MEDIANS: dict[str, float] = {
    "certain": 100.0,
    "almost certain": 95.0,
    "highly likely": 90.0,
    "very good chance": 80.0,
    "we believe": 75.0,
    "likely": 70.0,
    "probably": 70.0,
    "probable": 70.0,
    "better than even": 60.0,
    "about even": 50.0,
    "probably not": 25.0,
    "we doubt": 20.0,
    "unlikely": 20.0,
    "little chance": 10.0,
    "chances are slight": 10.0,
    "improbable": 10.0,
    "highly unlikely": 5.0,
    "almost no chance": 2.0,
    "impossible": 0.0,
}
WEPS: tuple[str, ...] = tuple(WEP_MEDIANS)
KENT_ANCHORS: tuple[str, ...] = ("certain", "impossible")  # Table 2's †: from Kent (1964), not the survey

# Appendix B, Table 3: "[FACT]" is replaced by the fact.
WEP_TEMPLATES: dict[str, str] = {
    "about even": "chances are about even that [FACT]",
    "almost certain": "it is almost certain that [FACT]",
    "almost no chance": "there is almost no chance that [FACT]",
    "better than even": "there is a better than even chance that [FACT]",
    "certain": "it is certain that [FACT]",
    "chances are slight": "chances are slight that [FACT]",
    "highly likely": "it is highly likely that [FACT]",
    "highly unlikely": "it is highly unlikely that [FACT]",
    "impossible": "it is impossible that [FACT]",
    "improbable": "it is improbable that [FACT]",
    "likely": "it is likely that [FACT]",
    "little chance": "there is little chance that [FACT]",
    "probable": "it is probable that [FACT]",
    "probably": "it is probably the case that [FACT]",
    "probably not": "it is probably not the case that [FACT]",
    "unlikely": "it is unlikely that [FACT]",
    "very good chance": "there is a very good chance that [FACT]",
    "we believe": "we believe that [FACT]",
    "we doubt": "we doubt that [FACT]",
}
DISTRACTOR_DISTANCE = 40.0  # §3.1: an invalid WEP's median differs from p by at least 40 points
_EPS = 1e-9


def verbalise(wep: str, fact: str) -> str:
    """T_p(FACT) as a sentence: the WEP's template around ``fact`` (its final full stop dropped), capitalised
    and ended with a full stop — "It is likely that John went to the kitchen."."""
    sentence = WEP_TEMPLATES[wep].replace("[FACT]", fact.strip().rstrip("."))
    return sentence[0].upper() + sentence[1:] + "."


def percent(p: float) -> float:
    """A probability on the 0–1 scale as a percentage, rounded to 9 decimals (no float noise at ties)."""
    return round(float(p) * 100.0, 9)


def closest_weps(p: float) -> list[str]:
    """The WEPs whose median is closest to ``p`` (0–1): the valid verbalisations of p (§3.1). Several when
    medians tie (likely/probably/probable at 70) or p lies halfway between two medians (15: 10 and 20)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must lie in [0, 1], not {p}")
    target = percent(p)
    best = min(abs(m - target) for m in WEP_MEDIANS.values())
    return [w for w, m in WEP_MEDIANS.items() if abs(m - target) - best <= _EPS]


def distractor_weps(p: float, distance: float = DISTRACTOR_DISTANCE) -> list[str]:
    """The WEPs whose median differs from ``p`` (0–1) by at least ``distance`` points: the possible invalid
    verbalisations (§3.1). Never empty for p in [0, 1] with the default distance (footnote 2)."""
    target = percent(p)
    return [w for w, m in WEP_MEDIANS.items() if abs(m - target) >= distance - _EPS]


def choose_pair(p: float, rng: random.Random) -> tuple[str, str]:
    """(valid WEP, distractor WEP) for ``p``: each drawn uniformly among its candidates with ``rng``."""
    valid = rng.choice(closest_weps(p))
    distractor = rng.choice(distractor_weps(p))
    return valid, distractor


# A sentence that starts with one of these words is a common-noun phrase or a pronoun: its first letter is
# lowercased inside a template ("A man takes a picture" → "… that a man takes a picture"); any other first
# word (a name, "I", an acronym) keeps its capital.
_LOWER_FIRST = frozenset(
    "a an the this that these those some several many most few all both each every no one two three four five "
    "six seven eight nine ten there it its he she they we you his her their our my your people someone "
    "somebody nobody everyone everybody something nothing men women children kids".split())


def fact_case(sentence: str) -> str:
    """``sentence`` as it reads inside a template: first letter lowercased if its first word is common
    (see ``_LOWER_FIRST``), final full stop dropped."""
    text = " ".join(sentence.split()).rstrip(".")
    match = re.match(r"[A-Za-z]+", text)
    if match and match.group(0).lower() in _LOWER_FIRST and match.group(0) != "I":
        return text[0].lower() + text[1:]
    return text
