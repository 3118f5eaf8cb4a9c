"""Tunables of the elicitation machinery. Each is read from Django settings if set there,
else from the environment variable of the same name, else the default."""
from __future__ import annotations

from django.conf import settings

from config.env import env_str


def _float(name: str, default: float) -> float:
    value = getattr(settings, name, None)
    if value is not None:
        return float(value)
    raw = env_str(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None


def lease_grace_seconds() -> float:
    """Seconds a row or slot lease outlives the request timeout before another worker may take it
    over (a killed worker's work is redone after timeout + this)."""
    return _float("ELICITATION_LEASE_GRACE_SECONDS", 30.0)


def poll_seconds() -> float:
    """How often a worker waiting for a free slot or rate budget looks again."""
    return _float("ELICITATION_POLL_SECONDS", 0.05)


def cancel_check_seconds() -> float:
    """How often a request in flight looks whether its run was cancelled (a database read each time)."""
    return _float("ELICITATION_CANCEL_CHECK_SECONDS", 1.0)


def full_distribution_requests() -> float:
    """Requests one full-distribution answer may need, for estimates and the budget check (default: the
    full-distribution module's request cap, an upper bound)."""
    from .full_distribution import DEFAULT_MAX_REQUESTS

    return _float("ELICITATION_FULL_DISTRIBUTION_REQUESTS", float(DEFAULT_MAX_REQUESTS))


def sweep_min_age_seconds() -> float:
    """A run (re)started less than this long ago is left to the tasks being queued for it by the sweep's
    empty-queue rule."""
    return _float("ELICITATION_SWEEP_MIN_AGE_SECONDS", 30.0)


def max_countdown_seconds() -> float:
    """Longest delay of a task retried through the queue (kept well below the Redis visibility timeout, which
    would otherwise hand a waiting retry to a second worker)."""
    return _float("ELICITATION_MAX_COUNTDOWN_SECONDS", 300.0)


def requests_per_task() -> float:
    """About how many requests one elicitation task makes: the items of a run are queued in groups that ask
    about this many (at least one item per task; 1 queues one task per item)."""
    return _float("ELICITATION_REQUESTS_PER_TASK", 8.0)


def queue() -> str:
    """Celery queue the elicitation tasks go to ("celery", the default queue, unless set)."""
    return getattr(settings, "ELICITATION_QUEUE", None) or env_str("ELICITATION_QUEUE", "celery")
