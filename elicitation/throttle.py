"""Per-endpoint concurrency and rate limits shared by every worker: in the database by default, in Redis
(``elicitation.limits_redis``, one round trip per lease or take) where ``ELICITATION_LIMITS_URL`` names one.

- Concurrency: ``max_concurrency`` slot rows per endpoint; a worker leases one with a conditional
  UPDATE (atomic on SQLite and PostgreSQL) for the length of one request. A lease that expires — its
  worker was killed — frees the slot.
- Rate: a token bucket per endpoint and kind (requests / tokens per minute). Its capacity is one
  second's worth (at least one request), so requests are paced evenly rather than sent in bursts.

Clocks: database leases and buckets use each worker's clock (keep the machines' clocks in sync: NTP); Redis's
use Redis's own.
"""
from __future__ import annotations

import random
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from datetime import timedelta
from typing import Any, Callable, Iterator

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, IntegrityError, connections, transaction
from django.db.models import Q
from django.utils import timezone

from . import conf
from .models import EndpointSlot, ModelEndpoint, RateBucket

StopCheck = Callable[[], None]  # raises to abandon waiting


class DatabaseLimits:
    """Slots and rate buckets as database rows (the module's functions)."""

    def __init__(self) -> None:
        self._ensured: dict[tuple, float] = {}

    def try_acquire_slot(self, endpoint: ModelEndpoint, owner: str, lease_seconds: float) -> int | None:
        index = try_acquire_slot(endpoint, owner, lease_seconds)
        # A new endpoint (or a raised max_concurrency) has no slot rows yet: they are created when no slot was
        # free, at most once a minute per process (rows removed meanwhile come back). The creation time is part
        # of the key: a new endpoint may reuse a deleted one's id (SQLite).
        known = (endpoint.pk, endpoint.created_at, endpoint.max_concurrency)
        if index is None and time.monotonic() - self._ensured.get(known, -60.0) >= 60.0:
            ensure_slots(endpoint)
            self._ensured[known] = time.monotonic()
            index = try_acquire_slot(endpoint, owner, lease_seconds)
        return index

    def renew_slot(self, endpoint: ModelEndpoint, index: int, owner: str, lease_seconds: float) -> None:
        renew_slot(endpoint, index, owner, lease_seconds)

    def release_slot(self, endpoint: ModelEndpoint, index: int, owner: str) -> None:
        release_slot(endpoint, index, owner)

    def holders(self, endpoint: ModelEndpoint) -> set[str]:
        """Who holds a live slot lease."""
        return set(EndpointSlot.objects.filter(endpoint=endpoint, expires_at__gte=timezone.now())
                   .exclude(holder="").values_list("holder", flat=True))

    def release_all(self, owner: str) -> None:
        EndpointSlot.objects.filter(holder=owner).update(holder="", expires_at=None)

    def try_take(self, endpoint: ModelEndpoint, kind: str, amount: float, per_minute: float) -> float:
        return try_take(endpoint, kind, amount, per_minute)


_stores: dict[str, Any] = {}


def sqlite_file() -> str | None:
    """The default database's file when it is SQLite on disk (not an in-memory test database), else None."""
    connection = connections[DEFAULT_DB_ALIAS]
    name = str(connection.settings_dict.get("NAME") or "")
    if connection.vendor != "sqlite" or not name or ":memory:" in name or "mode=memory" in name:
        return None
    return name


def limits() -> Any:
    """The configured store of limits: ``DatabaseLimits``, or ``RedisLimits`` for ELICITATION_LIMITS_URL=redis://…
    (one client per process and URL). With "database" on a SQLite file, the slots are leased in a file beside it
    (``limits_sqlite.SQLiteLimits``: no write to the main file, nothing synced per lease)."""
    url = getattr(settings, "ELICITATION_LIMITS_URL", "") or "database"
    if url == "database" and (database := sqlite_file()):
        url = f"sqlite-side:{database}"
    store = _stores.get(url)
    if store is None:
        if url.startswith("sqlite-side:"):
            from .limits_sqlite import SQLiteLimits

            store = SQLiteLimits(Path(f"{url.removeprefix('sqlite-side:')}-limits"), DatabaseLimits())
        elif url == "database":
            store = DatabaseLimits()
        elif url.startswith(("redis://", "rediss://", "unix://")):
            from .limits_redis import RedisLimits

            store = RedisLimits(url)
        else:
            raise ValueError(f"ELICITATION_LIMITS_URL={url!r}: expected 'database' or a redis:// URL")
        _stores[url] = store
    return store


def ensure_slots(endpoint: ModelEndpoint) -> None:
    """Create the endpoint's slot rows (idempotent)."""
    EndpointSlot.objects.bulk_create(
        [EndpointSlot(endpoint=endpoint, index=i) for i in range(max(1, endpoint.max_concurrency))],
        ignore_conflicts=True,
    )


def try_acquire_slot(endpoint: ModelEndpoint, owner: str, lease_seconds: float) -> int | None:
    """Lease a free (or expired) slot for ``owner``; its index, or None if all are taken."""
    count = max(1, endpoint.max_concurrency)
    start = random.randrange(count)
    for offset in range(count):
        index = (start + offset) % count
        now = timezone.now()
        taken = (EndpointSlot.objects
                 .filter(endpoint=endpoint, index=index)
                 .filter(Q(holder="") | Q(expires_at__isnull=True) | Q(expires_at__lt=now))
                 .update(holder=owner, expires_at=now + timedelta(seconds=lease_seconds)))
        if taken:
            return index
    return None


def renew_slot(endpoint: ModelEndpoint, index: int, owner: str, lease_seconds: float) -> None:
    """Extend ``owner``'s lease on a slot (a long multi-request answer, or a long wait for the rate limit)."""
    EndpointSlot.objects.filter(endpoint=endpoint, index=index, holder=owner).update(
        expires_at=timezone.now() + timedelta(seconds=lease_seconds))


def release_slot(endpoint: ModelEndpoint, index: int, owner: str) -> None:
    """Give a slot back (only if ``owner`` still holds it)."""
    EndpointSlot.objects.filter(endpoint=endpoint, index=index, holder=owner).update(holder="", expires_at=None)


def slots_in_use(endpoint: ModelEndpoint) -> int:
    """Slots currently leased (and not expired)."""
    return EndpointSlot.objects.filter(endpoint=endpoint, index__lt=max(1, endpoint.max_concurrency),
                                       expires_at__gte=timezone.now()).exclude(holder="").count()


def try_take(endpoint: ModelEndpoint, kind: str, amount: float, per_minute: float) -> float:
    """Take ``amount`` from the endpoint's ``kind`` bucket; 0 if taken, else seconds until it could be."""
    rate = per_minute / 60.0
    capacity = max(amount, rate, 1.0)
    now = timezone.now()
    if not RateBucket.objects.filter(endpoint=endpoint, kind=kind).exists():
        try:
            with transaction.atomic():
                RateBucket.objects.create(endpoint=endpoint, kind=kind, level=capacity, updated_at=now)
        except IntegrityError:
            pass
    with transaction.atomic():
        bucket = RateBucket.objects.select_for_update().get(endpoint=endpoint, kind=kind)
        now = timezone.now()
        elapsed = max(0.0, (now - bucket.updated_at).total_seconds())
        level = min(capacity, bucket.level + elapsed * rate)
        wait = 0.0
        if level >= amount:
            level -= amount
        else:
            wait = (amount - level) / rate
        bucket.level, bucket.updated_at = level, now
        bucket.save(update_fields=["level", "updated_at"])
    return wait


# Threads of one process waiting for an endpoint's slot (a thread-pool worker with more threads than the
# endpoint's slots) are woken as soon as another thread of the process releases one, instead of at their next
# poll; a slot freed by another process is found at the next poll (``ELICITATION_POLL_SECONDS``).
_freed: dict[int, threading.Condition] = {}
_freed_lock = threading.Lock()


def _slot_freed(endpoint: ModelEndpoint) -> threading.Condition:
    with _freed_lock:
        return _freed.setdefault(endpoint.pk, threading.Condition())


@contextmanager
def endpoint_slot(endpoint: ModelEndpoint, owner: str, lease_seconds: float,
                  should_stop: StopCheck | None = None, sleep: Callable[[float], None] = time.sleep) -> Iterator[int]:
    """Hold one of the endpoint's concurrency slots for the body of the ``with``; waits until one is free."""
    store, freed = limits(), _slot_freed(endpoint)
    index = store.try_acquire_slot(endpoint, owner, lease_seconds)
    while index is None:
        if should_stop is not None:
            should_stop()
        wait = conf.poll_seconds() * (1 + random.random())
        if sleep is time.sleep:
            with freed:  # tried under the condition's lock: a release between the try and the wait wakes it
                index = store.try_acquire_slot(endpoint, owner, lease_seconds)
                if index is None:
                    freed.wait(wait)
        else:
            sleep(wait)
            index = store.try_acquire_slot(endpoint, owner, lease_seconds)
    try:
        yield index
    finally:
        store.release_slot(endpoint, index, owner)
        with freed:
            freed.notify()


def take_rate(endpoint: ModelEndpoint, tokens: int, should_stop: StopCheck | None = None,
              sleep: Callable[[float], None] = time.sleep) -> None:
    """Wait until the endpoint's requests-per-minute and tokens-per-minute budgets allow one request."""
    wanted = [(RateBucket.Kind.REQUESTS, 1.0, endpoint.requests_per_minute),
              (RateBucket.Kind.TOKENS, float(tokens), endpoint.tokens_per_minute)]
    for kind, amount, per_minute in wanted:
        if not per_minute:
            continue
        store = limits()
        while True:
            wait = store.try_take(endpoint, kind, amount, float(per_minute))
            if wait <= 0:
                break
            if should_stop is not None:
                should_stop()
            sleep(min(wait, 1.0) + random.uniform(0, conf.poll_seconds()))
