"""The registry of report sections (name -> module) and the report's error: no Django and no report import, so
the definition schema (surveys/definition/schema.py) and analysis/versions.py name them without importing the
report package that imports them."""
from __future__ import annotations

SECTIONS: dict[str, str] = {
    "belem": "analysis.reports.belem",
    "tang_rq1": "analysis.reports.tang_rq1",
    "tang_rq2": "analysis.reports.tang_rq2",
    "bahaj": "analysis.reports.bahaj",
    "sileo": "analysis.reports.sileo",
    "generic": "analysis.reports.generic",
}


class ReportError(ValueError):
    """The report cannot be built (yet); the message says why."""
