"""The entry cap's counter: new participants per (study, client address) in a window that starts with the
first of them (``ENTRY_WINDOW_SECONDS``). It must count every entry exactly even when several web processes
admit participants at once, so it is a database row incremented by one UPDATE (``F()``), or an INCR in Redis
when Django's cache is Redis (``CACHE_URL``)."""
from __future__ import annotations

from datetime import timedelta

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.utils import timezone
from django.utils.crypto import salted_hmac

from .models import EntryCount


def _hashed(client: str) -> str:
    """The address keyed with SECRET_KEY: a plain hash of an IPv4 address is undone by trying all 2³²."""
    return salted_hmac("hedgelab.entry_counter", client, algorithm="sha256").hexdigest()


def _count_in_redis(key: str, window: int) -> int:
    """SET NX then INCR: both atomic in Redis; a key that expired in between starts again at 1."""
    cache = caches["default"]
    if cache.add(key, 1, timeout=window):
        return 1
    try:
        return cache.incr(key)
    except ValueError:
        cache.add(key, 1, timeout=window)
        return 1


def _count_in_database(study_id: int, client: str, window: int) -> int:
    """Create the row if missing, then one UPDATE adds 1 (or restarts a window that has ended) and the
    count is read back inside the same transaction, which holds the row's write lock."""
    now = timezone.now()
    ended = Q(started_at__lt=now - timedelta(seconds=window))
    with transaction.atomic():
        EntryCount.objects.bulk_create([EntryCount(study_id=study_id, client=client, started_at=now, count=0)],
                                       ignore_conflicts=True)
        row = EntryCount.objects.filter(study_id=study_id, client=client)
        row.update(count=Case(When(ended, then=Value(1)), default=F("count") + 1),
                   started_at=Case(When(ended, then=Value(now)), default=F("started_at")))
        return row.values_list("count", flat=True).get()


def count_entry(study_id: int, client: str, window: int) -> int:
    """Count one new participant from ``client`` for the study; the number counted in the current window."""
    hashed = _hashed(client)
    if isinstance(caches["default"], RedisCache):
        return _count_in_redis(f"entry:{study_id}:{hashed[:32]}", window)
    return _count_in_database(study_id, hashed, window)
