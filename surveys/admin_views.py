"""Custom admin pages for studies (import items, raw responses CSV) and the guard that turns a
refused deletion (PROTECT) into a clear message instead of a server error."""
from __future__ import annotations

import operator
from functools import reduce
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.actions import delete_selected
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db import models
from django.db.models import ProtectedError, Q, RestrictedError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.template.defaultfilters import pluralize
from django.urls import reverse

from config.permissions import RAW_IDS, check

from .importers import MAX_REPORTED_ERRORS, ImportFailed, import_items
from .item_template import item_template, template_columns, template_filename
from .models import Study
from .raw_export import raw_responses_response
from .test_mode import pilot_link


# --- deletion guard -------------------------------------------------------------------------------
def protected_counts(obj: models.Model, depth: int = 3) -> list[tuple[str, int]]:
    """What keeps ``obj`` from being deleted: (name, count) of the rows that refer to it, or to rows its
    deletion would cascade to, with on_delete=PROTECT or RESTRICT. Direct references come first."""
    found: dict[type[models.Model], list[Q]] = {}

    def walk(model: type[models.Model], queryset: models.QuerySet, level: int) -> None:
        cascades = []
        for rel in model._meta.related_objects:
            if rel.many_to_many or not hasattr(rel, "on_delete"):
                continue
            condition = Q(**{f"{rel.field.name}__in": queryset})
            if rel.on_delete in (models.PROTECT, models.RESTRICT):
                found.setdefault(rel.related_model, []).append(condition)
            elif rel.on_delete is models.CASCADE and level < depth:
                cascades.append((rel.related_model, rel.related_model._base_manager.filter(condition).values("pk")))
        for related_model, related in cascades:
            walk(related_model, related, level + 1)

    walk(type(obj), type(obj)._base_manager.filter(pk=obj.pk).values("pk"), 0)
    counts = []
    for model, conditions in found.items():
        count = model._base_manager.filter(reduce(operator.or_, conditions)).count()
        if count:
            name = model._meta.verbose_name if count == 1 else model._meta.verbose_name_plural
            counts.append((str(name), count))
    return counts


def refusal_message(obj: models.Model, counts: list[tuple[str, int]], advice: str = "") -> str:
    held = ", ".join(f"{count} {name}" for name, count in counts)
    return (f"“{obj}” was not deleted because collected data depend on it ({held}); "
            f"collected data are never deleted. {advice}").strip()


class ProtectedDeleteMixin:
    """ModelAdmin mixin: deleting something that collected data depends on is refused with a message."""

    delete_advice = ""

    def delete_view(self, request: HttpRequest, object_id: str, extra_context: dict | None = None) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        if obj is not None and self.has_delete_permission(request, obj):
            counts = protected_counts(obj)
            if counts:
                return self._refuse(request, obj, counts)
        try:
            return super().delete_view(request, object_id, extra_context)
        except (ProtectedError, RestrictedError):  # data arrived between the check and the delete
            return self._refuse(request, obj, protected_counts(obj) or [("rows", 1)])

    def _refuse(self, request: HttpRequest, obj: models.Model, counts: list[tuple[str, int]]) -> HttpResponse:
        self.message_user(request, refusal_message(obj, counts, self.delete_advice), messages.ERROR)
        opts = self.model._meta
        url = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk],
                      current_app=self.admin_site.name)
        return HttpResponseRedirect(url)

    def get_actions(self, request: HttpRequest) -> dict[str, Any]:
        actions = super().get_actions(request)
        if "delete_selected" in actions:
            _, name, description = actions["delete_selected"]
            actions["delete_selected"] = (guarded_delete_selected, name, description)
        return actions


def guarded_delete_selected(modeladmin, request: HttpRequest, queryset: models.QuerySet):
    """Django's bulk delete, refused as a whole (with the reasons) if collected data depend on any row."""
    blocked = [(obj, counts) for obj in queryset if (counts := protected_counts(obj))]
    if blocked:
        for obj, counts in blocked[:10]:
            modeladmin.message_user(request, refusal_message(obj, counts), messages.ERROR)
        modeladmin.message_user(request, f"Nothing was deleted ({len(blocked)} of the {queryset.count()} selected "
                                         f"could not be). {modeladmin.delete_advice}".strip(), messages.ERROR)
        return None
    try:
        return delete_selected(modeladmin, request, queryset)
    except (ProtectedError, RestrictedError):
        modeladmin.message_user(request, "Nothing was deleted: data arrived that depend on the selection.",
                                messages.ERROR)
        return None


guarded_delete_selected.allowed_permissions = ("delete",)


# --- study pages ----------------------------------------------------------------------------------
class ImportItemsForm(forms.Form):
    file = forms.FileField(
        label="CSV file",
        help_text="UTF-8 CSV with a header row. Nothing is imported unless every row is valid.",
    )


def _study_for(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str, change: bool) -> Study:
    study = get_object_or_404(Study, pk=unquote(object_id))
    allowed = (model_admin.has_change_permission(request, study) if change
               else model_admin.has_view_permission(request, study))
    if not allowed:
        raise PermissionDenied
    return study


def import_items_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """Upload a CSV of items into a study: all rows or none; errors listed by line and column."""
    study = _study_for(model_admin, request, object_id, change=True)
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta,
        "study": study,
        "original": study,
        "title": f"Import items into {study.title}",
        "columns": study.kind.import_columns,
        "optional_columns": template_columns(study.kind)[len(study.kind.import_columns):],
        "item_count": study.main_items().count(),
        "participant_count": study.participants.count(),
        "max_errors": MAX_REPORTED_ERRORS,
    }
    if request.method == "POST":
        form = ImportItemsForm(request.POST, request.FILES)
        if form.is_valid():
            upload = form.cleaned_data["file"]
            try:
                result = import_items(study, upload)
            except ImportFailed as exc:
                context.update(failure=exc, errors=exc.errors[:200], filename=upload.name)
            else:
                breakdown = f" ({result.breakdown()})" if result.breakdown() else ""
                demos = (f"; added the instrument's {result.demonstrations_added} default demonstrations"
                         if result.demonstrations_added else "")
                model_admin.message_user(
                    request,
                    f"Imported {result.created} item{pluralize(result.created)} from {upload.name} into "
                    f"{study.slug}{breakdown}{demos}.",
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(reverse("admin:surveys_study_change", args=[study.pk],
                                                    current_app=model_admin.admin_site.name))
    else:
        form = ImportItemsForm()
    context["form"] = form
    return render(request, "admin/surveys/study/import_items.html", context,
                  status=422 if context.get("failure") else 200)


def item_template_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """The template CSV of the study's kind (surveys.item_template), as a download."""
    study = _study_for(model_admin, request, object_id, change=False)
    response = HttpResponse(item_template(study.instrument), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{template_filename(study.instrument)}"'
    return response


def raw_responses_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """The study's raw human responses as a streamed CSV download."""
    study = _study_for(model_admin, request, object_id, change=False)
    check(request.user, "surveys.view_response", RAW_IDS)  # the file holds raw PROLIFIC_PIDs
    if request.method != "GET":
        raise Http404
    return raw_responses_response(study)


def test_participant_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """Redirect to a fresh test-participant link of the study (surveys.test_mode): take it yourself, live."""
    study = _study_for(model_admin, request, object_id, change=False)
    return HttpResponseRedirect(pilot_link("", study))


# --- removing participants' data ------------------------------------------------------------------
REMOVALS = {
    "withdraw": ("Withdraw participants at their request",
                 "Their answers, their item slots and their participant rows are deleted for good; an audit record "
                 "keeps the hashed PROLIFIC_PID, who did it, when, and how many answers. They cannot enter the "
                 "study again. Reports and exports made from now on no longer contain them."),
    "remove_test": ("Remove test participants",
                    "The test participants and their answers are deleted; each removal is recorded."),
}


def confirm_removal(model_admin: admin.ModelAdmin, request: HttpRequest, queryset: models.QuerySet,
                    action: str) -> HttpResponse | None:
    """The admin actions that delete participants' data: a confirmation page first, then the audited removal
    (surveys.withdrawal). Returns None (back to the list) once done or refused."""
    from .withdrawal import WithdrawalError, preview, remove_test_participants, withdraw_participants

    who = request.user.get_username()
    if request.POST.get("confirm") == "yes":
        try:
            if action == "withdraw":
                records = withdraw_participants(queryset, by=who, note=request.POST.get("note", "").strip())
            else:
                records = remove_test_participants(queryset, by=who)
        except WithdrawalError as exc:
            model_admin.message_user(request, str(exc), messages.ERROR)
            return None
        answers = sum(r.responses_deleted for r in records)
        model_admin.message_user(request, f"{len(records)} participant(s) removed with {answers} answers; "
                                          "see Withdrawals for the audit records.", messages.SUCCESS)
        return None
    if action == "remove_test" and queryset.filter(is_test=False).exists():
        model_admin.message_user(request, "Only test participants can be removed this way; the selection holds "
                                          "real participants. Use “Withdraw” for a participant's request.",
                                 messages.ERROR)
        return None
    title, explanation = REMOVALS[action]
    return render(request, "admin/surveys/participant/confirm_removal.html", {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.model._meta, "title": title, "explanation": explanation, "action": action,
        "rows": [preview(p) for p in queryset.select_related("study")], "with_note": action == "withdraw",
        "action_checkbox_name": ACTION_CHECKBOX_NAME,
    })
