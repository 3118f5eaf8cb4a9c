"""Read-only REST endpoints (token or session auth; staff with the model's *view* permission, see
config.permissions; raw PROLIFIC_PIDs in responses need ``surveys.view_participant``)."""
from __future__ import annotations

from rest_framework import serializers, viewsets

from config.permissions import may_see_raw_ids

from .models import Item, Participant, Response, Study


class QueryFilterMixin:
    """Narrow a viewset's queryset by query parameters: ``query_filters`` maps a parameter to a lookup,
    e.g. ``{"study": "study__slug"}`` for ``?study=<slug>``. A lookup ending in ``_id`` takes a number only
    (400 otherwise)."""

    query_filters: dict[str, str] = {}

    def get_queryset(self):
        qs = super().get_queryset()
        params = self.request.query_params
        for param, lookup in self.query_filters.items():
            value = params.get(param)
            if not value:
                continue
            if lookup.endswith("_id") and not value.isdigit():
                raise serializers.ValidationError({param: "must be a number"})
            qs = qs.filter(**{lookup: value})
        return qs


class StudySerializer(serializers.ModelSerializer):
    participant_link = serializers.CharField(read_only=True)

    class Meta:
        model = Study
        exclude = ["description"]


class ItemSerializer(serializers.ModelSerializer):
    text = serializers.CharField(read_only=True)
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Item
        fields = "__all__"


class ParticipantSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)

    class Meta:
        model = Participant
        fields = "__all__"


class ResponseSerializer(serializers.ModelSerializer):
    prolific_pid = serializers.CharField(source="participant.prolific_pid", read_only=True)
    item_key = serializers.CharField(source="item.key", read_only=True)
    position = serializers.IntegerField(source="assignment.position", read_only=True)
    speaker_name = serializers.CharField(source="assignment.speaker_name", read_only=True)

    class Meta:
        model = Response
        fields = ["id", "participant", "prolific_pid", "item", "item_key", "position", "speaker_name",
                  "value", "choice", "lower", "upper", "time_taken_ms", "client_time_ms", "created_at"]

    def get_fields(self):
        fields = super().get_fields()
        request = self.context.get("request")
        if request is None or not may_see_raw_ids(request.user):
            fields.pop("prolific_pid")  # raw ids need the permission to view participants
        return fields


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Study.objects.all()
    serializer_class = StudySerializer
    lookup_field = "slug"


class ItemViewSet(QueryFilterMixin, viewsets.ReadOnlyModelViewSet):
    """Items; filter with ?study=<slug>."""

    queryset = Item.objects.select_related("study")
    serializer_class = ItemSerializer
    query_filters = {"study": "study__slug"}


class ParticipantViewSet(QueryFilterMixin, viewsets.ReadOnlyModelViewSet):
    """Participants; filter with ?study=<slug>."""

    queryset = Participant.objects.select_related("study")
    serializer_class = ParticipantSerializer
    query_filters = {"study": "study__slug"}


class ResponseViewSet(QueryFilterMixin, viewsets.ReadOnlyModelViewSet):
    """Human answers; filter with ?study=<slug>."""

    queryset = Response.objects.select_related("participant", "item", "assignment")
    serializer_class = ResponseSerializer
    query_filters = {"study": "item__study__slug"}
