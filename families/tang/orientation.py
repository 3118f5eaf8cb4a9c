"""Which sample is X in a Tang et al. RQ1 comparison: the ``wep_probability`` report option ``orientation``.

KL divergence D(X‖Y) is not symmetric, and θ̂ = P(X>Y) + ½P(X=Y), the signed median difference and the
Mann–Whitney U change with the order, so a comparison must say which sample is X. By default (``""``) X is
people in the human-vs-model table and the first sample in sort order in a model-vs-model one. The option names
the orientation of chosen comparisons as rules ``A vs B`` separated by ``;`` — "in a comparison of a sample
matching A with one matching B, X is the first" — e.g. the authors' own (Tang et al.'s analysis/rq1 tables:
their first-named sample is X, except "Chinese v.s. English", where X is English)::

    MCNC vs FCNC; MCNC vs CNC; en vs zh; gpt vs ernie; ernie vs people

A term matches a sample by its context setting (``CNC``, ``ENC``, ``FCNC``, ``MCNC``: the whole name), its
language (``en``, ``zh``), ``people`` (the human sample, which no other term matches), or else as part of the
agent's name (``gpt`` matches
``gpt-4 (greedy)``); case is ignored. A rule orients a pair when one sample matches A and not B and the other
B and not A; the first rule that does wins; a pair no rule orients keeps the default.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from surveys.report_options import ReportOption

SETTINGS = ("cnc", "enc", "fcnc", "mcnc")
LANGUAGES = ("en", "zh")
PEOPLE = ("people", "human", "humans")
AUTHORS = "MCNC vs FCNC; MCNC vs CNC; en vs zh; gpt vs ernie; ernie vs people"


@dataclass(frozen=True)
class Sample:
    """One side of a comparison: a model agent in a context setting and language, or people."""

    agent: str          # "" for people
    context: str = ""
    language: str = ""

    @property
    def people(self) -> bool:
        return not self.agent


def rules(value: str) -> list[tuple[str, str]]:
    """The (A, B) rules of an option value (lower-cased); ValueError naming a rule that is not ``A vs B``."""
    out = []
    for text in (value or "").split(";"):
        if not text.strip():
            continue
        parts = [p.strip().lower() for p in text.lower().split(" vs ")]
        if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
            raise ValueError(f"{text.strip()!r} is not a rule 'A vs B' (two different terms, e.g. 'en vs zh')")
        out.append((parts[0], parts[1]))
    return out


def problems(value: Any) -> list[str]:
    """What is wrong with an ``orientation`` value (report option check)."""
    if not isinstance(value, str):
        return [f"write rules 'A vs B; C vs D' as text, not {type(value).__name__}"]
    try:
        rules(value)
    except ValueError as exc:
        return [str(exc)]
    return []


def matches(term: str, sample: Sample) -> bool:
    """Whether ``term`` names ``sample`` (module docstring)."""
    if sample.people or term in PEOPLE:  # people match only "people", never a setting or language
        return sample.people and term in PEOPLE
    if term in SETTINGS:
        return sample.context.lower() == term
    if term in LANGUAGES:
        return (sample.language or "en").lower() == term
    return term in sample.agent.lower()


def first_is_x(a: Sample, b: Sample, value: str) -> bool | None:
    """True when the rules make ``a`` X against ``b``, False when they make ``b`` X, None when none orients them."""
    for left, right in rules(value):
        if matches(left, a) and not matches(right, a) and matches(right, b) and not matches(left, b):
            return True
        if matches(left, b) and not matches(right, b) and matches(right, a) and not matches(left, a):
            return False
    return None


ORIENTATION = ReportOption(
    "orientation",
    {"": "X is people in the human-vs-model table and the first sample in sort order in a model-vs-model one"},
    help=("Which sample is X in a Tang RQ1 comparison (KL D(X‖Y), θ̂ = P(X>Y) + ½P(X=Y)): rules 'A vs B' separated "
          "by ';', each making the sample matching A X against one matching B; a term is a context setting (CNC, "
          f"ENC, FCNC, MCNC), a language (en, zh), 'people', or part of an agent's name. The authors': {AUTHORS}"),
    check=problems)
