"""The admin login lockout is django-axes (settings ``AXES_*``, fed ``config.client_address``): failures are
counted in the database with atomic updates, listed in the admin (Axes › Access attempts) and cleared with
``manage.py axes_reset``. This module holds the page a locked-out login gets."""
from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse


def lockout_response(request: HttpRequest, original_response: HttpResponse | None = None,
                     credentials: dict | None = None) -> HttpResponse:
    """HTTP 429 with a page saying when to try again (``Retry-After``); the password was not checked."""
    minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
    response = TemplateResponse(request, "admin/login_locked.html",
                                {"title": "Too many failed logins", "minutes": minutes}, status=429)
    response["Retry-After"] = str(settings.LOGIN_LOCKOUT_SECONDS)
    return response.render()
