"""The core's own family (``generic``): declared through the same entry point group as every study family
(pyproject.toml), so that the core looks its own contributions up exactly as a lab's: the generic item kind, the
generic report section and the ``metrics`` section, the metrics a study file may name, and the exclusion rules
any study may declare."""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="generic",
    order=90,  # after the study families: the core kind is offered last, as it always was
    summary="The core: any study's answers beside the models' (generic kind and section), named metrics, "
            "exclusion rules for any study",
    instruments={"generic": "surveys.instruments.generic:GenericInstrument"},
    sections={"generic": "analysis.reports.generic", "metrics": "analysis.reports.metrics"},
    metrics={"answer-count": "analysis.metrics.named:answer_count",
             "mean-value": "analysis.metrics.named:mean_value",
             "majority-choice": "analysis.metrics.named:majority_choice"},
    exclusion_rules={"failed-checks": "surveys.definition.exclusion_rules:FAILED_CHECKS",
                     "too-fast": "surveys.definition.exclusion_rules:TOO_FAST",
                     "straight-lining": "surveys.definition.exclusion_rules:STRAIGHT_LINING",
                     "missing-answers": "surveys.definition.exclusion_rules:MISSING_ANSWERS"},
)
