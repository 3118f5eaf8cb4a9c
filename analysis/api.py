"""REST endpoints of the analysis app (token or session auth; staff with the model permissions below:
config.permissions).

- GET  /api/studies/<slug>/report/                 the report as JSON (409 with a reason when it cannot be built yet;
                                                   ``?pool_versions=1`` pools answers of several definition versions)
- GET  /api/studies/<slug>/export/csv/             the combined export, streamed (``?raw_ids=1`` for PROLIFIC_PIDs)
- GET  /api/studies/<slug>/export/parquet/
- GET  /api/studies/<slug>/codebook/csv|json|md/  the export's codebook: every column's type, source, meaning, values
- GET  /api/studies/<slug>/package/                the replication package (zip; analysis/replication/package.py)
- POST /api/studies/<slug>/attention/              apply the exclusion rules; returns the decisions
"""
from __future__ import annotations

from typing import Any, Callable

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

# analysis.exports, .filtering and .reports (pandas, pyarrow, scipy, matplotlib) are imported in the views
# that use them: the URLconf loads this module, and serving participants needs none of them.
from analysis.export_formats import (CODEBOOK_CONTENT_TYPES, CODEBOOK_FORMATS, CONTENT_TYPES, FORMATS,
                                     codebook_filename, export_filename)
from access.ownership import visible
from config.permissions import RAW_IDS, can_see_raw_ids
from surveys.api import Detail
from surveys.models import Study

#: Reading answers of people and models together.


def _study(request, slug: str) -> Study:
    """The study ``slug`` if the user may use it (access.ownership), else 404."""
    return get_object_or_404(visible(Study.objects.all(), request.user), slug=slug)


def _study_result(request, slug: str, compute: Callable[[Study], Any],
                  refused: type[Exception] | tuple[type[Exception], ...]) -> Response:
    """``compute(study)`` as JSON; 404 for an unknown study (or another researcher's), 409 with the reason
    when ``refused`` is raised."""
    study = _study(request, slug)
    try:
        return Response(compute(study))
    except refused as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


VIEW_REPORT = "analysis.view_studyanalysis"



class StudyReportView(APIView):
    required_permissions = {"GET": [VIEW_REPORT]}

    @extend_schema(summary="The study's report: meta and every table as records",
                   parameters=[OpenApiParameter("pool_versions", bool, description="report answers given to "
                                                "different versions of the study's definition together (409 "
                                                "otherwise, naming the versions)")],
                   responses={200: OpenApiTypes.OBJECT, 404: Detail, 409: Detail})
    def get(self, request, slug: str):
        from analysis.report_cache import asked, cached_report
        from analysis.reports import ReportError

        from access.ownership import may_see_reference

        raw_ids = can_see_raw_ids(request.user)
        pool = asked(request.query_params.get("pool_versions"))
        return _study_result(request, slug,
                             lambda study: cached_report(study, pool_versions=pool).seen_by(
                                 raw_ids and may_see_reference(study, request.user)).to_json(),
                             ReportError)


class StudyPackageView(APIView):
    required_permissions = {"GET": [VIEW_REPORT]}

    @extend_schema(summary="The study's replication package: definition, data (salted ids), report, "
                           "environment and a MANIFEST of SHA-256 hashes (manage.py package)",
                   parameters=[OpenApiParameter("pool_versions", bool, description="report answers given to "
                                                "different versions of the study's definition together")],
                   responses={(200, "application/zip"): OpenApiTypes.BINARY, 404: Detail, 409: Detail})
    def get(self, request, slug: str):
        from django.http import HttpResponse

        from analysis.export_formats import package_filename
        from analysis.replication.package import package_zip
        from analysis.report_cache import asked
        from analysis.reports import ReportError
        from analysis.versions import VersionsError

        study = _study(request, slug)
        try:
            data = package_zip(study, pool_versions=asked(request.query_params.get("pool_versions")), user=request.user)
        except (ReportError, VersionsError) as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        response = HttpResponse(data, content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{package_filename(study)}"'
        return response


class StudyExportView(APIView):
    required_permissions = {"GET": [VIEW_REPORT]}

    @extend_schema(
        summary="The combined export (one row per answer, people and models), streamed",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(FORMATS)),
                    OpenApiParameter("raw_ids", bool, description="PROLIFIC_PIDs instead of hashed ids "
                                     f"(needs {RAW_IDS})"),
                    OpenApiParameter("include_test", bool, description="also the researchers' test participants")],
        responses={(200, CONTENT_TYPES["csv"].split(";")[0]): OpenApiTypes.BINARY,
                   (200, CONTENT_TYPES["parquet"]): OpenApiTypes.BINARY, 403: Detail, 404: Detail},
    )
    def get(self, request, slug: str, fmt: str):
        study = _study(request, slug)
        if fmt not in FORMATS:
            return Response({"detail": f"format must be one of {', '.join(FORMATS)}"},
                            status=status.HTTP_404_NOT_FOUND)
        raw_ids = request.query_params.get("raw_ids") in ("1", "true")
        if raw_ids and not can_see_raw_ids(request.user):
            return Response({"detail": f"raw PROLIFIC_PIDs need the permission {RAW_IDS}."},
                            status=status.HTTP_403_FORBIDDEN)
        include_test = request.query_params.get("include_test") in ("1", "true")
        from analysis.exports import stream_study

        response = StreamingHttpResponse(stream_study(study, fmt, raw_ids=raw_ids, include_test=include_test),
                                         content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{export_filename(study, fmt)}"'
        return response


class CodebookLabel(serializers.Serializer):
    value = serializers.CharField()
    label = serializers.CharField()


class CodebookEntry(serializers.Serializer):
    """One column of the combined export (analysis/codebook.py)."""

    column = serializers.CharField()
    type = serializers.ChoiceField(choices=["string", "integer", "number", "boolean", "timestamp"])
    source = serializers.CharField()
    meaning = serializers.CharField()
    values = serializers.CharField(allow_blank=True)
    labels = CodebookLabel(many=True)


class StudyCodebookView(APIView):
    required_permissions = {"GET": [VIEW_REPORT]}

    @extend_schema(
        summary="The combined export's codebook: every column with its type, source, meaning and allowed values "
                "or scale labels (CSV, JSON or Markdown)",
        parameters=[OpenApiParameter("fmt", str, OpenApiParameter.PATH, enum=list(CODEBOOK_FORMATS))],
        responses={(200, "application/json"): CodebookEntry(many=True),
                   (200, CODEBOOK_CONTENT_TYPES["csv"].split(";")[0]): OpenApiTypes.STR,
                   (200, CODEBOOK_CONTENT_TYPES["md"].split(";")[0]): OpenApiTypes.STR, 404: Detail},
    )
    def get(self, request, slug: str, fmt: str):
        from django.http import HttpResponse

        study = _study(request, slug)
        if fmt not in CODEBOOK_FORMATS:
            return Response({"detail": f"format must be one of {', '.join(CODEBOOK_FORMATS)}"},
                            status=status.HTTP_404_NOT_FOUND)
        from analysis.codebook import codebook_text

        response = HttpResponse(codebook_text(study, fmt), content_type=CODEBOOK_CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{codebook_filename(study, fmt)}"'
        return response


class StudyAttentionView(APIView):
    # writes each participant's decision; the result names excluded participants by PROLIFIC_PID
    required_permissions = {"POST": [VIEW_REPORT, "surveys.change_participant", RAW_IDS]}

    @extend_schema(summary="Apply the study's exclusion rules and store the decisions (the study kind's "
                   "attention filter is one rule); the rules, the flow counts and the excluded participants with "
                   "their reasons",
                   request=None, responses={200: OpenApiTypes.OBJECT, 404: Detail, 409: Detail})
    def post(self, request, slug: str):
        from analysis.exclusions import ExclusionError, apply_exclusions

        return _study_result(request, slug, lambda study: apply_exclusions(study).as_dict(raw_ids=True),
                             (ExclusionError,))
