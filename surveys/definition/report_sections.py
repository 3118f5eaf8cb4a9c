"""The report sections a study file may name in ``[report] sections``: name → the module under analysis/reports/
that builds it (``build(study)``). Names and dotted paths only, as ``Instrument.report_sections`` names them: the
definition schema validates a file against them and analysis/reports/ imports the module, so this layer never
imports the analysis layer above it."""
from __future__ import annotations

SECTIONS: dict[str, str] = {
    "belem": "analysis.reports.belem",
    "tang_rq1": "analysis.reports.tang_rq1",
    "tang_rq2": "analysis.reports.tang_rq2",
    "bahaj": "analysis.reports.bahaj",
    "sileo": "analysis.reports.sileo",
    "generic": "analysis.reports.generic",
}
