"""The combined export's codebook (data dictionary): one entry per column of a study's export, in the export's
order, with its type, source, meaning and allowed values — what Qualtrics' and REDCap's data dictionaries give.

An entry is the column's :class:`~analysis.export_columns.Column` (fixed columns: analysis/export_columns.BASE;
the others: their provider's), with the values a study gives the fixed ones filled in here: the answer columns
from the study's answer shape (a scale's range, step and labels; a choice's options; an interval; free text; a
column the shape does not fill says so), the kind, the recruitment channels, the model modes, the definition
versions. Formats: CSV (``column,type,source,meaning,values``), JSON (a list of objects, with ``labels`` as
``[{"value", "label"}]`` pairs) and Markdown (a table), written beside the export by the ``export`` command, served
by the admin and the API, and put in the replication package.
"""
from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from typing import Any

from analysis.answer_values import answer_entries as _answer_entries
from analysis.export_columns import Column
from analysis.export_formats import CODEBOOK_CONTENT_TYPES, CODEBOOK_FORMATS, codebook_filename  # noqa: F401

HEADER = ("column", "type", "source", "meaning", "values")


def _study_values(study) -> dict[str, str]:
    """The values a study gives the fixed columns that are not answers."""
    from elicitation.choices import Mode
    from surveys.models import PROLIFIC_CHANNEL, Participant

    channels = [PROLIFIC_CHANNEL, *study.channels.order_by("name").values_list("name", flat=True)]
    versions = list(study.versions.order_by("number").values_list("number", flat=True))
    return {
        "study": study.slug,
        "kind": study.instrument,
        "participant_status": " | ".join(s.value for s in Participant.Status) + " (empty for models)",
        "mode": " | ".join(m.value for m in Mode) + " (empty for people)",
        "channel": " | ".join(channels) + " (empty for models)",
        "study_version": (" | ".join(map(str, versions)) if versions else "empty (no versions)"),
        "respondent_type": "human | test (only with include_test) | model",
        "is_control": "true | false",
        "included": "true | false | empty (models; people the filter has not decided)",
    }


def codebook(study, layout: Any = None) -> list[Column]:
    """Every column of ``study``'s export (``layout``: its :func:`analysis.exports.study_layout`), in order, with
    the values this study gives them."""
    from analysis.exports import study_layout

    layout = layout or study_layout(study)
    answers = _answer_entries(study)
    values = _study_values(study)
    out = []
    for column in layout.entries:
        if column.name in answers and column.source == "answer":
            text, labels = answers[column.name]
            column = replace(column, values=text, labels=labels)
        elif column.name in values and not column.labels and column.source != "questionnaire":
            column = replace(column, values=values[column.name])
        out.append(column)
    return out


def entry(column: Column) -> dict[str, Any]:
    """One codebook entry as a JSON object."""
    return {"column": column.name, "type": column.type_name, "source": column.source, "meaning": column.meaning,
            "values": column.values, "labels": [{"value": v, "label": t} for v, t in column.labels]}


def codebook_json(columns: list[Column]) -> str:
    return json.dumps([entry(c) for c in columns], indent=1, ensure_ascii=False) + "\n"


def codebook_csv(columns: list[Column]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(HEADER)
    for c in columns:
        writer.writerow((c.name, c.type_name, c.source, c.meaning, c.values))
    return buffer.getvalue()


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def codebook_markdown(columns: list[Column], title: str = "") -> str:
    lines = [f"# Codebook: {title}", ""] if title else []
    lines += ["| column | type | source | meaning | values |", "|---|---|---|---|---|"]
    lines += [f"| `{_md(c.name)}` | {c.type_name} | {c.source} | {_md(c.meaning)} | {_md(c.values)} |"
              for c in columns]
    return "\n".join(lines) + "\n"


def codebook_text(study, fmt: str, layout: Any = None) -> str:
    """``study``'s codebook in ``fmt`` (csv, json or md); ValueError for another format."""
    if fmt not in CODEBOOK_FORMATS:
        raise ValueError(f"a codebook's format is one of {', '.join(CODEBOOK_FORMATS)}, not {fmt!r}")
    columns = codebook(study, layout)
    if fmt == "csv":
        return codebook_csv(columns)
    if fmt == "json":
        return codebook_json(columns)
    return codebook_markdown(columns, study.title or study.slug)
