"""Admin pages of study definition files: load a definition (with its item files) and download a study's."""
from __future__ import annotations

import io
import zipfile
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse

from .admin_views import _study_for
from .definition.errors import DefinitionError
from .definition.export import ITEMS_FILE, export
from .definition.loader import load_as, uploaded_files
from .definition.template_check import check_isolated


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input (Django's documented recipe)."""

    def __init__(self, *args: Any, **kwargs: Any):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data: Any, initial: Any = None) -> list:
        single = super().clean
        if isinstance(data, (list, tuple)):
            return [single(d, initial) for d in data]
        return [single(data, initial)] if data else []


class LoadDefinitionForm(forms.Form):
    definition = forms.FileField(label="Definition file (study.toml)",
                                 help_text="TOML, UTF-8. Nothing is written unless the whole file and its item files are valid.")
    item_files = MultipleFileField(required=False, label="Item files",
                                   help_text="The CSV or JSONL files the definition names in [design] items.")
    slug = forms.SlugField(required=False, help_text="Load it under this slug instead of the file's [study] slug.")
    new_version = forms.BooleanField(
        required=False, label="Make a new version",
        help_text="Needed when the study already has answers and the file changes its wording or items; "
                  "earlier answers keep the version they were given under.")


def load_definition_view(model_admin: admin.ModelAdmin, request: HttpRequest) -> HttpResponse:
    """Upload a definition (and its item files): a study created or updated, all or nothing."""
    if not (model_admin.has_add_permission(request) and request.user.has_perm("surveys.add_item")):
        raise PermissionDenied
    context: dict[str, Any] = {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
                               "title": "Load a study from its definition file"}
    form = LoadDefinitionForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["definition"]
        files = {f.name: f.read() for f in form.cleaned_data["item_files"]}

        try:
            raw = upload.read()
            check_isolated(raw, upload.name, files, form.cleaned_data["slug"] or None)  # outside this worker
            loaded = load_as(request.user, raw, upload.name, uploaded_files(files),
                             slug=form.cleaned_data["slug"] or None, new_version=form.cleaned_data["new_version"])
        except DefinitionError as exc:
            context.update(problems=exc.problems, filename=upload.name)
        else:
            model_admin.message_user(request, loaded.summary(), messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:surveys_study_change", args=[loaded.study.pk],
                                                current_app=model_admin.admin_site.name))
    context["form"] = form
    return render(request, "admin/surveys/study/load_definition.html", context,
                  status=422 if context.get("problems") else 200)


def download_definition_view(model_admin: admin.ModelAdmin, request: HttpRequest, object_id: str) -> HttpResponse:
    """The study's definition file and its items, zipped (ready for load_study)."""
    study = _study_for(model_admin, request, object_id, change=False)
    text, lines = export(study)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{study.slug}/study.toml", text)
        if lines:
            archive.writestr(f"{study.slug}/{ITEMS_FILE}", lines)
    response = HttpResponse(buffer.getvalue(), content_type="application/zip")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-definition.zip"'
    return response
