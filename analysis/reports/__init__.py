"""A study's report: the sections its instrument names (``Instrument.report_sections``), one module each (the
core's here, a family's in its package).

A section module has ``build(study) -> section`` (raising :class:`ReportError` with a readable reason when the
data are not there yet: the report then shows what the study holds, table ``available``, and says what is
missing for that section); a section has ``tables() -> {name: DataFrame}``, ``figures() -> [(stem, Figure)]``,
``meta() -> dict`` and ``titles`` (table name → title on the admin page), and may have ``html_tables()`` for
its own formatting. :class:`Report` puts the sections together and writes ``report.json``, one CSV per table
and every figure as PNG and SVG; the admin page, the ``report`` command and the API all show a Report.

Sections: the core's ``generic`` (any study: each agent's answer distribution beside the humans', per item group
and questionnaire answer; built for every study) and ``metrics`` (the metrics a study file names), and those the
installed families contribute, each in its family's package (config.registry, kind ``sections``; ``manage.py
families`` lists them). A study loaded from a definition file may list its sections (``[report] sections``);
otherwise its kind's are used; ``metrics`` is added when the file names metrics (``[report] metrics``) and
``generic`` always. The report reads answers of one definition version only (analysis/versions.py):
answers from several versions are refused unless ``pool_versions`` is asked for, and then the report says so.
"""
from __future__ import annotations

import base64
import io
import json
import math
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

from analysis.figure_cache import rendered
from analysis.report_sections import ReportError, section_module

#: built for every study, after its family's sections (analysis/reports/generic.py)
ALWAYS = ("generic",)
#: built when the study file names metrics (analysis/reports/metrics.py)
METRICS = "metrics"


AVAILABLE_TITLE = "What the study holds so far (the sections not built yet need more)"


_SHARED: ContextVar[dict | None] = ContextVar("hedgelab_report_shared", default=None)


def shared(key: tuple, compute: Callable[[], Any]) -> Any:
    """``compute()`` once per :func:`build_report` under ``key``: sections that read the same data (a study's
    answers, its attention filter, its runs) share one reading. A DataFrame is handed out as a copy; outside a
    build, ``compute()`` is simply called."""
    memo = _SHARED.get()
    if memo is None:
        return compute()
    if key not in memo:
        memo[key] = compute()
    value = memo[key]
    return value.copy() if type(value).__name__ == "DataFrame" else value


@dataclass
class Report:
    """The sections of one study's report, in the instrument's order (the first is the primary one).

    Attributes the sections share are read from the primary section (e.g. ``report.analysis`` of the 0–100 agreement section).
    """

    study: Any
    sections: dict[str, Any]
    skipped: dict[str, str] = field(default_factory=dict)  # section → why it could not be built yet
    generated_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    cache_key: str | None = None  # set by analysis.report_cache: its figures are rendered once under it
    versions: list[Any] = field(default_factory=list)  # analysis.versions.VersionAnswers of the answers read
    pool_versions: bool = False  # asked to pool answers of several versions

    @property
    def primary(self) -> Any:
        """The first section built (None when none could be built yet)."""
        return next(iter(self.sections.values()), None)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("study", "sections", "skipped", "generated_at", "cache_key", "versions",
                                             "pool_versions"):
            raise AttributeError(name)
        primary = self.primary
        if primary is None:
            raise AttributeError(name)
        return getattr(primary, name)

    def missing(self) -> list[str]:
        """What keeps sections from being built, each reason once (sections often miss the same data)."""
        return list(dict.fromkeys(self.skipped.values()))

    def available(self) -> dict[str, Any]:
        """Table ``available`` (what the study holds so far) when a section could not be built, else none."""
        if not self.skipped:
            return {}
        from .available import available_table

        return {"available": available_table(self.study)}

    def seen_by(self, raw_ids: bool) -> "Report":
        """A copy whose tables name participants by raw PROLIFIC_PID only when ``raw_ids`` (the caller checks
        *view participant*); otherwise by the salted ``respondent_id``. The report itself is never changed: it
        may be shared from the cache."""
        sections = {name: replace(s, raw_ids=raw_ids) if hasattr(s, "raw_ids") else s
                    for name, s in self.sections.items()}
        return replace(self, sections=sections)

    def section(self, name: str) -> Any:
        return self.sections[name]

    def tables(self) -> dict[str, Any]:
        """Every section's tables by name, in order (names are unique across a study's sections)."""
        out: dict[str, Any] = {}
        for section in self.sections.values():
            out.update(section.tables())
        out.update(self.available())
        if "exclusion_flow" in out:  # the report opens with the participant flow (analysis/exclusions.py)
            out = {"exclusion_flow": out.pop("exclusion_flow"), **out}
        return out

    def titles(self) -> dict[str, str]:
        out: dict[str, str] = {"available": AVAILABLE_TITLE}
        for section in self.sections.values():
            out.update(section.titles)
        return out

    def notes(self) -> list[str]:
        """What the reader must know first: pooled versions, and each section's notes (e.g. "no human answers
        yet" of the generic section)."""
        from analysis.versions import versions_meta

        out = []
        if versions_meta(self.versions, self.pool_versions)["pooled_versions"]:
            out.append("answers of several definition versions are pooled (asked for): "
                       + ", ".join(f"{v.study} {v.describe()}" for v in self.versions))
        for name, section in self.sections.items():
            out += [f"{name}: {note}" for note in getattr(section, "notes", [])]
        return out

    def figures(self) -> list[tuple[str, Any]]:
        return [fig for section in self.sections.values() for fig in section.figures()]

    def figure_files(self) -> list[tuple[str, bytes, bytes]]:
        """Every figure as (name, PNG at 150 dpi, SVG): rendered once per cached report (analysis.figure_cache)."""
        return rendered(self, "files", lambda: [(name, *figure_bytes(fig)) for name, fig in self.figures()])

    def figure_uris(self) -> list[dict[str, str]]:
        """Every figure as {"name", "src": a PNG data URI} for the admin page, rendered once per cached report."""
        return rendered(self, "uris", lambda: [{"name": name, "src": png_data_uri(fig)} for name, fig in self.figures()])

    def meta(self) -> dict[str, Any]:
        """The primary section's meta, then each other section's under its name, and the section list."""
        names = list(self.sections)
        meta = dict(self.primary.meta()) if self.primary is not None else {"title": self.study.title}
        for name in names[1:]:
            meta[name] = self.sections[name].meta()
        meta["sections"] = names
        if self.skipped:
            meta["sections_not_built"] = dict(self.skipped)
            meta["missing"] = self.missing()
        if "participation" not in meta:
            from surveys.participation import participation

            meta["participation"] = {self.study.slug: participation(self.study)}
        meta.setdefault("title", self.study.title)
        meta.setdefault("study", self.study.slug)
        meta.setdefault("instrument", self.study.instrument)
        meta.setdefault("generated_at", self.generated_at.isoformat(timespec="seconds"))
        meta["participation"] = participation_by_study(self.study)
        from analysis.versions import versions_meta

        meta.update(versions_meta(self.versions, self.pool_versions))
        meta["notes"] = self.notes()
        return meta

    def summary_text(self) -> str:
        """What the ``report`` command prints: each section's summary (its own, or its first table)."""
        parts = [f"Note: {note}" for note in self.notes()]
        if self.versions:
            parts.append("Answers from: " + "; ".join(f"{v.study} {v.describe()}" for v in self.versions))
        for section in self.sections.values():
            own = getattr(section, "summary_text", None)
            if own is not None:
                parts.append(own())
            elif section.tables():
                parts.append(next(iter(section.tables().values())).round(3).to_string(index=False))
        if self.skipped:
            parts.append("Not built yet:\n" + "\n".join(f"- {name}: {why}" for name, why in self.skipped.items()))
            parts.append(f"{AVAILABLE_TITLE}:\n" + self.available()["available"].to_string(index=False))
        return "\n\n".join(parts)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data: meta plus every table as a list of records (NaN → null)."""
        return {"meta": self.meta(), "tables": {name: records(t) for name, t in self.tables().items()}}

    def html_tables(self) -> list[dict[str, str]]:
        """Each table as {"name", "title", "html"} for the admin page."""
        out = []
        for section in self.sections.values():
            own = getattr(section, "html_tables", None)
            out += own() if own else [{"name": name, "title": section.titles.get(name, name), "html": html_table(t)}
                                      for name, t in section.tables().items()]
        out += [{"name": name, "title": AVAILABLE_TITLE, "html": html_table(t)} for name, t in self.available().items()]
        return out

    def write(self, out_dir: str | Path, figures: bool = True) -> list[Path]:
        """Write report.json, one CSV per table and (``figures``) every figure as PNG and SVG."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        data = self.to_json()
        names: list[str] = []
        if figures:
            for name, png, svg in self.figure_files():
                for path, content in ((out / f"{name}.png", png), (out / f"{name}.svg", svg)):
                    path.write_bytes(content)
                    written.append(path)
                names.append(name)
        data["meta"]["figures"] = names
        path = out / "report.json"
        path.write_text(json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False), encoding="utf-8")
        written.append(path)
        for name, table in self.tables().items():
            path = out / f"{name}.csv"
            table.to_csv(path, index=False)
            written.append(path)
        return written


def participation_by_study(study: Any) -> dict[str, dict[str, Any]]:
    """surveys.participation for the study and its reference study: entered, per status, decline and
    completion rates, test participants and withdrawals (report.json ``meta.participation``)."""
    from surveys.participation import participation

    return {s.slug: participation(s) for s in (study.reference_study, study) if s is not None}


def section_names(study: Any) -> list[str]:
    """The sections of ``study``'s report: its definition's ``[report] sections`` when it lists some, else its
    kind's; then ``metrics`` when it names metrics (``[report] metrics``); then the sections every study gets
    (``generic``)."""
    report = (getattr(study, "definition", None) or {}).get("report") or {}
    listed = [str(n) for n in report.get("sections") or []]
    names = listed or list(study.kind.report_sections)
    metrics = [METRICS] if report.get("metrics") else []
    return list(dict.fromkeys([*names, *metrics, *ALWAYS]))


def build_report(study: Any, pool_versions: bool = False) -> Report:
    """The report of ``study``: every section it names that can be built (:func:`section_names`); the others
    are listed in ``skipped`` with what they miss (a study without people or without model answers still has
    a report). ReportError for a section name that does not exist, and (analysis.versions.VersionsError) for
    answers of several definition versions unless ``pool_versions``."""
    from analysis.versions import check_versions, report_versions

    versions = report_versions(study)
    check_versions(versions, pool_versions)
    sections, skipped = {}, {}
    token = _SHARED.set({})
    try:
        _build_sections(study, sections, skipped)
    finally:
        _SHARED.reset(token)
    return Report(study=study, sections=sections, skipped=skipped, versions=versions, pool_versions=pool_versions)


def _build_sections(study: Any, sections: dict[str, Any], skipped: dict[str, str]) -> None:
    for name in section_names(study):
        module = section_module(name, study.slug)
        try:
            sections[name] = module.build(study)
        except ReportError as exc:
            skipped[name] = str(exc)


# --- helpers shared by the sections -------------------------------------------------------------------
def clean(value: Any) -> Any:
    """A table cell as JSON: numpy scalars as Python numbers, NaN/inf/NA as None."""
    import numpy as np
    import pandas as pd

    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        return None if math.isnan(value) or math.isinf(value) else float(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if value is pd.NA:
        return None
    return value


def records(df: Any) -> list[dict[str, Any]]:
    return [{str(k): clean(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def html_table(table: Any, digits: int = 3) -> str:
    """A table as HTML for the admin page, floats rounded to ``digits``."""
    import pandas as pd

    shown = table.copy()
    for col in shown.columns:
        if pd.api.types.is_float_dtype(shown[col]):
            shown[col] = shown[col].map(lambda x: "" if pd.isna(x) else f"{x:.{digits}f}")
    return shown.to_html(index=False, border=0, classes="report-table", na_rep="", escape=True)


def figure_bytes(fig: Any) -> tuple[bytes, bytes]:
    """(PNG at 150 dpi, SVG) of the figure, as :meth:`Report.write` stores them. The figure modules build plain
    ``Figure`` objects (never pyplot, which is not thread-safe): nothing to close, the figure is freed with its last
    reference."""
    png, svg = io.BytesIO(), io.BytesIO()
    fig.savefig(png, format="png", dpi=150)
    fig.savefig(svg, format="svg")
    return png.getvalue(), svg.getvalue()


def png_data_uri(fig: Any) -> str:
    """The figure as a base64 PNG data URI (for the admin page)."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
