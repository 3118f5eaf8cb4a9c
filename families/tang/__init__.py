"""Tang et al.: WEP probabilities in context (RQ1) and WEP choices given numbers (RQ2), in English and Chinese.

The family's package. RQ1: the ``wep_probability`` item kind (wep_probability.py) and its report option
``orientation`` (orientation.py), the context-settings generator (design_rq1.py, its contexts in
rq1_contexts.toml), the KL / Brunner–Munzel metrics (metrics/divergence.py) and the ``tang_rq1`` section
(report_rq1.py, figures_rq1.py). RQ2: the ``wep_choice`` item kind (wep_choice.py), the 360-item generator
(design_rq2.py; the choice sets and ground truth it shares with the metrics in rq2_items.py), the consistency
metrics and the authors' reading (metrics/consistency.py, metrics/reading.py), the ``tang_rq2`` section
(report_rq2.py, figures_rq2.py) and the importer of the authors' ``rq2_result.txt`` files (importer_rq2.py).
The metrics are pure (no Django; .importlinter). The item pages' templates stay in
templates/surveys/items/ (wep_probability.html, wep_choice.html) and the wording in studies/tang-rq1*/ and
studies/tang-rq2/, where the site's templates and shipped definitions are. The core reaches all of it only
through this declaration (the entry point ``tang = families.tang:FAMILY``); it imports nothing heavy.
"""
from __future__ import annotations

from config.registry import Family

FAMILY = Family(
    name="tang",
    order=20,
    summary="Tang et al.: WEPs as probabilities in context settings (RQ1) and chosen given numbers (RQ2)",
    instruments={"wep_probability": "families.tang.wep_probability:WepProbability",
                 "wep_choice": "families.tang.wep_choice:WepChoice"},
    designs={"tang-rq1": "families.tang.designs:RQ1", "tang-rq2": "families.tang.designs:RQ2"},
    readings={"wep_choice.reading": "families.tang.wep_choice:READING",
              "wep_probability.orientation": "families.tang.orientation:ORIENTATION"},
    sections={"tang_rq1": "families.tang.report_rq1", "tang_rq2": "families.tang.report_rq2"},
    importers={"tang-rq2": "families.tang.importer_rq2"},
)
