"""The client's address as the throttles and the login lockout see it.

Behind ``TRUSTED_PROXY_COUNT`` reverse proxies, each of which appends the address it received the request
from to ``X-Forwarded-For``, the client is the hop that many places from the right: everything left of it was
written by the client and may be forged. With no proxy (the default) it is ``REMOTE_ADDR``. A header with fewer
hops than proxies configured did not pass through all of them, so ``REMOTE_ADDR`` is used.
"""
from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING

from django.conf import settings

if TYPE_CHECKING:  # settings.py imports proxy_count before Django is set up
    from django.http import HttpRequest


def proxy_count(environ: dict[str, str]) -> int:
    """``TRUSTED_PROXY_COUNT`` from ``environ``; the deprecated ``TRUST_X_FORWARDED_FOR=1`` means 1.

    ValueError when both are set differently or the count is not a non-negative integer.
    """
    count_text = environ.get("TRUSTED_PROXY_COUNT", "").strip()
    legacy = environ.get("TRUST_X_FORWARDED_FOR", "").strip().lower()
    if legacy not in ("", "0", "1", "true", "false", "yes", "no", "on", "off"):
        raise ValueError(f"TRUST_X_FORWARDED_FOR={legacy!r} is not a boolean; set TRUSTED_PROXY_COUNT instead")
    legacy_count = None if legacy == "" else int(legacy in ("1", "true", "yes", "on"))
    if count_text:
        if not count_text.isdigit():
            raise ValueError(f"TRUSTED_PROXY_COUNT={count_text!r}: expected the number of reverse proxies (0, 1, 2…)")
        if legacy_count is not None and legacy_count != int(count_text):
            raise ValueError("TRUST_X_FORWARDED_FOR is deprecated and disagrees with TRUSTED_PROXY_COUNT: "
                             "remove TRUST_X_FORWARDED_FOR")
        return int(count_text)
    return legacy_count or 0


def _valid(address: str) -> str | None:
    try:
        return str(ipaddress.ip_address(address.strip().strip("[]")))
    except ValueError:
        return None


def client_address(request: HttpRequest | None) -> str:
    """The client's address: the hop ``TRUSTED_PROXY_COUNT`` places from the right of X-Forwarded-For,
    or REMOTE_ADDR without proxies (or when the header is missing, too short or not an address); "" when
    unknown (no request, as in a login made by code; a Unix socket), which django-axes stores as NULL."""
    if request is None:
        return ""
    remote = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < proxies:
        return remote
    return _valid(hops[-proxies]) or remote
