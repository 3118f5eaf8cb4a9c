"""The API's one permission rule: a staff user who also holds the model permission the admin asks for the
same action (view / add / change / delete of the model).

Every view of the API uses :class:`StaffModelPermission`. A view states what it needs in one of two ways:
- a ``queryset`` (model viewsets): reading needs ``view_<model>``, POST ``add_<model>``, PUT/PATCH
  ``change_<model>``, DELETE ``delete_<model>``;
- ``required_permissions``: a dict from an action name (viewset ``@action``) or an HTTP method (plain
  ``APIView``) to the permission codenames it needs, e.g. ``{"start": ["elicitation.change_elicitationrun"]}``.
  It wins over the queryset rule for the actions and methods it names.
"""
from __future__ import annotations

from rest_framework.permissions import SAFE_METHODS, BasePermission

#: Raw PROLIFIC_PIDs (``?raw_ids=1`` on exports, participant rows) also need this.
RAW_IDS_PERMISSION = "surveys.view_participant"

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
        user = request.user
        if not (user and user.is_authenticated and user.is_staff and user.is_active):
            return False
        return user.has_perms(needed_permissions(request, view))


def can_see_raw_ids(user) -> bool:
    return bool(user and user.is_staff and user.has_perm(RAW_IDS_PERMISSION))
