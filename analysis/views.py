"""Admin pages of the analysis app (wired in analysis/admin.py): the report, the combined export, the
importers of earlier data and the attention filter. Thin: the work is done in report.py, exports.py,
importers.py and filtering.py."""
from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from analysis.exports import CONTENT_TYPES, FORMATS, export_filename, stream_study
from analysis.figures import png_data_uri, report_figures
from analysis.filtering import FilterError, apply_attention_filter
from analysis.importers import ResponseColumns, import_responses, import_wide
from analysis.report import ReportError, build_report, html_tables
from config.permissions import RAW_IDS, check
from surveys.importers import ImportFailed, read_csv_rows
from surveys.models import Study

CHANGELIST = "admin:analysis_studyanalysis_changelist"


# --- forms ------------------------------------------------------------------------------------
class ImportResponsesForm(forms.Form):
    """A long file of answers and which of its columns holds what."""

    file = forms.FileField(help_text="CSV, UTF-8, with a header row; one row per answer.")
    participant = forms.CharField(label="Participant id column")
    value = forms.CharField(label="Answer column")
    expression = forms.CharField(label="Expression column", required=False,
                                 help_text="'control' for control items. Needed unless the text column "
                                           "identifies the item on its own.")
    statement = forms.CharField(label="Statement id column", required=False)
    text = forms.CharField(label="Text column", required=False,
                           help_text="The item's sentence as shown, or its statement; instead of a statement id.")
    truth = forms.CharField(label="Truth column", required=False,
                            help_text="true/false, where one statement id is shared by a true and a false item.")
    time = forms.CharField(label="Time taken column", required=False)
    time_unit = forms.ChoiceField(choices=[("ms", "milliseconds"), ("s", "seconds")], initial="ms")

    def clean(self):
        data = super().clean()
        if data.get("statement") and data.get("text"):
            raise forms.ValidationError("Give either a statement id column or a text column, not both.")
        if not (data.get("statement") or data.get("text") or data.get("expression")):
            raise forms.ValidationError("Give a statement id, text or expression column to identify the items.")
        return data

    def columns(self) -> ResponseColumns:
        d = self.cleaned_data
        return ResponseColumns(participant=d["participant"].strip(), value=d["value"].strip(),
                               expression=d["expression"].strip() or None, statement=d["statement"].strip() or None,
                               text=d["text"].strip() or None, truth=d["truth"].strip() or None,
                               time=d["time"].strip() or None, time_unit=d["time_unit"])


class ImportWideForm(forms.Form):
    """A wide survey file: one row per respondent, one column per expression."""

    file = forms.FileField(help_text="CSV, UTF-8, with a header row; e.g. the Fagen-Ulmschneider survey.")
    id_column = forms.CharField(label="Respondent id column", required=False,
                                help_text="Leave empty to number the respondents by line.")
    id_prefix = forms.CharField(label="Id prefix", required=False,
                                help_text="Without an id column: ids are this prefix + the line number "
                                          "(default: the file name and a dash).")


def _header(upload) -> list[str]:
    """The header cells of an uploaded CSV (for the error page), or []."""
    try:
        upload.seek(0)
        rows = read_csv_rows(io.BytesIO(upload.read()), [])
        return list(rows[0].keys()) if rows else []
    except (ImportFailed, UnicodeDecodeError, ValueError):
        return []


# --- pages ------------------------------------------------------------------------------------
def report_page(request: HttpRequest, study: Study, admin_context: dict) -> HttpResponse:
    """The report as HTML tables with the figures inline."""
    context = admin_context | {"study": study, "title": f"Report: {study.title}", "formats": FORMATS}
    try:
        report = build_report(study)
    except ReportError as exc:
        return render(request, "analysis/report.html", context | {"problem": str(exc)})
    figures = [{"name": name, "src": png_data_uri(fig)} for name, fig in report_figures(report)]
    return render(request, "analysis/report.html", context | {
        "report": report, "meta": report.meta(), "tables": html_tables(report), "figures": figures,
    })


def report_json(request: HttpRequest, study: Study) -> HttpResponse:
    """The report as JSON (the same as the API's)."""
    try:
        data = build_report(study).to_json()
    except ReportError as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-report.json"'
    return response


def export_download(request: HttpRequest, study: Study, fmt: str) -> HttpResponse:
    """The combined export, streamed; ``?raw_ids=1`` for PROLIFIC_PIDs instead of hashes."""
    if fmt not in FORMATS:
        return HttpResponse(f"unknown format {fmt!r}", status=404, content_type="text/plain")
    raw_ids = request.GET.get("raw_ids") in ("1", "true", "on")
    if raw_ids:
        check(request.user, RAW_IDS)
    response = StreamingHttpResponse(stream_study(study, fmt, raw_ids=raw_ids), content_type=CONTENT_TYPES[fmt])
    name = export_filename(study, fmt)
    if raw_ids:
        name = name.replace("-answers.", "-answers-raw-ids.")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def attention_run(request: HttpRequest, study: Study) -> HttpResponse:
    """POST: run the attention filter and go back to the report."""
    if request.method != "POST":
        return HttpResponse(status=405, headers={"Allow": "POST"})
    try:
        result = apply_attention_filter(study)
    except FilterError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Attention filter: {result.included} of {result.evaluated} completed "
                                  f"participants kept (ρ > {result.threshold:g}); {len(result.excluded)} excluded "
                                  "(kept in the database).")
    return redirect(reverse("admin:analysis_studyanalysis_report", args=[study.pk]))


def _import_page(request: HttpRequest, study: Study, admin_context: dict, form: forms.Form, kind: str, title: str,
                 run: Callable[[forms.Form], Any]) -> HttpResponse:
    """The upload page of one importer: on a valid POST, ``run(form)`` imports (all or nothing); a failure
    shows every problem with its line and column, and the file's header."""
    context = admin_context | {"study": study, "title": title, "form": form, "kind": kind}
    if request.method == "POST" and form.is_valid():
        try:
            summary = run(form)
        except ImportFailed as exc:
            return render(request, "analysis/import.html",
                          context | {"failure": exc, "header": _header(form.cleaned_data["file"])}, status=400)
        messages.success(request, f"{study.slug}: {summary}.")
        return redirect(reverse(CHANGELIST))
    return render(request, "analysis/import.html", context, status=400 if form.errors else 200)


def import_responses_page(request: HttpRequest, study: Study, admin_context: dict) -> HttpResponse:
    """Upload a long file and its column mapping; all or nothing."""
    form = ImportResponsesForm(request.POST or None, request.FILES or None)
    return _import_page(request, study, admin_context, form, "long", f"Import answers into {study.title}",
                        lambda f: import_responses(study, f.cleaned_data["file"], f.columns()))


def import_wide_page(request: HttpRequest, study: Study, admin_context: dict) -> HttpResponse:
    """Upload a wide survey file; all or nothing."""
    form = ImportWideForm(request.POST or None, request.FILES or None)

    def run(f: ImportWideForm) -> Any:
        upload = f.cleaned_data["file"]
        return import_wide(study, upload, id_column=f.cleaned_data["id_column"].strip() or None,
                           id_prefix=f.cleaned_data["id_prefix"] or f"{Path(upload.name).stem}-")

    return _import_page(request, study, admin_context, form, "wide",
                        f"Import a wide survey file into {study.title}", run)
