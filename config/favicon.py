"""/favicon.ico: the site's icon (static/favicon.svg), so that browsers asking for it on every page (the admin,
the API docs) get an icon instead of a 404 logged in their console."""
from __future__ import annotations

from functools import cache
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

from .paths import site_folder

ICON = site_folder("static") / "favicon.svg"


@cache
def _icon() -> bytes:
    return ICON.read_bytes()


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    """The icon as SVG, cached by browsers for a day."""
    response = HttpResponse(_icon(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
