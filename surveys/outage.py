"""Database outages without raw error pages.

A request that fails because the database is unreachable (``OperationalError`` / ``InterfaceError``,
e.g. PostgreSQL restarting) is retried once, after ``OUTAGE_RETRY_DELAY`` seconds on a fresh connection —
the participant flow is safe to repeat: its writes are atomic and a repeated answer is recognised as
already saved. If it fails again, the person gets a calm page in the study's look (HTTP 503,
``Retry-After``) that says their answers so far are saved and reloads itself after ``OUTAGE_REFRESH_SECONDS``
(the API gets a JSON 503). Never Django's debug traceback, even with DEBUG on.

How: a ``got_request_exception`` receiver marks the request when the exception is a database outage (it
fires for exceptions anywhere in the view or middleware, before Django turns them into a 500), and
:class:`OutageMiddleware`, the outermost middleware, retries or replaces that response. Django's session
middleware turns a database error while it saves a changed session into HTTP 400 "SessionInterrupted";
:class:`SessionMiddleware` (used in its place) raises the database error instead, so that it is the same outage.
"""
from __future__ import annotations

import logging
import sys
import time

from django.conf import settings
from django.contrib.sessions.exceptions import SessionInterrupted
from django.contrib.sessions.middleware import SessionMiddleware as DjangoSessionMiddleware
from django.core.signals import got_request_exception
from django.db import InterfaceError, OperationalError, connections
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)
OUTAGE_ERRORS = (OperationalError, InterfaceError)
_MARK = "_hedgelab_db_outage"


@receiver(got_request_exception)
def _mark_outage(sender, request=None, **kwargs) -> None:
    exc = sys.exc_info()[1]
    if request is not None and isinstance(exc, OUTAGE_ERRORS):
        setattr(request, _MARK, repr(exc)[:300])


def outage_cause(exc: BaseException) -> BaseException | None:
    """The database outage error in ``exc``'s chain of causes, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, OUTAGE_ERRORS):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


class SessionMiddleware(DjangoSessionMiddleware):
    """Django's session middleware, except that a session the database could not save because it was
    unreachable raises that database error (an outage: retried, then the calm page) instead of HTTP 400
    "SessionInterrupted". A session deleted by a concurrent logout still gets Django's 400."""

    def process_response(self, request: HttpRequest, response: HttpResponse) -> HttpResponse:
        try:
            return super().process_response(request, response)
        except SessionInterrupted as exc:
            cause = outage_cause(exc)
            if cause is None:
                raise
            raise cause from exc


def _reset_connections() -> None:
    """Drop connections an outage broke, so the next query opens a fresh one."""
    for conn in connections.all(initialized_only=True):
        try:
            if conn.in_atomic_block:
                continue
            conn.close()
        except Exception:  # noqa: BLE001 - closing a dead connection may fail; it is dropped either way
            pass


def outage_response(request: HttpRequest) -> HttpResponse:
    """The calm page (or JSON for the API): HTTP 503 with Retry-After; the page reloads itself (GET)."""
    seconds = settings.OUTAGE_REFRESH_SECONDS
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(
            {"detail": "The database is briefly unavailable; please retry in a few seconds."}, status=503)
    else:
        target = request.get_full_path() if request.method == "GET" else request.path
        html = render_to_string("surveys/outage.html", {"seconds": seconds, "target": target})  # no DB, no session
        response = HttpResponse(html, status=503)
    response["Retry-After"] = str(seconds)
    response["Cache-Control"] = "no-store"
    return response


class OutageMiddleware:
    """Outermost middleware: retry a request once after a database outage, then show the calm page."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        reason = getattr(request, _MARK, None)
        if reason is None:
            return response
        log.warning("database unavailable during %s %s (%s); retrying once", request.method, request.path, reason)
        delattr(request, _MARK)
        _reset_connections()
        time.sleep(settings.OUTAGE_RETRY_DELAY)
        response = self.get_response(request)
        if getattr(request, _MARK, None) is None:
            return response
        _reset_connections()
        return outage_response(request)
