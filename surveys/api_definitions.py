"""The REST side of study definition files: load one (``POST /api/studies/definition/``, also accepted by
``POST /api/studies/`` when the request carries a ``definition``) and read a study's
(``GET /api/studies/{slug}/definition/``)."""
from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response as ApiResponse

from config.json_input import JSONParser

from .definition.errors import DefinitionError, Problem
from .definition.export import ITEMS_FILE, export
from .definition.loader import load_as, uploaded_files
from .definition.template_check import check_isolated

MAX_FILE_BYTES = 20 * 1024 * 1024


class ProblemSerializer(serializers.Serializer):
    file = serializers.CharField()
    where = serializers.CharField(help_text="Key path (e.g. answer.max) or line and column of an item file.")
    message = serializers.CharField()


class DefinitionFailure(serializers.Serializer):
    detail = serializers.CharField()
    problems = ProblemSerializer(many=True)


LOADED = inline_serializer("DefinitionLoaded", {
    "slug": serializers.CharField(), "created": serializers.BooleanField(),
    "new_version": serializers.BooleanField(), "version": serializers.IntegerField(),
    "sha256": serializers.CharField(), "items": serializers.IntegerField(),
    "demonstrations": serializers.IntegerField(), "summary": serializers.CharField()})
REQUEST = inline_serializer("DefinitionRequest", {
    "definition": serializers.FileField(help_text="The definition file (TOML); in a JSON body, its text."),
    "items": serializers.ListField(child=serializers.FileField(), required=False,
                                   help_text="The item files it names (multipart), by file name. In a JSON "
                                             "body: `files`, an object of file name → text."),
    "slug": serializers.CharField(required=False, help_text="Load under this slug instead of [study] slug."),
    "new_version": serializers.BooleanField(required=False, help_text="Allow a change of a study with answers.")})


def _failure(exc: DefinitionError) -> ApiResponse:
    return ApiResponse({"detail": f"nothing loaded: {len(exc.problems)} problem(s)",
                        "problems": [vars(p) for p in exc.problems]}, status=status.HTTP_400_BAD_REQUEST)


def _text(value: Any, name: str) -> bytes:
    if hasattr(value, "read"):
        if getattr(value, "size", 0) > MAX_FILE_BYTES:
            raise DefinitionError([Problem(getattr(value, "name", name), "", "larger than 20 MB")])
        return value.read()
    if isinstance(value, str):
        return value.encode("utf-8")
    raise DefinitionError([Problem(name, "", "give the file (multipart) or its text (JSON)")])


def _truthy(value: Any) -> bool:
    return value is True or str(value).strip().lower() in ("1", "true", "yes", "on")


class DefinitionActions:
    """Actions of StudyViewSet for definition files."""

    def _load_request(self, request) -> ApiResponse:
        data = request.data
        try:
            definition = data.get("definition")
            name = getattr(definition, "name", None) or "study.toml"
            raw = _text(definition, "definition")
            files: dict[str, bytes] = {}
            if hasattr(data, "getlist"):
                for upload in data.getlist("items"):
                    if not hasattr(upload, "read"):
                        raise DefinitionError([Problem("items", "", "item files are uploaded as files "
                                                       "(multipart), each under the name items")])
                    files[upload.name] = _text(upload, upload.name)
            given = data.get("files") if isinstance(data, dict) else None
            if isinstance(given, dict):
                files.update({str(k): _text(v, str(k)) for k, v in given.items()})
            slug = data.get("slug") or ""
            if not isinstance(slug, str):
                raise DefinitionError([Problem("slug", "", "a study's slug is one text (letters, digits, hyphens), "
                                               f"not {type(slug).__name__}")])
            slug = slug.strip() or None

            check_isolated(raw, name, files, slug)  # the templates' computation, outside this worker
            loaded = load_as(request.user, raw, name, uploaded_files(files), slug=slug,
                              new_version=_truthy(data.get("new_version")))
        except DefinitionError as exc:
            return _failure(exc)
        body = {"slug": loaded.study.slug, "created": loaded.created, "new_version": loaded.new_version,
                "version": loaded.version.number, "sha256": loaded.version.sha256, "items": loaded.items,
                "demonstrations": loaded.demonstrations, "summary": loaded.summary()}
        return ApiResponse(body, status=status.HTTP_201_CREATED if loaded.created else status.HTTP_200_OK)

    @extend_schema(summary="Create or update a study from its definition file (all or nothing)",
                   request={"multipart/form-data": REQUEST, "application/json": REQUEST},
                   responses={201: LOADED, 200: LOADED, 400: DefinitionFailure})
    @action(detail=False, methods=["post"], url_path="definition",
            parser_classes=[MultiPartParser, FormParser, JSONParser])
    def load_definition(self, request, format=None):
        return self._load_request(request)

    @extend_schema(summary="The study's definition file and its items (what export_study writes)",
                   responses={200: inline_serializer("DefinitionFiles", {
                       "study.toml": serializers.CharField(), ITEMS_FILE: serializers.CharField()})})
    @action(detail=True, methods=["get"], url_path="definition")
    def definition(self, request, slug=None, format=None):
        text, lines = export(self.get_object())
        return ApiResponse({"study.toml": text, ITEMS_FILE: lines})
