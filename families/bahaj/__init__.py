"""Bahaj et al.: confidence intervals with a stated confidence (overprecision), with hint conditions."""
from __future__ import annotations

from config.registry import Family
from surveys.designs.design import CliOption, Design

FAMILY = Family(
    name="bahaj",
    order=30,
    summary="Bahaj et al.: intervals at a stated confidence level (overprecision), hints",
    instruments={"interval_confidence": "surveys.instruments.interval_confidence:IntervalConfidence"},
    designs={"bahaj-hints": Design(
        "bahaj-hints", "surveys.designs.bahaj_hints", "interval_confidence",
        "Bahaj et al.: every question × level of the study also under the hint conditions hint1, hint3, hint8",
        cli=(CliOption("--hints", "hint conditions, comma-separated (hint1,hint3,hint8; default all three)",
                       case="lower"),))},
    readings={"interval_confidence.reading": "surveys.instruments.bahaj_options:READING",
              "interval_confidence.mixed_intervals": "surveys.instruments.bahaj_options:MIXED_INTERVALS"},
    sections={"bahaj": "analysis.reports.bahaj"},
)
