"""The API's one permission rule: a staff user who also holds the model permission the admin asks for the
same action (view / add / change / delete of the model). Raw Prolific ids also need ``surveys.view_participant``.

Every view of the API uses :class:`StaffModelPermission`. A view states what it needs in one of two ways:
- a ``queryset`` (model viewsets): reading needs ``view_<model>``, POST ``add_<model>``, PUT/PATCH
  ``change_<model>``, DELETE ``delete_<model>``;
- ``required_permissions``: a dict from an action name (viewset ``@action``) or an HTTP method (plain
  ``APIView``) to the permission codenames it needs, e.g. ``{"start": ["elicitation.change_elicitationrun"]}``.
  It wins over the queryset rule for the actions and methods it names.
"""
from __future__ import annotations

from typing import Iterable

from django.core.exceptions import PermissionDenied
from rest_framework.permissions import SAFE_METHODS, BasePermission

#: Raw PROLIFIC_PIDs (``?raw_ids=1`` on exports, participant rows) also need this.
RAW_IDS = "surveys.view_participant"


def allowed(user, perms: Iterable[str]) -> bool:
    """True when ``user`` is active staff and holds every permission in ``perms``."""
    return bool(user and user.is_authenticated and user.is_active and user.is_staff and user.has_perms(list(perms)))


def check(user, *perms: str) -> None:
    """PermissionDenied (HTTP 403) unless :func:`allowed` (for plain Django and admin views)."""
    if not allowed(user, perms):
        raise PermissionDenied


_METHOD_ACTION = {"GET": "view", "HEAD": "view", "OPTIONS": "view", "POST": "add", "PUT": "change",
                  "PATCH": "change", "DELETE": "delete"}


def model_permission(model, method: str) -> str:
    """``app.<view|add|change|delete>_<model>`` for an HTTP method."""
    opts = model._meta
    return f"{opts.app_label}.{_METHOD_ACTION.get(method.upper(), 'change')}_{opts.model_name}"


def needed_permissions(request, view) -> list[str]:
    """The permission codenames ``request`` needs on ``view`` (see the module docstring)."""
    explicit: dict[str, list[str]] = getattr(view, "required_permissions", {}) or {}
    action = getattr(view, "action", None)
    if action and action in explicit:
        return list(explicit[action])
    if request.method in explicit:
        return list(explicit[request.method])
    if request.method in SAFE_METHODS and "GET" in explicit:
        return list(explicit["GET"])
    queryset = getattr(view, "queryset", None)
    if queryset is not None:
        return [model_permission(queryset.model, request.method)]
    return []


class StaffModelPermission(BasePermission):
    """Staff AND the model permission of the action (superusers hold every permission)."""

    message = "You need a staff account with the permission for this action (ask an administrator)."

    def has_permission(self, request, view) -> bool:
        return allowed(request.user, needed_permissions(request, view) + list(getattr(view, "extra_perms", ())))


def can_see_raw_ids(user) -> bool:
    return allowed(user, [RAW_IDS])
