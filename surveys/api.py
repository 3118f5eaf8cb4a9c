"""REST endpoints of studies, items, participants and responses (token or session auth; staff with the
model permission of each action: config.permissions).

Writes are validated as in the admin (the model's own validation, the instrument fixed once a study has
items, the slug once it has participants) and imports go through the same all-or-nothing importers.
"""
from __future__ import annotations

import copy

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.db.models import ProtectedError, RestrictedError
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response as ApiResponse

from access.api import OwnedViewSetMixin, SharingSerializerMixin
from access.ownership import OWNED_BY, visible
from config.filters import ChoiceFilter, StudyFilter, study_filterset
from config.json_input import JSONParser
from config.permissions import allowed, can_see_raw_ids

from . import flow
from .api_definitions import DefinitionActions
from .admin_views import protected_counts, refusal_message
from .designs import DesignError, designs, generate_items
from .importers import ImportFailed, import_items
from .instruments import instrument_choices
from .models import Item, Participant, Response, Study


def drf_errors(exc: DjangoValidationError) -> serializers.ValidationError:
    """A Django ValidationError as DRF's (field → messages, or a list)."""
    if hasattr(exc, "message_dict"):
        return serializers.ValidationError(exc.message_dict)
    return serializers.ValidationError(list(exc.messages))


class SlugField(serializers.SlugRelatedField):
    """SlugRelatedField that refuses text PostgreSQL cannot compare (NUL characters) with a 400, and offers
    only the studies and endpoints the user may use (access.ownership): another researcher's is "not found".
    Without the request in the serializer's context, none (pass ``context=self.get_serializer_context()``)."""

    def get_queryset(self):
        queryset = super().get_queryset()
        if queryset.model._meta.label_lower in OWNED_BY:
            request = self.context.get("request")
            queryset = visible(queryset, getattr(request, "user", None))
        return queryset

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value="(contains a NUL character)")
        return super().to_internal_value(data)


# --- errors shared by the write endpoints ---------------------------------------------------------------
class ImportErrorRow(serializers.Serializer):
    line = serializers.IntegerField(help_text="Line in the file where the row starts (header = 1).")
    row = serializers.IntegerField(allow_null=True, help_text="The row as a spreadsheet numbers it.")
    column = serializers.CharField()
    message = serializers.CharField()


class ImportFailure(serializers.Serializer):
    detail = serializers.CharField()
    errors = ImportErrorRow(many=True)
    total = serializers.IntegerField(help_text="Number of problems (the list holds at most 100).")


class Detail(serializers.Serializer):
    detail = serializers.CharField()


def import_failure(exc: ImportFailed) -> ApiResponse:
    """400 with every problem (line, spreadsheet row, column, message); nothing was imported."""
    rows = [{"line": e.line, "row": e.row, "column": e.column, "message": e.message} for e in exc.errors[:100]]
    return ApiResponse({"detail": f"nothing imported: {exc.total} error(s)", "errors": rows, "total": exc.total},
                       status=status.HTTP_400_BAD_REQUEST)


def form_text(data, name: str) -> str | None:
    """A text field of a multipart form, stripped (None if empty); a NUL character is a 400, as in every
    serializer field: it would end up in a participant id, which no database text column stores."""
    value = (data.get(name) or "").strip()
    if "\x00" in value:
        raise serializers.ValidationError({name: "Null characters are not allowed."})
    return value or None


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV, UTF-8 (a BOM is fine), comma-separated, with a header row.")


# --- studies ------------------------------------------------------------------------------------------
class StudySerializer(SharingSerializerMixin, serializers.ModelSerializer):
    participant_link = serializers.CharField(read_only=True, help_text="The link to paste into Prolific.")
    instrument = serializers.ChoiceField(choices=instrument_choices(), default="speaker_belief",
                                         help_text="Item kind; fixed once the study has items.")
    reference_study = SlugField(slug_field="slug", queryset=Study.objects.all(), required=False,
                                                   allow_null=True)
    items = serializers.SerializerMethodField(help_text="Main items (demonstrations not counted).")
    participants = serializers.SerializerMethodField()
    new_version = serializers.BooleanField(write_only=True, required=False, default=False,
                                           help_text="Allow a change of content of a study with answers (a new "
                                                     "version of its definition).")
    version = serializers.SerializerMethodField(help_text="The current version of the study's definition.")

    class Meta:
        model = Study
        fields = ["id", "slug", "title", "participant_title", "instrument", "status", "description", "consent_text",
                  "instructions", "pledge_text", "items_per_expression", "controls_per_participant",
                  "draw_speaker_names", "attention_threshold", "report_options", "reference_study", "completion_code",
                  "failed_attention_code", "screened_out_code", "participant_link", "items", "participants",
                  "created_at", "owner", "shared_with", "new_version", "version"]
        read_only_fields = ["created_at"]

    def get_items(self, study: Study) -> int:
        return study.main_items().count()

    def get_participants(self, study: Study) -> int:
        return study.participants.count()

    def get_version(self, study: Study) -> int | None:
        current = study.current_version()
        return current.number if current else None

    def validate(self, attrs: dict) -> dict:
        study = self.instance
        if study is not None and study.pk:
            if "instrument" in attrs and attrs["instrument"] != study.instrument and study.items.exists():
                raise serializers.ValidationError({"instrument": "the study has items: its instrument is fixed."})
            if "slug" in attrs and attrs["slug"] != study.slug and study.participants.exists():
                raise serializers.ValidationError(
                    {"slug": "the study has participants: its slug (the Prolific link) is fixed."})
            if attrs.get("reference_study") is not None and attrs["reference_study"].pk == study.pk:
                raise serializers.ValidationError({"reference_study": "a study cannot be its own reference."})
        new_version = attrs.pop("new_version", False)
        candidate = copy.copy(study) if study is not None else Study()
        for name, value in attrs.items():
            if name != "shared_with":  # a many-to-many list: saved by the serializer, not an attribute
                setattr(candidate, name, value)
        if candidate.instrument == "generic" and not (candidate.definition or {}).get("answer"):
            raise serializers.ValidationError({"instrument": (
                "a generic study needs its [answer] table: create it from a definition file "
                "(POST /api/studies/definition/ or a definition in this request)")})
        try:
            candidate.full_clean(validate_unique=False)
        except DjangoValidationError as exc:
            raise drf_errors(exc) from None
        if study is not None and study.pk and not new_version:
            from .definition import versions

            current = versions.current_version(study)
            if versions.has_answers(study):
                before = current.sha256 if current else versions.pending_hash(study)
                if versions.pending_hash(candidate) != before:
                    raise serializers.ValidationError({"new_version": (
                        "the study already has answers and this change alters its content: send "
                        "\"new_version\": true to save it as a new version (earlier answers keep theirs).")})
        return attrs


class StudyViewSet(DefinitionActions, OwnedViewSetMixin, viewsets.ModelViewSet):
    """Studies: create, read, update (texts, codes, design, status) and delete (refused while data depend on
    the study: close it instead). Below a study: item and answer imports, generated items."""

    queryset = Study.objects.all()
    serializer_class = StudySerializer
    lookup_field = "slug"
    required_permissions = {
        "import_items": ["surveys.add_item"],
        "generate_items": ["surveys.add_item"],
        "import_responses": ["surveys.add_response", "surveys.add_participant"],
        "import_wide": ["surveys.add_response", "surveys.add_participant"],
        "load_definition": ["surveys.add_study", "surveys.add_item"],
    }

    def create(self, request, *args, **kwargs):
        """A new study from fields, or, when the request carries a ``definition``, from its definition file."""
        if "definition" in request.data:  # what /api/studies/definition/ needs: it creates items
            if not allowed(request.user, self.required_permissions["load_definition"]):
                raise PermissionDenied("loading a definition needs the permissions surveys.add_study and "
                                       "surveys.add_item")
            return self._load_request(request)
        return super().create(request, *args, **kwargs)

    def perform_update(self, serializer):
        from .definition import versions

        versions.ensure_first_version(Study.objects.get(pk=serializer.instance.pk))
        super().perform_update(serializer)
        versions.sync(serializer.instance)

    def perform_create(self, serializer):
        from .definition import versions

        super().perform_create(serializer)
        versions.sync(serializer.instance)

    @extend_schema(responses={204: None, 409: Detail})
    def destroy(self, request, *args, **kwargs):
        study = self.get_object()
        counts = protected_counts(study)
        if counts:
            return ApiResponse({"detail": refusal_message(study, counts, "Set its status to closed instead.")},
                               status=status.HTTP_409_CONFLICT)
        try:
            study.delete()
        except (ProtectedError, RestrictedError):
            return ApiResponse({"detail": "data arrived while deleting; close the study instead."},
                               status=status.HTTP_409_CONFLICT)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Import items from a CSV file (all or nothing)",
        request={"multipart/form-data": UploadSerializer},
        responses={201: inline_serializer("ItemImportResult", {
            "created": serializers.IntegerField(), "controls": serializers.IntegerField(),
            "by_truth": serializers.DictField(child=serializers.IntegerField()),
            "demonstrations_added": serializers.IntegerField()}),
            400: ImportFailure},
    )
    @action(detail=True, methods=["post"], url_path="import-items",
            parser_classes=[MultiPartParser, FormParser])
    def import_items(self, request, slug=None, format=None):
        study = self.get_object()
        upload = UploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        try:
            result = import_items(study, upload.validated_data["file"])
        except ImportFailed as exc:
            return import_failure(exc)
        return ApiResponse({"created": result.created, "controls": result.controls, "by_truth": result.by_truth,
                            "demonstrations_added": result.demonstrations_added}, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Import earlier answers from a long CSV file (one row per answer; all or nothing)",
        request={"multipart/form-data": inline_serializer("ResponseImportRequest", {
            "file": serializers.FileField(),
            "participant": serializers.CharField(help_text="Participant id column."),
            "value": serializers.CharField(help_text="Answer column."),
            "expression": serializers.CharField(required=False, help_text="Expression column ('control' for controls)."),
            "statement": serializers.CharField(required=False, help_text="Statement id column."),
            "text": serializers.CharField(required=False, help_text="Sentence or statement column (instead of statement)."),
            "truth": serializers.CharField(required=False),
            "time": serializers.CharField(required=False, help_text="Time taken column."),
            "time_unit": serializers.ChoiceField(choices=["ms", "s"], required=False, default="ms"),
            "question": serializers.CharField(required=False, help_text="Column with each answer's question key "
                                              "(a study with [[questions]]: required)."),
        })},
        responses={201: inline_serializer("ResponseImportResult", {
            "participants": serializers.IntegerField(), "responses": serializers.IntegerField(),
            "items_created": serializers.IntegerField(),
            "ignored_columns": serializers.ListField(child=serializers.CharField())}), 400: ImportFailure},
    )
    @action(detail=True, methods=["post"], url_path="import-responses",
            parser_classes=[MultiPartParser, FormParser])
    def import_responses(self, request, slug=None, format=None):
        from surveys.answer_import import ResponseColumns, import_responses

        study = self.get_object()
        data = request.data
        upload = UploadSerializer(data=data)
        upload.is_valid(raise_exception=True)
        names = {k: form_text(data, k) for k in ("participant", "value", "expression", "statement", "text", "truth",
                                                 "time", "question")}
        missing = {k: "this column name is required." for k in ("participant", "value") if not names[k]}
        if missing:
            raise serializers.ValidationError(missing)
        if not (names["statement"] or names["text"] or names["expression"]):
            raise serializers.ValidationError({"expression": "give a statement, text or expression column."})
        try:
            columns = ResponseColumns(**names, time_unit=(data.get("time_unit") or "ms"))
        except ValueError as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from None
        try:
            summary = import_responses(study, upload.validated_data["file"], columns)
        except ImportFailed as exc:
            return import_failure(exc)
        return ApiResponse(vars(summary), status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Import a wide survey file (one row per respondent, one column per expression; all or nothing)",
        request={"multipart/form-data": inline_serializer("WideImportRequest", {
            "file": serializers.FileField(),
            "id_column": serializers.CharField(required=False),
            "id_prefix": serializers.CharField(required=False)})},
        responses={201: inline_serializer("WideImportResult", {
            "participants": serializers.IntegerField(), "responses": serializers.IntegerField(),
            "items_created": serializers.IntegerField(),
            "ignored_columns": serializers.ListField(child=serializers.CharField())}), 400: ImportFailure},
    )
    @action(detail=True, methods=["post"], url_path="import-wide", parser_classes=[MultiPartParser, FormParser])
    def import_wide(self, request, slug=None, format=None):
        from surveys.answer_import import import_wide

        study = self.get_object()
        upload = UploadSerializer(data=request.data)
        upload.is_valid(raise_exception=True)
        file = upload.validated_data["file"]
        prefix = form_text(request.data, "id_prefix") or f"{file.name.rsplit('.', 1)[0]}-"
        try:
            summary = import_wide(study, file, id_column=form_text(request.data, "id_column"), id_prefix=prefix)
        except ImportFailed as exc:
            return import_failure(exc)
        return ApiResponse(vars(summary), status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Generate the study's items from a design (what `manage.py generate_items` runs; all or nothing)",
        request=inline_serializer("GenerateItemsRequest", {
            "design": serializers.ChoiceField(choices=sorted(designs()), help_text="A design of surveys/designs/."),
            "options": serializers.DictField(required=False, help_text="The design's options, e.g. "
                                             '{"language": "en"}; unknown options are refused.')}),
        responses={201: inline_serializer("GenerateItemsResult", {"created": serializers.IntegerField(),
                                                                  "design": serializers.CharField()})},
    )
    @action(detail=True, methods=["post"], url_path="generate-items", parser_classes=[JSONParser])
    def generate_items(self, request, slug=None, format=None):
        study = self.get_object()
        data = request.data if isinstance(request.data, dict) else {}
        design, options = data.get("design"), data.get("options") or {}
        if not isinstance(design, str) or not design:
            raise serializers.ValidationError({"design": f"one of: {', '.join(sorted(designs()))}."})
        if not isinstance(options, dict):
            raise serializers.ValidationError({"options": "an object of the design's options."})
        try:
            created = generate_items(study, design, **options)
        except (DesignError, TypeError) as exc:
            raise serializers.ValidationError({"detail": str(exc)}) from None
        return ApiResponse({"created": len(created), "design": design}, status=status.HTTP_201_CREATED)


# --- items --------------------------------------------------------------------------------------------
class ItemSerializer(serializers.ModelSerializer):
    text = serializers.CharField(read_only=True, help_text="The sentence as a participant reads it.")
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Item
        fields = "__all__"


class ItemViewSet(OwnedViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Items; filter with ?study=<slug>. Items are added by the import and generate routes of a study."""

    queryset = Item.objects.select_related("study")
    serializer_class = ItemSerializer
    filterset_class = study_filterset(Item, "study__slug")


# --- participants -------------------------------------------------------------------------------------
class ParticipantSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    channel = serializers.SlugRelatedField(slug_field="name", read_only=True, allow_null=True,
                                           help_text="The recruitment channel they came through; null: Prolific.")

    class Meta:
        model = Participant
        fields = "__all__"


MARK_CHOICES = [*(s.value for s in flow.ENDED_STATUSES), "reinstate"]


class MarkSerializer(serializers.Serializer):
    participants = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=2**53), min_length=1,
                                         max_length=10_000, help_text="Participant ids.")
    status = serializers.ChoiceField(choices=MARK_CHOICES, help_text="returned, timed_out or screened_out "
                                     "(their unanswered items go back to the draw), or reinstate (undo).")


class ParticipantFilter(django_filters.FilterSet):
    study = StudyFilter("study__slug")
    status = ChoiceFilter("status", Participant.Status.choices)

    class Meta:
        model = Participant
        fields = ["study", "status"]


class ParticipantViewSet(OwnedViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Participants; filter with ?study=<slug>&status=…; mark them returned, timed out or screened out."""

    queryset = Participant.objects.select_related("study", "channel")
    serializer_class = ParticipantSerializer
    filterset_class = ParticipantFilter
    required_permissions = {"mark": ["surveys.change_participant"]}

    @extend_schema(summary="Mark participants returned / timed out / screened out, or reinstate them",
                   request=MarkSerializer,
                   responses={200: inline_serializer("MarkResult", {"changed": serializers.IntegerField()})})
    @action(detail=False, methods=["post"])
    def mark(self, request, format=None):
        data = MarkSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        ids = data.validated_data["participants"]
        queryset = visible(Participant.objects.filter(pk__in=ids), request.user)
        unknown = sorted(set(ids) - set(queryset.values_list("pk", flat=True)))
        if unknown:
            raise serializers.ValidationError({"participants": f"no such participant: {unknown[:10]}"})
        with transaction.atomic():
            if data.validated_data["status"] == "reinstate":
                changed = flow.reinstate_participants(queryset)
            else:
                changed = flow.mark_participants(queryset, data.validated_data["status"])
        return ApiResponse({"changed": changed})


# --- responses ----------------------------------------------------------------------------------------
class ResponseSerializer(serializers.ModelSerializer):
    prolific_pid = serializers.CharField(source="participant.prolific_pid", read_only=True)
    item_key = serializers.CharField(source="item.key", read_only=True)
    position = serializers.IntegerField(source="assignment.position", read_only=True)
    speaker_name = serializers.CharField(source="assignment.speaker_name", read_only=True)
    option_order = serializers.ListField(source="assignment.option_order", child=serializers.CharField(),
                                         read_only=True, help_text="A randomised choice: the option keys in "
                                         "the order the participant saw them (empty: as declared).")
    questionnaire = serializers.JSONField(source="participant.questionnaire", read_only=True,
                                          help_text="The participant's questionnaire answers: field name → value.")

    class Meta:
        model = Response
        fields = ["id", "participant", "prolific_pid", "item", "item_key", "position", "speaker_name",
                  "value", "choice", "lower", "upper", "text", "option_order", "time_taken_ms", "client_time_ms",
                  "created_at", "questionnaire", "question"]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is None or not can_see_raw_ids(request.user):
            fields.pop("prolific_pid")  # raw ids need the permission to view participants
        return fields


class ResponseViewSet(OwnedViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Human answers; filter with ?study=<slug>. Read-only: answers are never edited."""

    queryset = Response.objects.select_related("participant", "item", "assignment")
    serializer_class = ResponseSerializer
    filterset_class = study_filterset(Response, "item__study__slug")

