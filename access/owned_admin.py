"""The admin side of ownership: lists show what the user may see, pages and actions refuse the rest."""
from __future__ import annotations

from django.contrib import admin
from django.contrib.admin.utils import get_fields_from_path
from django.contrib.auth import get_user_model

from .ownership import OWNED_BY, may, may_manage_sharing, visible

SHARING_FIELDS = ("owner", "shared_with")


def _shared(obj) -> bool:
    """A study or endpoint: it has an owner and a sharing list."""
    return any(f.name == "shared_with" for f in obj._meta.get_fields())


class OwnedAdminMixin:
    """For a ModelAdmin of a model in access.ownership.OWNED_BY: the list (and so every admin action) holds
    only the rows the user may see; an object page of another researcher's data is refused; study and
    endpoint choices are the user's own and shared ones; a new study or endpoint is owned by its creator;
    only the owner (or a superuser) changes the owner and the sharing list."""

    def get_queryset(self, request):
        return visible(super().get_queryset(request), request.user)

    def has_view_permission(self, request, obj=None):
        return super().has_view_permission(request, obj) and may(request.user, obj)

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and may(request.user, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and may(request.user, obj)

    def get_list_filter(self, request):
        """A filter on a study or endpoint offers only those of the rows listed (not every researcher's)."""
        out = []
        for entry in super().get_list_filter(request):
            if isinstance(entry, str):
                field = get_fields_from_path(self.model, entry)[-1]
                if field.is_relation and field.related_model._meta.label_lower in OWNED_BY:
                    entry = (entry, admin.RelatedOnlyFieldListFilter)
            out.append(entry)
        return out

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        related = db_field.related_model
        if related is not None and related._meta.label_lower in OWNED_BY and "queryset" not in kwargs:
            kwargs["queryset"] = visible(related._default_manager.all(), request.user)
        elif db_field.name == "owner":
            kwargs.setdefault("queryset", get_user_model().objects.filter(is_staff=True, is_active=True))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "shared_with":
            kwargs.setdefault("queryset", get_user_model().objects.filter(is_staff=True, is_active=True))
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        fields = list(super().get_readonly_fields(request, obj))
        if obj is not None and _shared(obj) and not may_manage_sharing(request.user, obj):
            fields += [f for f in SHARING_FIELDS if f not in fields]
        return fields

    def save_model(self, request, obj, form, change):
        if not change and _shared(obj) and obj.owner_id is None:
            obj.owner = request.user
        super().save_model(request, obj, form, change)
