"""Bahaj et al.: confidence intervals with a stated confidence (overprecision), with hint conditions.

The family's package: its item kind ``interval_confidence`` (instrument.py) and its report options ``reading``
and ``mixed_intervals`` (report_options.py), the authors' protocol as their notebooks ran it (authors.py: their
prompt order, hint draws, rule-based cleaner, refinement replies read as literals; the wording in
studies/bahaj/templates.toml), the ``bahaj-hints`` design (design.py: the hint conditions as items), the pure
metrics (metrics/: overprecision, aggregation, draws; no Django), the ``bahaj`` report section, its reading of
the stored answers and its figures (report.py, reading.py, figures.py), self-refinement (refinement.py: the
prompts of both styles and the reading of the replies; refinement_import.py: the authors' selfrefine records;
refinement_hook.py: the ``Instrument.refinement`` hook through which the core's elicitation/refinement.py asks
them) and the ``demo-overprecision`` demo (demo.py). The item page's template stays in templates/surveys/items/interval_confidence.html and the wording in
studies/bahaj/ and studies/bahaj-authors/, where the site's templates and shipped definitions are; the answers'
text reader the kind uses is the core's (surveys/instruments/interval_text.py). The core reaches all of it only
through this declaration (the entry point ``bahaj = families.bahaj:FAMILY``); it imports nothing heavy.
"""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="bahaj",
    order=30,
    summary="Bahaj et al.: intervals at a stated confidence level (overprecision), hints",
    instruments={"interval_confidence": "families.bahaj.instrument:IntervalConfidence"},
    designs={"bahaj-hints": "families.bahaj.design:DESIGN"},
    readings={"interval_confidence.reading": "families.bahaj.report_options:READING",
              "interval_confidence.mixed_intervals": "families.bahaj.report_options:MIXED_INTERVALS"},
    sections={"bahaj": "families.bahaj.report"},
    demos={"demo-overprecision": "families.bahaj.demo:load_overprecision_demo"},
)
