"""Sileo & Moens: WEP-Reasoning (which verbalisation a probability reasoning leads to).

The family's package: its item kind (instrument.py), the WEP-Reasoning generator (design.py, with its factoids
file), the metrics (metrics.py: pure, no Django), the report section and figures (report.py, figures.py) and the
``demo-sileo`` demo (demo.py). The item page's template stays in templates/surveys/items/verbalisation_choice.html,
where the participant pages' templates are. The core reaches all of it only through this declaration."""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="sileo",
    order=40,
    summary="Sileo & Moens: WEP-Reasoning, verbalisation accuracy",
    instruments={"verbalisation_choice": "families.sileo.instrument:VerbalisationChoice"},
    designs={"wep-reasoning": "families.sileo.design:DESIGN"},
    sections={"sileo": "families.sileo.report"},
    demos={"demo-sileo": "families.sileo.demo:load_verbalisation_demo"},
)
