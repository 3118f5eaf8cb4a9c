"""``/healthz``: for the proxy or load balancer in front of the web processes.

200 ``{"status": "ok", ...}`` when this process can query the database; 503 otherwise. ``?broker=1`` also
connects to the Celery broker (a check for a dashboard, not for every few seconds). No login, no data.
"""
from __future__ import annotations

import time

from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


def check_database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def check_broker(timeout: float = 3.0) -> str:
    from config.celery import app

    with app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=timeout)
    return "ok"


@never_cache
@require_GET
def health(request: HttpRequest) -> JsonResponse:
    started = time.monotonic()
    checks = {"database": check_database}
    if request.GET.get("broker") in ("1", "true"):
        checks["broker"] = check_broker
    results, healthy = {}, True
    for name, check in checks.items():
        try:
            results[name] = check()
        except Exception as exc:  # any failure means "do not send traffic here"
            results[name] = f"error: {type(exc).__name__}: {exc}"[:300]
            healthy = False
    body = {"status": "ok" if healthy else "unavailable", **results,
            "ms": round((time.monotonic() - started) * 1000, 1)}
    return JsonResponse(body, status=200 if healthy else 503)
