"""A study's replication package (``manage.py package``, ``GET /api/studies/{slug}/package/``, the admin's button).

Files (``MANIFEST`` lists each with its SHA-256; analysis/replication/layout.py holds these names, the only ones
``reproduce`` accepts):

- ``definition/study.toml``, ``definition/items.jsonl``: the definition as ``export_study`` writes it;
- ``data/item_ids.jsonl``, ``data/versions.jsonl``, ``data/channels.jsonl``, ``data/participants.jsonl`` (salted ids only),
  ``data/human_answers.jsonl``, ``data/unanswered_slots.jsonl``, ``data/runs.jsonl``,
  ``data/model_answers.jsonl``, ``data/prompts.jsonl`` (analysis/replication/rows.py says what each holds);
- ``export/answers.csv`` and ``export/codebook.csv|.json|.md``: the combined export as the ``export`` command
  writes it (salted ids; every item field, the questionnaire, …) and its codebook (analysis/codebook.py), for a
  reader who wants the tidy table rather than the database rows;
- ``report/report.json``, ``report/<table>.csv``, ``report/figures/<name>.png|.svg`` and
  ``report/figures/<name>.json`` (the numbers the figure draws, analysis/replication/figure_numbers.py);
- ``package.json`` (platform version, Python, what was packaged), ``dependencies.txt`` (every installed
  distribution, ``name==version``);
- for a study reported with a reference study (a verifiable set scored against its non-verifiable
  companion): ``reference/<slug>/definition/…`` and ``reference/<slug>/data/…``, the reference study's files as
  above (no report of its own), and ``package.json`` names it (``reference``). A study without one gets no such
  key or folder: its package is what it was before references were packaged.

Deterministic: the report's ``generated_at`` is the time of the newest recorded event (answer, status change,
run) of the study and its reference study, figures are written without a date and with fixed SVG ids, and the
zip's entries are dated 1980-01-01: packaging the same data twice gives the same bytes.
"""
from __future__ import annotations

import importlib.metadata
import io
import json
import platform
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from analysis.replication import rows
from analysis.replication.figure_numbers import figure_numbers
from analysis.replication.layout import DATA_TABLES, EXPORT_FILES, REFERENCE_DIR
from analysis.replication.manifest import zip_bytes

FORMAT = 1
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def dependencies() -> str:
    """Every installed distribution as ``name==version``, one a line, sorted by name (case-insensitive)."""
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if name:
            found.setdefault(name.lower(), f"{name}=={dist.version}")
    return "".join(found[k] + "\n" for k in sorted(found))


def platform_version() -> str:
    try:
        return importlib.metadata.version("hedgelab")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout not installed
        return "unknown"


def data_time(study: Any) -> datetime:
    """The study's newest recorded moment (a person's start, completion or status change, an answer, a run's
    creation or end): the package's report is dated with it, not with the moment of packaging."""
    from django.db.models import Max

    from elicitation.models import ElicitationRun, ModelResponse
    from surveys.models import Participant, Response

    stamps = [*Participant.objects.filter(study=study).aggregate(
                  a=Max("started_at"), b=Max("completed_at"), c=Max("status_changed_at")).values(),
              Response.objects.filter(item__study=study).aggregate(m=Max("created_at"))["m"],
              *ElicitationRun.objects.filter(study=study).aggregate(a=Max("created_at"), b=Max("finished_at")).values(),
              ModelResponse.objects.filter(run__study=study).aggregate(m=Max("answered_at"))["m"],
              study.created_at]
    return max((s for s in stamps if s is not None), default=EPOCH)


def _dated(meta: Any, stamp: str) -> Any:
    """``meta`` with every ``generated_at`` (the report's and its sections') set to ``stamp``."""
    if isinstance(meta, dict):
        return {k: stamp if k == "generated_at" else _dated(v, stamp) for k, v in meta.items()}
    return meta


def figure_bytes(fig: Any) -> tuple[bytes, bytes]:
    """(PNG at 150 dpi, SVG) without a date and with fixed SVG ids: the same figure gives the same bytes."""
    import matplotlib

    png, svg = io.BytesIO(), io.BytesIO()
    with matplotlib.rc_context({"svg.hashsalt": "hedgelab-replication"}):
        fig.savefig(png, format="png", dpi=150, metadata={"Software": None})
        fig.savefig(svg, format="svg", metadata={"Date": None})
    return png.getvalue(), svg.getvalue()


def report_files(report: Any, stamp: str, images: bool = True) -> dict[str, bytes]:
    """What ``manage.py report`` writes (report.json, a CSV per table, every figure as PNG and SVG), under
    ``report/``, plus each figure's numbers (``report/figures/<name>.json``); ``images=False``: the numbers
    without the PNG and SVG files (what a comparison needs)."""
    files: dict[str, bytes] = {}
    names = []
    for name, fig in report.figures():
        if images:
            png, svg = figure_bytes(fig)
            files[f"report/figures/{name}.png"] = png
            files[f"report/figures/{name}.svg"] = svg
        files[f"report/figures/{name}.json"] = dump_json(figure_numbers(fig))
        names.append(name)
    data = report.to_json()
    data["meta"] = _dated(data["meta"], stamp)
    data["meta"]["figures"] = names
    files["report/report.json"] = dump_json(data)
    for name, table in report.tables().items():
        files[f"report/{name}.csv"] = table.to_csv(index=False).encode("utf-8")
    return files


def dump_json(data: Any) -> bytes:
    return json.dumps(data, indent=1, ensure_ascii=False, allow_nan=False, sort_keys=True,
                      default=rows.jsonable).encode("utf-8")


def study_files(study: Any) -> dict[str, bytes]:
    """``study``'s definition (``definition/…``) and data (``data/…``) files."""
    from surveys.definition.export import ITEMS_FILE, export

    toml_text, items_text = export(study)
    files = {"definition/study.toml": toml_text.encode("utf-8")}
    if items_text:
        files[f"definition/{ITEMS_FILE}"] = items_text.encode("utf-8")
    tables = {"item_ids": rows.item_id_rows, "versions": rows.version_rows, "channels": rows.channel_rows, "participants": rows.participant_rows,
              "human_answers": rows.human_answer_rows, "unanswered_slots": rows.unanswered_slot_rows,
              "runs": rows.run_rows, "model_answers": rows.model_answer_rows, "prompts": rows.prompt_rows}
    assert tuple(tables) == DATA_TABLES, "layout.DATA_TABLES lists the tables reproduce accepts"
    for name, read in tables.items():
        files[f"data/{name}.jsonl"] = rows.jsonl(read(study))
    return files


def export_files(study: Any) -> dict[str, bytes]:
    """The combined export (CSV, salted ids, test participants left out) and its codebook, under ``export/``."""
    from analysis.codebook import CODEBOOK_FORMATS, codebook_text
    from analysis.exports import export_study, study_layout

    layout = study_layout(study)
    answers = io.StringIO()
    export_study(study, "csv", answers, layout=layout)
    files = {"export/answers.csv": answers.getvalue().encode("utf-8")}
    for fmt in CODEBOOK_FORMATS:
        files[f"export/codebook.{fmt}"] = codebook_text(study, fmt, layout).encode("utf-8")
    assert set(files) <= set(EXPORT_FILES), "layout.EXPORT_FILES lists the export files reproduce accepts"
    return files


def reference_of(study: Any, user: Any = None) -> Any:
    """The study's reference study (None without one); ReportError when that one has a reference of its own
    (a chain of references is not packaged) or, with a ``user``, when it is not theirs to see (the package holds
    its raw data, not only the report's numbers)."""
    from access.ownership import may
    from analysis.reports import ReportError

    reference = study.reference_study if study.reference_study_id else None
    if reference is not None and user is not None and not may(user, reference):
        raise ReportError(f"study {study.slug!r} is reported with {reference.slug!r}, which belongs to another "
                          "researcher: its data go into the package too, so ask its owner to share it with you")
    if reference is not None and reference.reference_study_id:
        raise ReportError(f"study {study.slug!r} is reported with {reference.slug!r}, which is reported with "
                          f"{reference.reference_study.slug!r} in turn: a package holds one reference study, "
                          "not a chain of them")
    return reference


def package_report(study: Any, pool_versions: bool, as_of: datetime) -> dict[str, bytes]:
    """The package's ``report/`` files (:func:`report_files`, dated ``as_of``) of the study's report as the site
    shows it, made once per version of the data the report reads (analysis/report_cache.py: a new answer, run,
    setting or report code gives a new version) and kept in Django's cache: packaging is deterministic, so a
    second package of the same data (another person's download, the API and the command) takes the same bytes
    instead of drawing every figure again."""
    from django.core.cache import cache

    from analysis.figure_cache import TIMEOUT
    from analysis.report_cache import cached_report, data_version

    stamp = as_of.isoformat(timespec="seconds")
    key = f"hedgelab.package-report.{study.pk}.{data_version(study)}.{stamp}{'.pooled' if pool_versions else ''}"
    files = cache.get(key)
    if files is None:
        report = replace(cached_report(study, pool_versions=pool_versions).seen_by(False), generated_at=as_of)
        files = report_files(report, stamp)
        cache.set(key, files, TIMEOUT)
    return files


def package_files(study: Any, pool_versions: bool = False, user: Any = None) -> dict[str, bytes]:
    """Every file of ``study``'s package but the MANIFEST (with its reference study's under
    ``reference/<slug>/``). ReportError / VersionsError when its report cannot be built (answers of several
    definition versions, unless ``pool_versions``) or its reference study is not ``user``'s to see (no check
    without a user: the site's own commands)."""
    reference = reference_of(study, user)
    files = study_files(study)
    files.update(export_files(study))
    if reference is not None:
        files.update({f"{REFERENCE_DIR}/{reference.slug}/{name}": data
                      for name, data in study_files(reference).items()})
    as_of = max(data_time(s) for s in (study, reference) if s is not None)
    stamp = as_of.isoformat(timespec="seconds")
    files.update(package_report(study, pool_versions, as_of))
    meta = {
        "format": FORMAT, "study": study.slug, "pool_versions": pool_versions, "data_as_of": stamp,
        "platform": {"name": "hedgelab", "version": platform_version()},
        "python": platform.python_version(),
        "respondent_ids": "HMAC-SHA256 of the PROLIFIC_PID keyed with the site's EXPORT_ID_SALT (not included), "
                          "first 16 hex characters",
    }
    if reference is not None:
        meta["reference"] = reference.slug
    files["package.json"] = dump_json(meta)
    files["dependencies.txt"] = dependencies().encode("utf-8")
    return files


def package_zip(study: Any, pool_versions: bool = False, user: Any = None) -> bytes:
    """``study``'s replication package as zip bytes (with its MANIFEST), as :func:`package_files` checks it."""
    return zip_bytes(package_files(study, pool_versions=pool_versions, user=user))
