"""Sileo & Moens: WEP-Reasoning (which verbalisation a probability reasoning leads to)."""
from __future__ import annotations

from config.registry import Family
from surveys.designs.design import Design

FAMILY = Family(
    name="sileo",
    order=40,
    summary="Sileo & Moens: WEP-Reasoning, verbalisation accuracy",
    instruments={"verbalisation_choice": "surveys.instruments.verbalisation_choice:VerbalisationChoice"},
    designs={"wep-reasoning": Design(
        "wep-reasoning", "surveys.designs.wep_reasoning", "verbalisation_choice",
        "Sileo & Moens: WEP-Reasoning items, 1 or 2 hops, exact probabilities with ProbLog")},
    sections={"sileo": "analysis.reports.sileo"},
)
