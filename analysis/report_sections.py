"""The report's error: no Django and no report import, so that analysis/versions.py and the sections raise it
without importing the report package that imports them. The sections by name: surveys/definition/report_sections.py."""
from __future__ import annotations


class ReportError(ValueError):
    """The report cannot be built (yet); the message says why."""
