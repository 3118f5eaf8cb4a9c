"""Refuse requests whose address holds a NUL character (``%00``) with 400 before any view runs.

PostgreSQL cannot store or compare text with NUL, so such a value reaching a query (a slug in the path, a
``?study=`` filter) would be a server error; no real client sends one (found by the API fuzz test).
"""
from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse


class RejectNullCharactersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if "\x00" in request.path or any("\x00" in key or any("\x00" in v for v in values)
                                         for key, values in request.GET.lists()):
            return JsonResponse({"detail": "the address contains a NUL character."}, status=400)
        return self.get_response(request)
