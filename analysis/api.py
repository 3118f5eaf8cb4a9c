"""REST endpoints of the analysis app (token or session auth, staff only: the project's DRF defaults).

- GET  /api/studies/<slug>/report/                 the report as JSON (409 with a reason when it cannot be built yet)
- GET  /api/studies/<slug>/export/csv/             the combined export, streamed (``?raw_ids=1`` for PROLIFIC_PIDs)
- GET  /api/studies/<slug>/export/parquet/
- POST /api/studies/<slug>/attention/              run the attention filter; returns its decisions
"""
from __future__ import annotations

from django.http import StreamingHttpResponse
from django.shortcuts import get_object_or_404
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.exports import CONTENT_TYPES, FORMATS, export_filename, stream_study
from analysis.filtering import FilterError, apply_attention_filter
from analysis.report import ReportError, build_report
from surveys.models import Study


class StudyReportView(APIView):
    def get(self, request, slug: str):
        study = get_object_or_404(Study, slug=slug)
        try:
            return Response(build_report(study).to_json())
        except ReportError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)


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
        study = get_object_or_404(Study, slug=slug)
        try:
            return Response(apply_attention_filter(study).as_dict())
        except FilterError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
