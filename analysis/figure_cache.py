"""A report's figures rendered once per cached report (analysis/report_cache.py sets the report's ``cache_key``):
below both the report and the report cache, which each import it."""
from __future__ import annotations

from typing import Any, Callable

from django.core.cache import cache

#: a cached report and its figures stay at most this long (a new data version replaces them anyway)
TIMEOUT = 24 * 3600


def rendered(report: Any, kind: str, render: Callable[[], Any]) -> Any:
    """``render()``'s result (figures rendered as ``kind``) once per cached report, from the cache after."""
    key = getattr(report, "cache_key", None)
    if key is None:
        return render()
    key = f"{key}.figures.{kind}"
    value = cache.get(key)
    if value is None:
        value = render()
        cache.set(key, value, TIMEOUT)
    return value
