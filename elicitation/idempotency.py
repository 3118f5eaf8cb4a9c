"""Idempotent run creation through the API (``Idempotency-Key`` request header, IETF httpapi draft).

A client that did not get an answer (a timeout, a proxy error) sends the same request again with the same
key: it gets the run its first request created (200, header ``Idempotent-Replayed: true``) instead of a second
run. The key is unique per user (a database constraint, so two requests racing with one key create one run);
the same key with a different body is refused (422), as the draft prescribes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .models import ElicitationRun

HEADER = "Idempotency-Key"
MAX_LENGTH = ElicitationRun._meta.get_field("idempotency_key").max_length


class IdempotencyError(Exception):
    """The key cannot be used: too long, or already used with another request body. ``status`` is the HTTP
    status to answer with."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


def request_key(headers: Any) -> str:
    """The request's key ("" without one); IdempotencyError (400) when it is longer than the column."""
    key = (headers.get(HEADER) or "").strip()
    if len(key) > MAX_LENGTH:
        raise IdempotencyError(f"the {HEADER} header is longer than {MAX_LENGTH} characters", 400)
    return key


def fingerprint(data: Any) -> str:
    """SHA-256 of the request body, independent of key order."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def earlier_run(user: Any, key: str, body_hash: str) -> ElicitationRun | None:
    """The run ``user`` already created with ``key`` (None when none); IdempotencyError (422) when it was
    created from another request body."""
    if not key:
        return None
    run = ElicitationRun.objects.filter(created_by=user, idempotency_key=key).first()
    if run is not None and run.idempotency_fingerprint != body_hash:
        raise IdempotencyError(f"the {HEADER} {key!r} was already used for another request (run {run.pk}); "
                               "send a new key for a new run", 422)
    return run
