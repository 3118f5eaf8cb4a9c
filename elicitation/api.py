"""Read-only REST endpoints for model endpoints, runs (with progress) and model responses."""
from __future__ import annotations

from rest_framework import serializers, viewsets

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


class ElicitationRunViewSet(viewsets.ReadOnlyModelViewSet):
    """Runs; filter with ?study=<slug>, ?status=…, ?endpoint=<name>."""

    queryset = ElicitationRun.objects.select_related("study", "endpoint").order_by("-created_at")
    serializer_class = ElicitationRunSerializer

    def get_queryset(self):
        qs = super().get_queryset()
        params = self.request.query_params
        if params.get("study"):
            qs = qs.filter(study__slug=params["study"])
        if params.get("status"):
            qs = qs.filter(status=params["status"])
        if params.get("endpoint"):
            qs = qs.filter(endpoint__name=params["endpoint"])
        return qs


class ModelResponseViewSet(viewsets.ReadOnlyModelViewSet):
    """Model answers; filter with ?run=<id>, ?study=<slug>, ?status=…, ?item=<id>."""

    queryset = ModelResponse.objects.select_related("item", "run", "run__study").order_by("run_id", "item_id",
                                                                                         "sample_index")
    serializer_class = ModelResponseSerializer

    def get_queryset(self):
        qs = super().get_queryset()
        params = self.request.query_params
        for param, lookup in (("run", "run_id"), ("study", "run__study__slug"), ("status", "status"),
                              ("item", "item_id")):
            value = params.get(param)
            if value:
                if lookup.endswith("_id") and not value.isdigit():
                    raise serializers.ValidationError({param: "must be a number"})
                qs = qs.filter(**{lookup: value})
        return qs
