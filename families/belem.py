"""Belem et al. (speaker belief): the 0–100 agreement report and the Spearman ranking rule."""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="belem",
    order=10,
    summary="Belem et al.: how likely a speaker believes a statement, 0–100 (agreement, attention filter)",
    instruments={"speaker_belief": "surveys.instruments.speaker_belief:SpeakerBelief"},
    sections={"belem": "analysis.reports.belem"},
    exclusion_rules={"belem-ranking": "surveys.definition.exclusion_rules:BELEM_RANKING"},
)
