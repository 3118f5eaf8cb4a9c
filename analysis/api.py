"""REST endpoints of the analysis app (token or session auth, staff only: the project's DRF defaults).

- GET  /api/studies/<slug>/report/                 the report as JSON (409 with a reason when it cannot be built yet)
- GET  /api/studies/<slug>/export/csv/             the combined export, streamed (``?raw_ids=1`` for PROLIFIC_PIDs)
- GET  /api/studies/<slug>/export/parquet/
- POST /api/studies/<slug>/attention/              run the attention filter; returns its decisions
"""
from __future__ import annotations

from typing import Any, Callable

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.exports import CONTENT_TYPES, FORMATS, export_filename, stream_study
from analysis.filtering import FilterError, apply_attention_filter
from analysis.reports import ReportError, build_report
from surveys.models import Study


def _study_result(slug: str, compute: Callable[[Study], Any], refused: type[Exception]) -> Response:
    """``compute(study)`` as JSON; 404 for an unknown study, 409 with the reason when ``refused`` is raised."""
    study = get_object_or_404(Study, slug=slug)
    try:
        return Response(compute(study))
    except refused as exc:
        return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


class StudyReportView(APIView):
    def get(self, request, slug: str):
        return _study_result(slug, lambda study: build_report(study).to_json(), ReportError)


class StudyExportView(APIView):
    def get(self, request, slug: str, fmt: str):
        study = get_object_or_404(Study, slug=slug)
        if fmt not in FORMATS:
            return Response({"detail": f"format must be one of {', '.join(FORMATS)}"},
                            status=status.HTTP_404_NOT_FOUND)
        raw_ids = request.query_params.get("raw_ids") in ("1", "true")
        response = StreamingHttpResponse(stream_study(study, fmt, raw_ids=raw_ids), content_type=CONTENT_TYPES[fmt])
        response["Content-Disposition"] = f'attachment; filename="{export_filename(study, fmt)}"'
        return response


class StudyAttentionView(APIView):
    def post(self, request, slug: str):
        return _study_result(slug, lambda study: apply_attention_filter(study).as_dict(), FilterError)
