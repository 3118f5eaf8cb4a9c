"""``/healthz``: for the proxy or load balancer in front of the web processes.

200 ``{"status": "ok", ...}`` when every service a web request needs answers: the database and Django's cache
(the Redis of ``CACHE_URL`` when set: every entry and login needs it); 503 otherwise. ``?broker=1`` (or
``?all=1``) also checks what the workers need: the Celery broker and the Redis of the per-endpoint limits
(``ELICITATION_LIMITS_URL``) when one is set (a check for a dashboard, not for every few seconds).
No login, no data. With ``DEBUG`` off, a failure's details (hosts, ports, driver errors) are logged and shown
to staff only; anonymous callers read ``"error"``.
"""
from __future__ import annotations

import logging
import secrets
import time
from typing import Callable

from django.conf import settings
from django.core.cache import caches
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

log = logging.getLogger(__name__)


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def check_cache() -> str:
    """Write and read back a short-lived key in Django's cache."""
    cache, token = caches["default"], secrets.token_hex(8)
    cache.set("healthz", token, timeout=30)
    if cache.get("healthz") != token:
        raise RuntimeError("the cache did not return the value just written")
    return "ok"


def check_broker(timeout: float = 3.0) -> str:
    from config.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
    return "ok"


def check_limits() -> str:
    """PING the Redis that holds the per-endpoint limits."""
    import redis

    redis.Redis.from_url(settings.ELICITATION_LIMITS_URL, socket_timeout=3, socket_connect_timeout=3).ping()
    return "ok"


def checks_for(request: HttpRequest) -> dict[str, Callable[[], str]]:
    """The services the settings name: what web requests need, plus the workers' on request."""
    checks: dict[str, Callable[[], str]] = {"database": check_database, "cache": check_cache}
    if request.GET.get("broker") in ("1", "true") or request.GET.get("all") in ("1", "true"):
        checks["broker"] = check_broker
        if settings.ELICITATION_LIMITS_URL != "database":
            checks["limits"] = check_limits
    return checks


def _may_see_details(request: HttpRequest) -> bool:
    if settings.DEBUG:
        return True
    try:
        return bool(request.user.is_staff)
    except Exception:  # noqa: BLE001 - the session needs the database, which may be the failing service
        return False


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    started = time.monotonic()
    results, failures = {}, {}
    for name, check in checks_for(request).items():
        try:
            results[name] = check()
        except Exception as exc:  # any failure means "do not send traffic here"
            failures[name] = f"error: {type(exc).__name__}: {exc}"[:300]
            log.warning("healthz: %s %s", name, failures[name])
    if failures:
        results |= failures if _may_see_details(request) else {name: "error" for name in failures}
    body = {"status": "unavailable" if failures else "ok", **results,
            "ms": round((time.monotonic() - started) * 1000, 1)}
    return JsonResponse(body, status=503 if failures else 200)
