"""REST endpoints of a study's recruitment channels (surveys.channels): ``/api/channels/`` (filter with
``?study=<slug>``) and ``/api/channels/<id>/``.

Permissions as everywhere (config.permissions: ``surveys.*_recruitmentchannel``, the ones the study admin's
channel table asks for); ownership through the channel's study (access.ownership.OWNED_BY): another
researcher's channels are not found, and their study is not offered. A channel stays in its study; its name is
fixed once participants came in through it (it is in their link and their stored id), and it is not deleted
then (409). Validation is the model's own (``RecruitmentChannel.clean``), as in the admin.
"""
from __future__ import annotations

import copy

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import IntegrityError, transaction
from django.db.models import ProtectedError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.response import Response as ApiResponse

from access.api import OwnedViewSetMixin
from config.filters import study_filterset

from .api import Detail, SlugField, drf_errors
from .channels import entry_link
from .models import RecruitmentChannel, Study


class ChannelSerializer(serializers.ModelSerializer):
    study = SlugField(slug_field="slug", queryset=Study.objects.all(),
                      help_text="The study's slug; fixed once the channel exists.")
    entry_link = serializers.SerializerMethodField(help_text="The link to give out on the channel (its id "
                                                             "parameter, if any, with a placeholder).")
    participants = serializers.SerializerMethodField(help_text="Participants who came in through it.")

    class Meta:
        model = RecruitmentChannel
        fields = ["id", "study", "name", "id_param", "completion_url", "return_url", "entry_link", "participants"]
        validators: list = []  # the name's uniqueness per study is checked in validate(), with a clear message

    def get_entry_link(self, channel: RecruitmentChannel) -> str:
        return entry_link(channel)

    def get_participants(self, channel: RecruitmentChannel) -> int:
        return channel.participants.count()

    def validate(self, attrs: dict) -> dict:
        channel = self.instance
        if channel is not None:
            if "study" in attrs and attrs["study"].pk != channel.study_id:
                raise serializers.ValidationError(
                    {"study": "a channel stays in its study: create one in the other study instead."})
            if "name" in attrs and attrs["name"] != channel.name and channel.participants.exists():
                raise serializers.ValidationError(
                    {"name": "participants came in through this channel: its name (in their link and their "
                             "stored id) is fixed."})
        candidate = copy.copy(channel) if channel is not None else RecruitmentChannel()
        for name, value in attrs.items():
            setattr(candidate, name, value)
        try:
            candidate.full_clean(validate_unique=False, validate_constraints=False)
        except DjangoValidationError as exc:
            raise drf_errors(exc) from None
        same_name = RecruitmentChannel.objects.filter(study=candidate.study, name=candidate.name)
        if channel is not None:
            same_name = same_name.exclude(pk=channel.pk)
        if same_name.exists():
            raise serializers.ValidationError(
                {"name": f"the study {candidate.study.slug} already has a channel named {candidate.name}."})
        return attrs

    def save(self, **kwargs):
        try:
            with transaction.atomic():
                return super().save(**kwargs)
        except IntegrityError:  # the same name saved at the same moment by another request
            raise serializers.ValidationError({"name": "the study already has a channel with this name."}) from None


class ChannelViewSet(OwnedViewSetMixin, viewsets.ModelViewSet):
    """Recruitment channels besides Prolific (the default, which has no row): create, read, update, delete.
    Filter with ?study=<slug>."""

    queryset = RecruitmentChannel.objects.select_related("study").order_by("study__slug", "name")
    serializer_class = ChannelSerializer
    filterset_class = study_filterset(RecruitmentChannel, "study__slug")

    @extend_schema(responses={204: None, 409: Detail})
    def destroy(self, request, *args, **kwargs):
        channel = self.get_object()
        try:
            channel.delete()
        except ProtectedError:
            return ApiResponse({"detail": f"{channel.participants.count()} participant(s) came in through "
                                          f"channel {channel.name}: it cannot be deleted (their answers name it)."},
                               status=status.HTTP_409_CONFLICT)
        return ApiResponse(status=status.HTTP_204_NO_CONTENT)
