"""Admin: "Analysis › Study reports" lists the studies with links to their report, the combined export,
the importers of earlier data; the attention filter runs from the report page."""
from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404
from django.urls import path, reverse
from django.utils.html import format_html_join
from django.utils.safestring import mark_safe

from access.owned_admin import OwnedAdminMixin
from access.ownership import visible
from config.permissions import check
from surveys.models import Participant

from .models import StudyAnalysis


def _view(name: str):
    """``analysis.views.<name>``, imported on the first request: the views pull in pandas, pyarrow, scipy and
    matplotlib (seconds of imports), which neither the admin's start nor a participant-serving process needs."""
    def view(*args, **kwargs):
        from . import views

        return getattr(views, name)(*args, **kwargs)
    view.__name__ = name
    return view


IMPORT_PERMS = ("surveys.add_participant", "surveys.add_response")


@admin.register(StudyAnalysis)
class StudyAnalysisAdmin(OwnedAdminMixin, admin.ModelAdmin):
    list_display = ("title", "actions_links", "slug", "instrument", "completed", "excluded", "model_answers")
    list_display_links = None
    search_fields = ("title", "slug")
    list_filter = ("instrument", "status")

    def get_queryset(self, request):
        done = Q(participants__status=Participant.Status.COMPLETED, participants__is_test=False)  # tests never count
        return super().get_queryset(request).annotate(
            n_completed=Count("participants", filter=done, distinct=True),
            n_excluded=Count("participants", filter=done & Q(participants__attention_included=False), distinct=True),
            n_model=Count("runs__responses", distinct=True),
        )

    @admin.display(description="completed", ordering="n_completed")
    def completed(self, obj) -> int:
        return obj.n_completed

    @admin.display(description="excluded (attention)", ordering="n_excluded")
    def excluded(self, obj) -> int:
        return obj.n_excluded

    @admin.display(description="model answers", ordering="n_model")
    def model_answers(self, obj) -> int:
        return obj.n_model

    @admin.display(description="report · export · import")
    def actions_links(self, obj) -> str:
        links = [
            (reverse("admin:analysis_studyanalysis_report", args=[obj.pk]), "Report"),
            (reverse("admin:analysis_studyanalysis_export", args=[obj.pk, "csv"]), "Export CSV"),
            (reverse("admin:analysis_studyanalysis_export", args=[obj.pk, "parquet"]), "Export Parquet"),
            (reverse("admin:analysis_studyanalysis_codebook", args=[obj.pk, "csv"]), "Codebook CSV"),
            (reverse("admin:analysis_studyanalysis_codebook", args=[obj.pk, "json"]), "Codebook JSON"),
            (reverse("admin:analysis_studyanalysis_codebook", args=[obj.pk, "md"]), "Codebook Markdown"),
            (reverse("admin:analysis_studyanalysis_import_responses", args=[obj.pk]), "Import answers"),
            (reverse("admin:analysis_studyanalysis_import_wide", args=[obj.pk]), "Import wide file"),
            (reverse("admin:analysis_studyanalysis_import_model_answers", args=[obj.pk]), "Import model answers"),
        ]
        return format_html_join(mark_safe("<br>"), '<a href="{}">{}</a>', links)

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False

    # --- custom pages -----------------------------------------------------------------------------
    def get_urls(self):
        def wrap(view, *perms: str):
            def inner(request, object_id, *args, **kwargs):
                if not self.has_view_permission(request):
                    raise PermissionDenied
                check(request.user, *perms)
                studies = visible(StudyAnalysis.objects.all(), request.user)
                study = get_object_or_404(studies, pk=object_id)
                return view(request, study, *args, **kwargs)
            return self.admin_site.admin_view(inner)

        def with_context(view):
            def inner(request, study, *args, **kwargs):
                context = dict(self.admin_site.each_context(request), opts=self.model._meta)
                return view(request, study, context, *args, **kwargs)
            return inner

        custom = [
            path("<int:object_id>/report/", wrap(with_context(_view("report_page"))),
                 name="analysis_studyanalysis_report"),
            path("<int:object_id>/report.json", wrap(_view("report_json")), name="analysis_studyanalysis_report_json"),
            path("<int:object_id>/export/<str:fmt>/", wrap(_view("export_download")),
                 name="analysis_studyanalysis_export"),
            path("<int:object_id>/codebook/<str:fmt>/", wrap(_view("codebook_download")),
                 name="analysis_studyanalysis_codebook"),
            path("<int:object_id>/package.zip", wrap(_view("package_download")),
                 name="analysis_studyanalysis_package"),
            path("<int:object_id>/attention/", wrap(_view("attention_run"), "surveys.change_participant"), name="analysis_studyanalysis_attention"),
            path("<int:object_id>/import-responses/", wrap(with_context(_view("import_responses_page")), *IMPORT_PERMS),
                 name="analysis_studyanalysis_import_responses"),
            path("<int:object_id>/import-wide/", wrap(with_context(_view("import_wide_page")), *IMPORT_PERMS),
                 name="analysis_studyanalysis_import_wide"),
            path("<int:object_id>/import-model-answers/",
                 wrap(with_context(_view("import_model_answers_page")),
                      "elicitation.add_elicitationrun", "elicitation.add_modelresponse"),
                 name="analysis_studyanalysis_import_model_answers"),
        ]
        return custom + super().get_urls()
