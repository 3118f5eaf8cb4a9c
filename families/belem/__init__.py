"""Belem et al. (speaker belief): the 0–100 agreement report and the Spearman ranking rule.

The family's package: its item kind (instrument.py), the pure metrics of the paper's tables (metrics/: agreement,
knowledge_bias, tables; no Django), the report section and figures (report.py, figures.py; the section also reports
the 0–100 answers of Tang's WEP-probability kind) and the demos ``demo`` and ``demo-verifiable`` (demo.py). The
item page's template stays in templates/surveys/items/speaker_belief.html. Shared with the core and left there: the
attention filter (analysis/metrics/belem_attention.py, analysis/filtering.py), which the ``belem-ranking`` exclusion
rule (surveys/definition/exclusion_rules.py, judged in analysis/exclusions.py) and Tang RQ1's report also apply,
and the answer bins (surveys/answer_bins.py). The core reaches the rest only through this declaration."""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="belem",
    order=10,
    summary="Belem et al.: how likely a speaker believes a statement, 0–100 (agreement, attention filter)",
    instruments={"speaker_belief": "families.belem.instrument:SpeakerBelief"},
    sections={"belem": "families.belem.report"},
    exclusion_rules={"belem-ranking": "surveys.definition.exclusion_rules:BELEM_RANKING"},
    demos={"demo": "families.belem.demo:load_nonverifiable_demo",
           "demo-verifiable": "families.belem.demo:load_verifiable_demo"},
)
