"""Read-only REST endpoints (token or session auth, staff only)."""
from rest_framework import serializers, viewsets

from .models import Item, Participant, Response, Study


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
                  "value", "time_taken_ms", "client_time_ms", "created_at"]


class StudyViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Study.objects.all()
    serializer_class = StudySerializer
    lookup_field = "slug"


class ItemViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Item.objects.select_related("study")
    serializer_class = ItemSerializer
    filterset_fields = None

    def get_queryset(self):
        qs = super().get_queryset()
        study = self.request.query_params.get("study")
        return qs.filter(study__slug=study) if study else qs


class ParticipantViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Participant.objects.select_related("study")
    serializer_class = ParticipantSerializer

    def get_queryset(self):
        qs = super().get_queryset()
        study = self.request.query_params.get("study")
        return qs.filter(study__slug=study) if study else qs


class ResponseViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = Response.objects.select_related("participant", "item", "assignment")
    serializer_class = ResponseSerializer

    def get_queryset(self):
        qs = super().get_queryset()
        study = self.request.query_params.get("study")
        return qs.filter(item__study__slug=study) if study else qs
