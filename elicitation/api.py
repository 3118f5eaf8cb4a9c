"""REST endpoints of model endpoints, runs (create, start, cancel, resume, refine, progress), model responses,
and a study's declared agents (POST /api/studies/{slug}/run-agents/).

Writes go through the same functions as the admin and ``manage.py elicit`` (elicitation.runs): a run is
validated by ``create_run`` (ValidationError → 400 naming the field) and state changes that do not apply
(starting a run twice) answer 409 with the reason.
"""
from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError
from django.db.models import ProtectedError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response as ApiResponse
from rest_framework.views import APIView

from access.api import OwnedViewSetMixin, SharingSerializerMixin
from access.ownership import require, visible
from config.filters import ChoiceFilter, IdFilter, SlugFilter, StudyFilter
from surveys.api import Detail, SlugField, drf_errors
from surveys.models import Item, Study

from . import idempotency, preflight
from .admin_views import progress_with_estimate
from .models import ElicitationRun, ModelEndpoint, ModelResponse
from .refine_request import MODES, NOT_REFINABLE, REFINE_PERMS, create_and_start, field_errors, refusal
from .run_settings import MAX_SAMPLES, MAX_TEMPERATURE, MAX_TOKENS, REFINE_SETTINGS, SEED_BOUND
from .runs import RunStateError, cancel_run, create_run, progress, start_run


CHECK_HELP = ("Send one cheap request to the endpoint first and refuse (with what failed, naming the URL) if "
              "it does not answer as an API should; false skips the check (elicitation.preflight).")



class RefineSerializer(serializers.Serializer):
    """What ``manage.py refine`` takes (the source run is the one in the URL)."""

    endpoint = SlugField(slug_field="name", queryset=ModelEndpoint.objects.all(), required=False, allow_null=True,
                         help_text="Endpoint name; default: the source run's.")
    shown = serializers.IntegerField(min_value=1, max_value=1000, default=3, help_text="Answers shown (e).")
    setting = serializers.ChoiceField(choices=REFINE_SETTINGS, default="single")
    draw_seed = serializers.IntegerField(min_value=-SEED_BOUND, max_value=SEED_BOUND, default=0)
    mode = serializers.ChoiceField(choices=MODES, default=ElicitationRun.Mode.GREEDY)
    samples = serializers.IntegerField(min_value=1, max_value=MAX_SAMPLES, default=1)
    temperature = serializers.FloatField(min_value=0, max_value=MAX_TEMPERATURE, required=False, allow_null=True,
                                         help_text="Default: 1.0 when sampled, 0 when greedy.")
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=-SEED_BOUND, max_value=SEED_BOUND)
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS, default=256)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    check = serializers.BooleanField(default=True, help_text="Send the endpoint one cheap request first and refuse "
                                                            "if it fails (elicitation.preflight); false skips it.")

class ModelEndpointSerializer(SharingSerializerMixin, serializers.ModelSerializer):
    key_set = serializers.SerializerMethodField(help_text="Whether the key's environment variable is set "
                                                          "(for this web process; the key is never shown).")
    check = serializers.BooleanField(write_only=True, default=True, help_text=CHECK_HELP)

    class Meta:
        model = ModelEndpoint
        exclude = ["notes"]

    def get_key_set(self, endpoint: ModelEndpoint) -> bool:
        return not endpoint.key_problem() and bool(endpoint.api_key())

    def validate(self, attrs: dict) -> dict:
        """The model's own checks, as in the admin form: a base URL at a public address (or an allowed network:
        elicitation.destinations), a key variable that may be sent to it (elicitation.key_env)."""
        check = attrs.pop("check", True)
        endpoint = ModelEndpoint()
        if self.instance is not None:  # a partial update is checked with the fields it leaves as they are
            for field in ModelEndpoint._meta.concrete_fields:
                setattr(endpoint, field.attname, getattr(self.instance, field.attname))
        concrete = {field.name for field in ModelEndpoint._meta.concrete_fields}
        for field, value in attrs.items():
            if field in concrete:  # not the sharing list (many-to-many): it has nothing to check here
                setattr(endpoint, field, value)
        try:
            endpoint.clean()
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        if check and (problem := preflight.problem(endpoint)):
            raise serializers.ValidationError({"check": [f"pre-flight check failed: {problem}"]})
        return attrs


class ElicitationRunSerializer(serializers.ModelSerializer):
    study = serializers.SlugRelatedField(slug_field="slug", read_only=True)
    endpoint = serializers.SlugRelatedField(slug_field="name", read_only=True)
    model = serializers.CharField(source="endpoint.model", read_only=True)
    progress = serializers.SerializerMethodField()

    class Meta:
        model = ElicitationRun
        exclude = ["idempotency_fingerprint"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_progress(self, run: ElicitationRun) -> dict:
        data = progress(run, failures=20)
        return {k: v for k, v in data.items() if k not in ("run", "status", "status_reason")}


class RunCreateSerializer(serializers.Serializer):
    """What ``manage.py elicit`` takes; items by key (empty: every main item of the study)."""

    study = SlugField(slug_field="slug", queryset=Study.objects.all())
    endpoint = SlugField(slug_field="name", queryset=ModelEndpoint.objects.all())
    mode = serializers.ChoiceField(choices=ElicitationRun.Mode.choices, default=ElicitationRun.Mode.GREEDY)
    items = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list,
                                  max_length=100_000, help_text="Item keys of the study; empty: every main item.")
    samples = serializers.IntegerField(min_value=1, max_value=MAX_SAMPLES, default=1)
    temperature = serializers.FloatField(min_value=0, max_value=MAX_TEMPERATURE, default=0.0)
    seed = serializers.IntegerField(required=False, allow_null=True, min_value=-SEED_BOUND, max_value=SEED_BOUND)
    few_shot = serializers.BooleanField(default=True)
    max_tokens = serializers.IntegerField(min_value=1, max_value=MAX_TOKENS, default=8)
    top_logprobs = serializers.IntegerField(min_value=0, max_value=32_767, default=20)
    budget_usd = serializers.DecimalField(max_digits=12, decimal_places=4, required=False, allow_null=True)
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    prompt_version = serializers.CharField(max_length=50, required=False, allow_blank=True, default="")
    prompt_style = serializers.CharField(max_length=30, required=False, default="standard",
                                         help_text="One of the study's kind's prompt styles (e.g. standard, cot).")
    condition = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                      help_text="A study with [[factors]]: the cell the run asks under (empty: "
                                      "the first cell).")
    start = serializers.BooleanField(default=False, help_text="Start it at once (queue its items).")
    check = serializers.BooleanField(default=True, help_text=CHECK_HELP + " A run on an endpoint that fails it is "
                                                             "not created (409).")

    def validate(self, attrs: dict) -> dict:
        keys = attrs.get("items") or []
        if keys:
            study = attrs["study"]
            found = {i.key: i for i in Item.objects.filter(study=study, key__in=keys, is_demonstration=False)}
            missing = [k for k in keys if k not in found]
            if missing:
                raise serializers.ValidationError(
                    {"items": f"not main items of {study.slug}: {', '.join(missing[:5])}"})
            attrs["items"] = [found[k] for k in dict.fromkeys(keys)]
        return attrs


CHECK_PARAMETER = OpenApiParameter("check", bool, description=CHECK_HELP + " (query parameter: check=false)")


def check_wanted(request) -> bool:
    """The ``check`` query parameter (default true); 400 when it is not a boolean."""
    raw = request.query_params.get("check")
    if raw is None:
        return True
    try:
        return serializers.BooleanField().to_internal_value(raw)
    except serializers.ValidationError as exc:
        raise serializers.ValidationError({"check": exc.detail}) from None


class RunFilter(django_filters.FilterSet):
    study = StudyFilter("study__slug")
    status = ChoiceFilter("status", ElicitationRun.Status.choices)
    endpoint = SlugFilter("endpoint__name", help_text="an endpoint's name")

    class Meta:
        model = ElicitationRun
        fields = ["study", "status", "endpoint"]


class ModelResponseFilter(django_filters.FilterSet):
    run = IdFilter("run_id", help_text="a run's id")
    study = StudyFilter("run__study__slug")
    status = ChoiceFilter("status", ModelResponse.Status.choices)
    item = IdFilter("item_id", help_text="an item's id")

    class Meta:
        model = ModelResponse
        fields = ["run", "study", "status", "item"]


ProgressSchema = OpenApiTypes.OBJECT


class ModelEndpointViewSet(OwnedViewSetMixin, viewsets.ModelViewSet):
    """Model endpoints (any OpenAI-compatible API). ``api_key_env`` is the NAME of the environment variable
    holding the key; the key itself is never stored or shown. Deleting an endpoint with runs is refused (409)."""

    queryset = ModelEndpoint.objects.all()
    serializer_class = ModelEndpointSerializer
    lookup_field = "name"

    @extend_schema(responses={204: None, 409: Detail})
    def destroy(self, request, *args, **kwargs):
        endpoint = self.get_object()
        try:
            endpoint.delete()
        except ProtectedError:
            return ApiResponse({"detail": f"endpoint {endpoint.name} has runs; it cannot be deleted."},
                               status=status.HTTP_409_CONFLICT)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    create=extend_schema(
        summary="Create a run (a draft; \"start\": true starts it at once)",
        description="With an `Idempotency-Key` header, sending the same request again (after a timeout or an "
                    "error) answers 200 with the run the first one created instead of creating a second run; "
                    "the same key with another body is refused (422). When the broker cannot be reached at "
                    "start, the run is still created and started: `status_reason` says \"queued, broker "
                    "unavailable\" and its items are queued once the broker is back.",
        parameters=[OpenApiParameter(idempotency.HEADER, str, OpenApiParameter.HEADER, required=False,
                                     description=f"Any unique string (at most {idempotency.MAX_LENGTH} "
                                                 "characters), e.g. a UUID.")],
        request=RunCreateSerializer,
        responses={200: ElicitationRunSerializer, 201: ElicitationRunSerializer, 409: Detail,
                   422: Detail}),
)
class ElicitationRunViewSet(OwnedViewSetMixin, viewsets.GenericViewSet, viewsets.mixins.ListModelMixin,
                            viewsets.mixins.RetrieveModelMixin, viewsets.mixins.CreateModelMixin):
    """Runs, each with its progress; create, start, cancel and resume them."""

    queryset = ElicitationRun.objects.select_related("study", "endpoint").order_by("-created_at")
    serializer_class = ElicitationRunSerializer
    filterset_class = RunFilter
    required_permissions = {
        "start": ["elicitation.change_elicitationrun"],
        "cancel": ["elicitation.change_elicitationrun"],
        "resume": ["elicitation.change_elicitationrun"],
        "progress": ["elicitation.view_elicitationrun"],
        "refine": list(REFINE_PERMS),
    }

    def create(self, request, *args, **kwargs):
        try:
            key = idempotency.request_key(request.headers)
            body_hash = idempotency.fingerprint(request.data)
            if earlier := idempotency.earlier_run(request.user, key, body_hash):
                return self._replayed(earlier)
        except idempotency.IdempotencyError as exc:
            return ApiResponse({"detail": str(exc)}, status=exc.status)
        data = RunCreateSerializer(data=request.data, context=self.get_serializer_context())
        data.is_valid(raise_exception=True)
        options = dict(data.validated_data)
        start = options.pop("start")
        check = options.pop("check")
        try:  # a run on an endpoint that fails its pre-flight check is not created
            run = create_run(options.pop("study"), options.pop("endpoint"), options.pop("mode"),
                             created_by=request.user, idempotency_key=key, idempotency_fingerprint=body_hash,
                             before_save=lambda e: preflight.require(e, check), **options)
        except (DjangoValidationError, IntegrityError) as exc:
            # a request racing with the same key created its run since the look above (the model's validation
            # or the database's unique constraint refused the second): answer with that run
            if key and (earlier := idempotency.earlier_run(request.user, key, body_hash)):
                return self._replayed(earlier)
            if isinstance(exc, IntegrityError):
                raise
            raise drf_errors(exc) from None
        except preflight.PreflightFailed as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        if start:
            try:
                start_run(run)
            except RunStateError as exc:
                return ApiResponse({"detail": str(exc), "run": run.pk}, status=status.HTTP_409_CONFLICT)
            run.refresh_from_db()
        return ApiResponse(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    def _replayed(self, run: ElicitationRun) -> ApiResponse:
        return ApiResponse(self.get_serializer(run).data, status=status.HTTP_200_OK,
                           headers={"Idempotent-Replayed": "true"})

    def _transition(self, do, sends: bool = False) -> ApiResponse:
        """``do(run)``; ``sends``: it sends requests with the endpoint's key, so the endpoint must be the
        user's own or shared with them too (403 otherwise)."""
        run = self.get_object()
        if sends:
            require(self.request.user, run.endpoint)
        try:
            do(run)
        except RunStateError as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return ApiResponse(self.get_serializer(run).data)

    @extend_schema(summary="Start a draft run (queue its items)", request=None, parameters=[CHECK_PARAMETER],
                   responses={200: ElicitationRunSerializer, 409: Detail})
    @action(detail=True, methods=["post"])
    def start(self, request, pk=None, format=None):
        return self._transition(lambda run: preflight.start(run, check_wanted(request)), sends=True)

    @extend_schema(summary="Cancel a run (no new request; answers so far are kept)", request=None,
                   responses={200: ElicitationRunSerializer, 409: Detail})
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None, format=None):
        def do(run: ElicitationRun) -> None:
            if not cancel_run(run, reason=f"cancelled through the API by {request.user}"):
                raise RunStateError(f"run {run.pk} is {run.get_status_display().lower()}, not running")
        return self._transition(do)

    @extend_schema(summary="Resume a run (ask again the failed and missing answers)", request=None,
                   parameters=[CHECK_PARAMETER], responses={200: ElicitationRunSerializer, 409: Detail})
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None, format=None):
        return self._transition(lambda run: preflight.resume(run, check_wanted(request)), sends=True)

    @extend_schema(summary="Self-refine a run: create a refinement run of its answers and start it",
                   description="The options of `manage.py refine`. 409 when the run cannot be refined (a "
                               "refinement itself, answers of a kind that cannot be refined, no parsed answer yet, or "
                               "the new run could not start: then `run` is its id).",
                   request=RefineSerializer, responses={201: ElicitationRunSerializer, 409: Detail})
    @action(detail=True, methods=["post"])
    def refine(self, request, pk=None, format=None):
        source = self.get_object()
        if problem := refusal(source):
            return ApiResponse({"detail": problem}, status=status.HTTP_409_CONFLICT)
        data = RefineSerializer(data=request.data, context=self.get_serializer_context())
        data.is_valid(raise_exception=True)
        try:
            run, problem = create_and_start(source, created_by=request.user, **data.validated_data)
        except DjangoValidationError as exc:
            errors = field_errors(exc)
            if NOT_REFINABLE in errors:
                return ApiResponse({"detail": " ".join(errors[NOT_REFINABLE])}, status=status.HTTP_409_CONFLICT)
            return ApiResponse(errors, status=status.HTTP_400_BAD_REQUEST)
        if problem:
            return ApiResponse({"detail": problem, "run": run.pk}, status=status.HTTP_409_CONFLICT)
        run.refresh_from_db()
        return ApiResponse(self.get_serializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Progress of a run (what the run page polls), with the estimate of what is left",
                   responses={200: ProgressSchema})
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None, format=None):
        return ApiResponse(progress_with_estimate(self.get_object()))


class ModelResponseSerializer(serializers.ModelSerializer):
    item_key = serializers.CharField(source="item.key", read_only=True, allow_null=True,
                                     help_text="The item's key (empty for an attention check's answer: check_key).")
    expression = serializers.CharField(source="item.expression", read_only=True, allow_null=True)
    study = serializers.CharField(source="run.study.slug", read_only=True)
    mode = serializers.CharField(source="run.mode", read_only=True)

    class Meta:
        model = ModelResponse
        exclude = ["lease_owner", "lease_until"]


class ModelResponseViewSet(OwnedViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Model answers; filter with ?run=<id>, ?study=<slug>, ?status=…, ?item=<id>."""

    queryset = ModelResponse.objects.select_related("item", "run", "run__study").order_by("run_id", "item_id",
                                                                                         "sample_index")
    serializer_class = ModelResponseSerializer
    filterset_class = ModelResponseFilter


class AgentOutcomeSchema(serializers.Serializer):
    agent = serializers.CharField(help_text="The agent's name in the definition.")
    action = serializers.ChoiceField(choices=["started", "skipped"])
    run = serializers.IntegerField(allow_null=True, help_text="The run started, or the one that made it skip.")
    reason = serializers.CharField(help_text="Why it was skipped (empty when started).")
    condition = serializers.CharField(required=False, help_text="A study with [[factors]]: the cell the run asks "
                                      "under (one run per agent and cell).")


class RunAgentsResult(serializers.Serializer):
    started = AgentOutcomeSchema(many=True)
    skipped = AgentOutcomeSchema(many=True)


class RunAgentsView(APIView):
    """POST /api/studies/{slug}/run-agents/: start the agents the study's definition declares that have no run
    on its current version (elicitation.declared_agents)."""

    required_permissions = {"POST": ["elicitation.add_elicitationrun", "elicitation.change_elicitationrun"]}

    @extend_schema(summary="Start the study's declared agents ([[agents]]) not run yet on its current version",
                   description="Those running or done on the current version are skipped (with the reason). 409 "
                               "when an agent cannot start (no such endpoint, key unset, no participants for its "
                               "personas, pre-flight check failed): then none is started.",
                   request=None, parameters=[CHECK_PARAMETER],
                   responses={200: RunAgentsResult, 404: Detail, 409: Detail})
    def post(self, request, slug: str):
        from django.shortcuts import get_object_or_404

        from .declared_agents import AgentError, start_agents

        study = get_object_or_404(visible(Study.objects.all(), request.user), slug=slug)
        try:
            outcomes = start_agents(study, request.user, check=check_wanted(request))
        except AgentError as exc:
            return ApiResponse({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return ApiResponse({kind: [o.as_dict() for o in outcomes if o.action == action]
                            for kind, action in (("started", "started"), ("skipped", "skipped"))})
