"""The report's error, and the report sections by name: no Django and no report import, so the definition schema
(surveys/definition/schema.py) and analysis/versions.py name them without importing the report package.

The installed families contribute the sections (config.registry, kind ``sections``: a module with
``build(study) -> section``, analysis/reports/__init__.py).
"""
from __future__ import annotations

from types import ModuleType

from config import registry


class ReportError(ValueError):
    """The report cannot be built (yet); the message says why."""


def section_module(name: str, study_slug: str) -> ModuleType:
    """The module of report section ``name``; ReportError naming the known ones when no family contributes it."""
    known = registry.names("sections")
    if name not in known:
        raise ReportError(f"study {study_slug!r} names an unknown report section {name!r} (known: "
                          f"{', '.join(known)})")
    return registry.get("sections", name)
