"""Who may do what, in one place: the REST API and the custom admin pages check the same model permissions
as the admin's own pages (staff + ``<app>.<action>_<model>``). Raw Prolific ids additionally need
``surveys.view_participant`` (:data:`RAW_IDS`).

- :class:`ModelPermissions` — DRF permission for model viewsets: GET needs *view*, POST *add*, PUT/PATCH
  *change*, DELETE *delete* of the viewset's model (plus ``extra_perms`` of the view, if any).
- :func:`requires` — a DRF permission class for an ``APIView`` that needs a fixed list of permissions.
- :func:`check` / :func:`admin_perms` — the same rule for plain Django and admin views (403 otherwise).
"""
from __future__ import annotations

from functools import wraps
from typing import Callable, Iterable

from django.core.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission, DjangoModelPermissions

RAW_IDS = "surveys.view_participant"


def allowed(user, perms: Iterable[str]) -> bool:
    """True when ``user`` is active staff and holds every permission in ``perms``."""
    return bool(user and user.is_active and user.is_staff and user.has_perms(list(perms)))


def check(user, *perms: str) -> None:
    """PermissionDenied (HTTP 403) unless :func:`allowed`."""
    if not allowed(user, perms):
        raise PermissionDenied


def may_see_raw_ids(user) -> bool:
    return allowed(user, [RAW_IDS])


class ModelPermissions(DjangoModelPermissions):
    """Staff with the model permission of the request's action; GET/HEAD/OPTIONS need *view*."""

    perms_map = {**DjangoModelPermissions.perms_map,
                 "GET": ["%(app_label)s.view_%(model_name)s"],
                 "OPTIONS": ["%(app_label)s.view_%(model_name)s"],
                 "HEAD": ["%(app_label)s.view_%(model_name)s"]}

    def has_permission(self, request, view) -> bool:
        if getattr(view, "queryset", None) is None and not hasattr(view, "get_queryset"):
            return False  # an APIView without a model must name its permissions (``requires``)
        extra = getattr(view, "extra_perms", ())
        return allowed(request.user, extra) and super().has_permission(request, view)


def requires(*perms: str) -> type[BasePermission]:
    """A DRF permission class: staff holding every one of ``perms``."""

    class Requires(BasePermission):
        def has_permission(self, request, view) -> bool:
            return allowed(request.user, perms)

    Requires.__name__ = f"Requires({', '.join(perms)})"
    return Requires


def admin_perms(*perms: str) -> Callable:
    """Decorator for an admin view function ``view(request, ...)``: 403 unless the user holds ``perms``.
    (Wrap it with ``admin_site.admin_view`` as usual, which sends anonymous users to the login page.)"""

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapper(request, *args, **kwargs):
            check(request.user, *perms)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator
