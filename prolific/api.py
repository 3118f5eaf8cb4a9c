"""REST endpoints of the Prolific integration (staff + model permission, config.permissions).

- ``/api/prolific/studies/`` — a study's Prolific settings (places, reward, review policy, failed-attention
  action and message); ``…/{slug}/publish/``, ``…/{slug}/sync/``, ``…/{slug}/send/`` (queued decisions);
- ``/api/prolific/submissions/?study=<slug>&state=queued`` — submissions and the decisions about them.
"""
from __future__ import annotations

import django_filters
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from access.api import OwnedViewSetMixin
from config.permissions import RAW_IDS
from config.filters import ChoiceFilter, SlugFilter, StudyFilter
from surveys.api import Detail, SlugField, drf_errors
from surveys.models import Study

from .client import ProlificError
from .models import ProlificStudy, Submission
from .review import PublishError, publish, send_decisions, sync

CHANGE = ["prolific.change_prolificstudy"]
#: What publishing sends to Prolific: fixed here once the study is published.
PUBLISHED_FIELDS = ("places", "reward_cents", "estimated_minutes", "description")


class ProlificStudySerializer(serializers.ModelSerializer):
    study = SlugField(slug_field="slug", queryset=Study.objects.all())

    class Meta:
        model = ProlificStudy
        exclude = ["id"]
        read_only_fields = ["prolific_id", "prolific_status", "published_at", "synced_at", "sync_error"]

    def validate(self, attrs: dict) -> dict:
        link = ProlificStudy(**{**({f.name: getattr(self.instance, f.name) for f in ProlificStudy._meta.fields}
                                   if self.instance else {}), **attrs})
        if self.instance and "study" in attrs and attrs["study"].pk != self.instance.study_id:
            raise serializers.ValidationError({"study": "the study of a Prolific link cannot change."})
        if not self.instance and ProlificStudy.objects.filter(study=attrs.get("study")).exists():
            raise serializers.ValidationError({"study": already_linked(attrs["study"])})
        if self.instance and self.instance.published_at:
            sent = {name: "sent to Prolific at publication; change it on Prolific's site."
                    for name in PUBLISHED_FIELDS if name in attrs and attrs[name] != getattr(self.instance, name)}
            if sent:
                raise serializers.ValidationError(sent)
        try:
            link.full_clean(exclude=["study", "id"], validate_unique=False)
        except DjangoValidationError as exc:
            raise drf_errors(exc) from None
        return attrs


def already_linked(study: Study) -> str:
    return (f"study {study.slug!r} already has its Prolific settings: change them with "
            f"PATCH /api/prolific/studies/{study.slug}/")


SyncResultSchema = inline_serializer("ProlificSyncResult", {
    "study": serializers.CharField(), "seen": serializers.IntegerField(), "new": serializers.IntegerField(),
    "ended": serializers.DictField(child=serializers.IntegerField(),
                                   help_text="participants marked returned / timed out (their items go back)"),
    "decided": serializers.DictField(child=serializers.IntegerField()),
    "sent": serializers.IntegerField(), "failed": serializers.IntegerField(),
    "errors": serializers.ListField(child=serializers.CharField())})
SendResultSchema = inline_serializer("ProlificSendResult", {"sent": serializers.IntegerField(),
                                                            "failed": serializers.IntegerField()})


class ProlificStudyViewSet(OwnedViewSetMixin, mixins.CreateModelMixin, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    """A study's Prolific settings; publish it, read its submissions, send the queued decisions."""

    queryset = ProlificStudy.objects.select_related("study").order_by("study__slug")
    serializer_class = ProlificStudySerializer
    lookup_field = "study__slug"
    lookup_url_kwarg = "slug"
    required_permissions = {"publish": CHANGE, "sync": CHANGE, "send": CHANGE}

    def perform_create(self, serializer) -> None:
        try:  # two creates at once: the second finds the first's row through the unique study
            with transaction.atomic():
                serializer.save()
        except IntegrityError:
            raise serializers.ValidationError({"study": already_linked(serializer.validated_data["study"])}) from None

    @extend_schema(summary="Create the study on Prolific (link, codes, places) and publish it", request=None,
                   responses={200: ProlificStudySerializer, 409: Detail})
    @action(detail=True, methods=["post"])
    def publish(self, request, slug=None, format=None):
        link = self.get_object()
        try:
            publish(link)
        except PublishError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response(self.get_serializer(link).data)

    @extend_schema(summary="Read the submissions from Prolific now and act on them (the periodic task's work)",
                   request=None, responses={200: SyncResultSchema})
    @action(detail=True, methods=["post"])
    def sync(self, request, slug=None, format=None):
        return Response(sync(self.get_object()).as_dict())

    @extend_schema(summary="Send the queued (and failed) decisions to Prolific", request=None,
                   responses={200: SendResultSchema, 409: Detail})
    @action(detail=True, methods=["post"])
    def send(self, request, slug=None, format=None):
        link = self.get_object()
        try:
            sent, failed = send_decisions(link.submissions.all())
        except ProlificError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        return Response({"sent": sent, "failed": failed})


class SubmissionSerializer(serializers.ModelSerializer):
    study = serializers.CharField(source="prolific_study.study.slug", read_only=True)

    class Meta:
        model = Submission
        exclude = ["prolific_study"]


class SubmissionFilter(django_filters.FilterSet):
    study = StudyFilter("prolific_study__study__slug")
    state = ChoiceFilter("state", Submission.State.choices)
    decision = ChoiceFilter("decision", Submission.Decision.choices)
    status = SlugFilter("status", help_text="Prolific's status, e.g. AWAITING REVIEW")

    class Meta:
        model = Submission
        fields = ["study", "state", "decision", "status"]


class SubmissionViewSet(OwnedViewSetMixin, viewsets.ReadOnlyModelViewSet):
    """Prolific submissions (they name participants by PROLIFIC_PID) and the platform's decisions."""

    queryset = Submission.objects.select_related("prolific_study__study")
    serializer_class = SubmissionSerializer
    filterset_class = SubmissionFilter
    required_permissions = {"list": ["prolific.view_submission", RAW_IDS],
                            "retrieve": ["prolific.view_submission", RAW_IDS]}
