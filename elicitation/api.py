"""Read-only REST endpoints for model endpoints, runs (with progress) and model responses."""
from __future__ import annotations

from rest_framework import serializers, viewsets

from surveys.api import QueryFilterMixin

from .models import ElicitationRun, ModelEndpoint, ModelResponse
from .runs import progress


class ModelEndpointSerializer(serializers.ModelSerializer):
    class Meta:
        model = ModelEndpoint
        exclude = ["notes"]


class ElicitationRunSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    endpoint = serializers.SlugRelatedField(slug_field="name", read_only=True)
    model = serializers.CharField(source="endpoint.model", read_only=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ElicitationRun
        fields = "__all__"

    def get_progress(self, run: ElicitationRun) -> dict:
        data = progress(run, failures=20)
        return {k: v for k, v in data.items() if k not in ("run", "status", "status_reason")}


class ModelResponseSerializer(serializers.ModelSerializer):
    item_key = serializers.CharField(source="item.key", read_only=True)
    expression = serializers.CharField(source="item.expression", read_only=True)
    study = serializers.CharField(source="run.study.slug", read_only=True)
    mode = serializers.CharField(source="run.mode", read_only=True)

    class Meta:
        model = ModelResponse
        exclude = ["lease_owner", "lease_until"]


class ModelEndpointViewSet(viewsets.ReadOnlyModelViewSet):
    queryset = ModelEndpoint.objects.all()
    serializer_class = ModelEndpointSerializer
    lookup_field = "name"


class ElicitationRunViewSet(QueryFilterMixin, viewsets.ReadOnlyModelViewSet):
    """Runs; filter with ?study=<slug>, ?status=…, ?endpoint=<name>."""

    queryset = ElicitationRun.objects.select_related("study", "endpoint").order_by("-created_at")
    serializer_class = ElicitationRunSerializer
    query_filters = {"study": "study__slug", "status": "status", "endpoint": "endpoint__name"}


class ModelResponseViewSet(QueryFilterMixin, viewsets.ReadOnlyModelViewSet):
    """Model answers; filter with ?run=<id>, ?study=<slug>, ?status=…, ?item=<id>."""

    queryset = ModelResponse.objects.select_related("item", "run", "run__study").order_by("run_id", "item_id",
                                                                                         "sample_index")
    serializer_class = ModelResponseSerializer
    query_filters = {"run": "run_id", "study": "run__study__slug", "status": "status", "item": "item_id"}
