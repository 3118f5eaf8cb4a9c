"""Error pages: under /api/ the answer is JSON (``{"detail": …}``), as every API client expects; elsewhere
Django's own pages. Used when DEBUG is off (production, tests)."""
from __future__ import annotations

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": "Not found."}, status=404)
    return defaults.page_not_found(request, exception)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """A request Django refuses before any view (too many fields, a body over the size limits, a bad host)."""
    if _is_api(request):
        limits = (RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent)  # say which limit; nothing else
        return JsonResponse({"detail": f"Bad request: {exception}" if isinstance(exception, limits) else "Bad request."},
                            status=400)
    return defaults.bad_request(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse({"detail": "Server error."}, status=500)
    return defaults.server_error(request)
