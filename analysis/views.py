"""Admin pages of the analysis app (wired in analysis/admin.py): the report, the combined export, the
importers of earlier data and the attention filter. Thin: the work is done in reports/, exports.py,
surveys/answer_import.py and filtering.py."""
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
from analysis.report_cache import asked, cached_report
from analysis.reports import ReportError
from analysis.versions import VersionsError
from surveys.answer_import import ResponseColumns, import_responses, import_wide
from analysis.model_answer_import import MATCH_FIELDS, ModelAnswerFile, import_model_answers, parse_assignments
from surveys.participation import participation, summary_line
from access.ownership import may_see_reference
from config.permissions import RAW_IDS, can_see_raw_ids, check
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
    question = forms.CharField(label="Question column", required=False,
                               help_text="The key of the question each answer gives: needed when the study asks "
                                         "several questions per item, left empty otherwise.")

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
                               time=d["time"].strip() or None, time_unit=d["time_unit"],
                               question=d["question"].strip() or None)


class ImportWideForm(forms.Form):
    """A wide survey file: one row per respondent, one column per expression."""

    file = forms.FileField(help_text="CSV, UTF-8, with a header row; e.g. the Fagen-Ulmschneider survey.")
    id_column = forms.CharField(label="Respondent id column", required=False,
                                help_text="Leave empty to number the respondents by line.")
    id_prefix = forms.CharField(label="Id prefix", required=False,
                                help_text="Without an id column: ids are this prefix + the line number "
                                          "(default: the file name and a dash).")


class ImportModelAnswersForm(forms.Form):
    """A file of model answers produced elsewhere, what run they become and how to read the file."""

    file = forms.FileField(help_text="CSV or JSON Lines (.jsonl), UTF-8.")
    model = forms.CharField(label="Model name", max_length=200,
                            help_text="The agent in the report is “name (mode)”; not the name of a live endpoint.")
    mode = forms.ChoiceField(choices=[("greedy", "greedy (temperature 0)"), ("sampled", "sampled")], initial="greedy")
    temperature = forms.FloatField(required=False, help_text="Sampled answers: their temperature.")
    prompt_style = forms.CharField(initial="standard", help_text="One of the instrument's prompt styles.")
    zero_shot = forms.BooleanField(required=False, label="Zero-shot", help_text="Answered without demonstrations.")
    shape = forms.ChoiceField(choices=[("long", "long: one row per answer"),
                                       ("wide", "wide: one row per WEP, one column per context or sample")],
                              initial="long")
    answer_column = forms.CharField(initial="answer", label="Answer column", help_text="Long files.")
    key_column = forms.CharField(required=False, label="Item key column", help_text="Long files.")
    fields = forms.CharField(required=False, label="Item field columns",
                             help_text=f"Long files: FIELD=COLUMN, comma-separated (fields: {', '.join(MATCH_FIELDS)}). "
                                       "Empty: the columns named like the fields.")
    fixed = forms.CharField(required=False, label="Fixed item fields",
                            help_text="FIELD=VALUE for every row, comma-separated, e.g. context=CNC, language=en.")
    aliases = forms.CharField(required=False, label="Expression aliases",
                              help_text="WRITTEN=EXPRESSION, comma-separated, e.g. almost certainly=almost certain.")
    sample_column = forms.CharField(required=False, help_text="Long files; empty: repeated answers numbered 0, 1, 2 …")
    question_column = forms.CharField(required=False, help_text="Long files: the key of the question each answer "
                                                                "gives (needed when the study asks several).")
    wep_column = forms.CharField(required=False, label="WEP column", help_text="Wide files; empty: the first.")
    columns = forms.CharField(initial="auto", label="Answer columns are",
                              help_text="Wide files: auto, samples, position, or an item field their headers hold.")
    scale = forms.ChoiceField(choices=[("auto", "detect (0–1 when every number is within 0–1)"),
                                       ("1", "probabilities 0–1 (× 100)"), ("100", "as written (0–100)")],
                              initial="auto")
    keep_missing = forms.BooleanField(required=False, help_text="Keep empty/NA cells as unparseable answers.")

    def clean(self):
        data = super().clean()
        try:
            data["fields_map"] = parse_assignments(_pairs(data.get("fields", "")), "field")
            data["fixed_map"] = parse_assignments(_pairs(data.get("fixed", "")), "fixed field")
            data["alias_map"] = parse_assignments(_pairs(data.get("aliases", "")), "alias", check_fields=False)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None
        if data.get("key_column", "").strip():
            if data["fields_map"]:
                raise forms.ValidationError("Give either an item key column or item field columns, not both.")
            data["fields_map"] = {"key": data["key_column"].strip()}
        return data

    def settings(self) -> ModelAnswerFile:
        d = self.cleaned_data
        return ModelAnswerFile(
            model=d["model"].strip(), shape=d["shape"], answer=d["answer_column"].strip(), fields=d["fields_map"],
            fixed=d["fixed_map"], sample=d["sample_column"].strip() or None, wep=d["wep_column"].strip() or None,
            question=d["question_column"].strip() or None,
            columns=d["columns"].strip() or "auto", scale=d["scale"], keep_missing=d["keep_missing"], mode=d["mode"],
            temperature=d["temperature"], prompt_style=d["prompt_style"].strip(), few_shot=not d["zero_shot"],
            aliases=d["alias_map"])


def _pairs(text: str) -> list[str]:
    return [p.strip() for p in (text or "").split(",") if p.strip()]


def _header(upload) -> list[str]:
    """The header cells of an uploaded CSV (for the error page), or []."""
    if str(getattr(upload, "name", "")).lower().endswith((".jsonl", ".ndjson")):
        return []
    try:
        upload.seek(0)
        rows = read_csv_rows(io.BytesIO(upload.read()), [])
        return list(rows[0].keys()) if rows else []
    except (ImportFailed, UnicodeDecodeError, ValueError):
        return []


def _raw_ids(request: HttpRequest, study: Study) -> bool:
    """Raw PROLIFIC_PIDs in the report: *view participant*, and the reference study (whose participants the
    report shows too) is the user's to see."""
    return can_see_raw_ids(request.user) and may_see_reference(study, request.user)


# --- pages ------------------------------------------------------------------------------------
def report_page(request: HttpRequest, study: Study, admin_context: dict) -> HttpResponse:
    """The report as HTML tables with the figures inline."""
    context = admin_context | {"study": study, "title": f"Report: {study.title}", "formats": FORMATS,
                               "participation_lines": {s.slug: summary_line(participation(s))
                                                       for s in (study.reference_study, study) if s is not None}}
    pool = asked(request.GET.get("pool_versions"))
    context["pool_versions"] = pool
    try:
        report = cached_report(study, pool_versions=pool).seen_by(_raw_ids(request, study))
    except ReportError as exc:
        return render(request, "analysis/report.html", context | {"problem": str(exc),
                                                                  "versions_refused": isinstance(exc, VersionsError)})
    figures = report.figure_uris()
    return render(request, "analysis/report.html", context | {
        "report": report, "meta": report.meta(), "tables": report.html_tables(), "figures": figures,
    })


def report_json(request: HttpRequest, study: Study) -> HttpResponse:
    """The report as JSON (the same as the API's)."""
    try:
        pool = asked(request.GET.get("pool_versions"))
        data = cached_report(study, pool_versions=pool).seen_by(_raw_ids(request, study)).to_json()
    except ReportError as exc:
        return JsonResponse({"detail": str(exc)}, status=409)
    response = JsonResponse(data, json_dumps_params={"ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-report.json"'
    return response


def export_download(request: HttpRequest, study: Study, fmt: str) -> HttpResponse:
    """The combined export, streamed; ``?raw_ids=1`` for PROLIFIC_PIDs instead of hashes, ``?include_test=1``
    for test participants too."""
    if fmt not in FORMATS:
        return HttpResponse(f"unknown format {fmt!r}", status=404, content_type="text/plain")
    raw_ids = request.GET.get("raw_ids") in ("1", "true", "on")
    if raw_ids:
        check(request.user, RAW_IDS)
    include_test = request.GET.get("include_test") in ("1", "true", "on")
    response = StreamingHttpResponse(stream_study(study, fmt, raw_ids=raw_ids, include_test=include_test),
                                     content_type=CONTENT_TYPES[fmt])
    name = export_filename(study, fmt)
    if raw_ids:
        name = name.replace("-answers.", "-answers-raw-ids.")
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


def codebook_download(request: HttpRequest, study: Study, fmt: str) -> HttpResponse:
    """The export's codebook (analysis/codebook.py) as CSV, JSON or Markdown."""
    from analysis.codebook import CODEBOOK_CONTENT_TYPES, CODEBOOK_FORMATS, codebook_filename, codebook_text

    if fmt not in CODEBOOK_FORMATS:
        return HttpResponse(f"unknown format {fmt!r}", status=404, content_type="text/plain")
    response = HttpResponse(codebook_text(study, fmt), content_type=CODEBOOK_CONTENT_TYPES[fmt])
    response["Content-Disposition"] = f'attachment; filename="{codebook_filename(study, fmt)}"'
    return response


def package_download(request: HttpRequest, study: Study) -> HttpResponse:
    """The study's replication package (analysis/replication/package.py); when its report cannot be built, back
    to the study's page with the reason."""
    from analysis.export_formats import package_filename
    from analysis.replication.package import package_zip

    try:
        data = package_zip(study, pool_versions=asked(request.GET.get("pool_versions")), user=request.user)
    except (ReportError, VersionsError) as exc:
        messages.error(request, f"No replication package: {exc}")
        return redirect("admin:surveys_study_change", study.pk)
    response = HttpResponse(data, content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{package_filename(study)}"'
    return response


def attention_run(request: HttpRequest, study: Study) -> HttpResponse:
    """POST: apply the study's exclusion rules (analysis/exclusions.py), store the decisions, back to the report."""
    from analysis.exclusion_report import summary
    from analysis.exclusions import ExclusionError, apply_exclusions

    if request.method != "POST":
        return HttpResponse(status=405, headers={"Allow": "POST"})
    try:
        result = apply_exclusions(study)
    except ExclusionError as exc:
        messages.error(request, str(exc))
    else:
        # "Study …": the admin capitalises a message's first letter, which would misspell a slug that opens it
        rules = "".join(f"; {r.label}: {len(r.excluded)} excluded" for r in result.rules)
        messages.success(request, f"Study {summary(result)}{rules}.")
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


def import_model_answers_page(request: HttpRequest, study: Study, admin_context: dict) -> HttpResponse:
    """Upload model answers produced elsewhere; they become an imported run. All or nothing."""
    form = ImportModelAnswersForm(request.POST or None, request.FILES or None)
    return _import_page(request, study, admin_context, form, "model", f"Import model answers into {study.title}",
                        lambda f: import_model_answers(study, f.cleaned_data["file"], f.settings()))
