"""Tang et al.: WEP probabilities in context (RQ1) and WEP choices given numbers (RQ2)."""
from __future__ import annotations

from config.registry import Family
from surveys.designs.design import Design

FAMILY = Family(
    name="tang",
    order=20,
    summary="Tang et al.: WEPs as probabilities in context settings (RQ1) and chosen given numbers (RQ2)",
    instruments={"wep_probability": "surveys.instruments.wep_probability:WepProbability",
                 "wep_choice": "surveys.instruments.wep_choice:WepChoice"},
    designs={d.name: d for d in (
        Design("tang-rq1", "surveys.designs.tang_rq1", "wep_probability",
               "Tang et al. RQ1: the 17 WEPs in context settings CNC/ENC/FCNC/MCNC, English or Chinese"),
        Design("tang-rq2", "surveys.designs.tang_rq2", "wep_choice",
               "Tang et al. RQ2: 360 WEP-choice items (scenario × choices × numbers × confidence × interval)"),
    )},
    readings={"wep_choice.reading": "surveys.instruments.wep_choice:READING",
              "wep_probability.orientation": "surveys.instruments.wep_orientation:ORIENTATION"},
    sections={"tang_rq1": "analysis.reports.tang_rq1", "tang_rq2": "analysis.reports.tang_rq2"},
    importers={"tang-rq2": "analysis.tang_rq2_import"},
)
