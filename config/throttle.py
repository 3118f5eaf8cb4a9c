"""Counters in Django's cache that slow down guessing: failed admin logins, per client address and per
username (``LOGIN_MAX_FAILURES`` in ``LOGIN_LOCKOUT_SECONDS``), and new participants per client address
(surveys.flow; ``ENTRY_RATE``). The cache is per process unless ``CACHE_URL`` points at Redis, which
gunicorn with several workers should use.
"""
from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.cache import cache
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse


def client_ip(request: HttpRequest | None) -> str:
    """The client's address: REMOTE_ADDR, or the first X-Forwarded-For hop when ``TRUST_X_FORWARDED_FOR``
    is on (behind a proxy that sets it)."""
    if request is None:
        return "-"
    if getattr(settings, "TRUST_X_FORWARDED_FOR", False):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded:
            return forwarded.split(",")[0].strip()
    return request.META.get("REMOTE_ADDR", "-")


def _key(kind: str, value: str) -> str:
    return f"throttle:{kind}:{hashlib.sha256(value.encode()).hexdigest()[:32]}"


def hit(kind: str, value: str, window: int) -> int:
    """Count one event for (``kind``, ``value``) in a window of ``window`` seconds; the count so far."""
    key = _key(kind, value)
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.add(key, 1, timeout=window)
        return 1


def count(kind: str, value: str) -> int:
    return int(cache.get(_key(kind, value)) or 0)


def reset(kind: str, value: str) -> None:
    cache.delete(_key(kind, value))


# --- admin login ------------------------------------------------------------------------------
def _username(credentials: dict | None, request: HttpRequest | None) -> str:
    name = (credentials or {}).get("username") or (request.POST.get("username", "") if request else "")
    return str(name).strip().lower()[:150]


def login_locked(request: HttpRequest) -> bool:
    """Too many failed logins from this address, or for the username being tried."""
    limit = settings.LOGIN_MAX_FAILURES
    return (count("login-ip", client_ip(request)) >= limit
            or count("login-user", _username(None, request)) >= limit)


@receiver(user_login_failed)
def _failed(sender, credentials=None, request=None, **kwargs) -> None:
    window = settings.LOGIN_LOCKOUT_SECONDS
    hit("login-ip", client_ip(request), window)
    hit("login-user", _username(credentials, request), window)


@receiver(user_logged_in)
def _succeeded(sender, request=None, user=None, **kwargs) -> None:
    if user is not None:
        reset("login-user", user.get_username().lower())


class LoginThrottleMiddleware:
    """A POST to the admin login page after too many failures gets HTTP 429 with a page saying when to
    try again; the password is not even checked."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path == reverse("admin:login") and login_locked(request):
            minutes = max(1, settings.LOGIN_LOCKOUT_SECONDS // 60)
            response = TemplateResponse(request, "admin/login_locked.html",
                                        {"title": "Too many failed logins", "minutes": minutes}, status=429)
            response["Retry-After"] = str(settings.LOGIN_LOCKOUT_SECONDS)
            return response.render()
        return self.get_response(request)
