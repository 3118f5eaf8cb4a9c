"""The API side of ownership: viewsets list and act on what the user may see (others' objects are 404), a
new study or endpoint is owned by its creator, and only its owner (or a superuser) changes its sharing."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from rest_framework import serializers

from .ownership import may_manage_sharing, visible


class OwnedViewSetMixin:
    """For a viewset of a model in access.ownership.OWNED_BY."""

    def get_queryset(self):
        return visible(super().get_queryset(), self.request.user)

    def perform_create(self, serializer):
        if any(f.name == "shared_with" for f in serializer.Meta.model._meta.get_fields()):
            serializer.save(owner=self.request.user)
        else:
            serializer.save()


class UsernameField(serializers.SlugRelatedField):
    """A user by username; a NUL character (which PostgreSQL cannot compare) is "no such user", a 400."""

    def to_internal_value(self, data):
        if isinstance(data, str) and "\x00" in data:
            self.fail("does_not_exist", slug_name=self.slug_field, value="(contains a NUL character)")
        return super().to_internal_value(data)


class SharingSerializerMixin(serializers.Serializer):
    """``owner`` (read-only) and ``shared_with`` (usernames of staff accounts) of a study or endpoint."""

    owner = serializers.SlugRelatedField(slug_field="username", read_only=True, allow_null=True,
                                         help_text="Username of the owner; null: superusers only.")
    shared_with = UsernameField(
        slug_field="username", many=True, required=False,
        queryset=get_user_model().objects.filter(is_staff=True, is_active=True),
        help_text="Usernames of the researchers who may use it as its owner does (only the owner changes this).")

    def validate_shared_with(self, users):
        request = self.context.get("request")
        target = self.instance
        if target is not None and not may_manage_sharing(getattr(request, "user", None), target):
            raise serializers.ValidationError("only its owner (or a superuser) changes who it is shared with.")
        return users
