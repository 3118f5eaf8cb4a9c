"""Belem et al. (speaker belief): the 0–100 agreement report and the Spearman ranking rule.

The family's package: its item kind (instrument.py), the pure metrics of the paper's tables (metrics/: agreement,
knowledge_bias, tables; no Django), the report section and figures (report.py, figures.py; the section also reports
the 0–100 answers of Tang's WEP-probability kind), the demos ``demo`` and ``demo-verifiable`` (demo.py) and the
attention filter: the ``belem-ranking`` exclusion rule (rules.py), its pure metric (metrics/attention.py) and its
Django side (attention.py: the judge and the outcome the core's generic attention filter calls,
analysis/exclusions.py). Tang RQ1's report applies it by name (its kind's ``attention_rule``), never importing this
package. The item page's template stays in templates/surveys/items/speaker_belief.html; the answer bins are the
core's (surveys/answer_bins.py). The core reaches the family only through this declaration."""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="belem",
    order=10,
    summary="Belem et al.: how likely a speaker believes a statement, 0–100 (agreement, attention filter)",
    instruments={"speaker_belief": "families.belem.instrument:SpeakerBelief"},
    sections={"belem": "families.belem.report"},
    exclusion_rules={"belem-ranking": "families.belem.rules:BELEM_RANKING"},
    demos={"demo": "families.belem.demo:load_nonverifiable_demo",
           "demo-verifiable": "families.belem.demo:load_verifiable_demo"},
    datasets={"belem-stimuli": "families.belem.data:STIMULI"},
)
