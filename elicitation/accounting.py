"""Counting every request an answer costs, also when its reply is lost.

Before each HTTP request is sent, the worker adds it to its row (``requests + 1``) with an estimate of its
tokens (prompt characters / 4, and the completion tokens the run allows) and their cost, in the same UPDATE
that renews the worker's lease. When the worker records the outcome it *settles* the row under a row lock:

- the requests that got a reply have their estimate replaced: the reply's usage for the answer, nothing for a
  refusal (an HTTP error status: endpoints do not bill those);
- the requests whose reply never came (timed out, cut off, abandoned by a cancel) keep their estimate: the
  endpoint may have done, and billed, the work.

The worker counts an answer's first request in the statement that leases the row (``row_sql.claim_statement``):
should that request never be sent after all (the run stopped while the worker waited for a slot), the
settlement takes it back out (``Settlement.unsent``).

A request whose connection never opened (refused, timed out while connecting, TLS failed: the endpoint never
received it) is taken back out like the claim's unsent one (``EndpointClient.undelivered``).

A request whose answer is lost — the worker killed mid-request, the database gone when the answer came back —
never gets settled, so it stays counted with its estimate (and in the budget). A row whose requests were all
settled holds the exact usage the endpoint reported. ``cost_usd`` is recomputed from the row's token totals
at each settlement (the per-request estimates are only provisional).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from . import row_sql
from .estimate import cost_of
from .models import ModelEndpoint, ModelResponse
from .sqlite_writes import Statement


@dataclass(frozen=True)
class PerRequest:
    """The provisional charge of one request: estimated tokens and their cost."""

    prompt_tokens: int
    completion_tokens: int
    cost: Decimal

    @classmethod
    def estimate(cls, endpoint: ModelEndpoint, prompt_tokens: int, completion_tokens: int) -> "PerRequest":
        return cls(prompt_tokens, completion_tokens, cost_of(endpoint, prompt_tokens, completion_tokens))


def charge_request(row_pk: int, owner: str, lease_seconds: float, per_request: PerRequest) -> None:
    """Count one request on the row before it is sent (with its provisional tokens and cost), and renew
    ``owner``'s lease on it. Raises (the request is not sent) if the database cannot record it."""
    row_sql.charge(row_pk, owner, timezone.now() + timedelta(seconds=lease_seconds), per_request.prompt_tokens,
                   per_request.completion_tokens, per_request.cost)


@dataclass
class Settlement:
    """How one execution's requests end up on the row: ``replied`` of them had their estimate replaced by
    ``usage`` (prompt, completion tokens of the answer; None when there is no answer), ``attempts`` made."""

    endpoint: ModelEndpoint
    per_request: PerRequest
    replied: int = 0
    usage: tuple[int, int] | None = None
    attempts: int = 0
    charged: int = 0  # requests this execution counted on the row (``charge_request``, and the claim's)
    unsent: int = 0  # of those, counted but never sent (the claim's, when no request followed): taken back out


def settled(current: dict[str, int], settlement: Settlement) -> dict[str, Any]:
    """The row's token totals, requests, cost and attempts once ``settlement`` is applied to its ``current``
    ones."""
    per, n = settlement.per_request, settlement.replied + settlement.unsent
    prompt = max(0, current["prompt_tokens"] - n * per.prompt_tokens)
    completion = max(0, current["completion_tokens"] - n * per.completion_tokens)
    if settlement.usage is not None:
        prompt, completion = prompt + settlement.usage[0], completion + settlement.usage[1]
    return dict(prompt_tokens=prompt, completion_tokens=completion,
                cost_usd=cost_of(settlement.endpoint, prompt, completion),
                attempts=current["attempts"] + settlement.attempts,
                requests=max(0, current["requests"] - settlement.unsent))


def settlement_statement(row: ModelResponse, fields: dict[str, Any], settlement: Settlement,
                         **only_if: Any) -> Statement:
    """The UPDATE that writes ``fields`` to the row if it is still pending (and matches ``only_if``), with its
    token totals, requests, cost and attempts settled, if nobody else touched its counters.

    ``row`` holds the counters read when the task fetched it. Usually nobody else touched them since (this
    execution's own ``settlement.charged`` requests aside), so one UPDATE conditioned on exactly those values
    settles it; if they changed (a worker whose lease had run out was still counting requests), it updates no
    row, and ``settle_locked`` reads the row again under a lock."""
    per, charged = settlement.per_request, settlement.charged
    expected = dict(prompt_tokens=row.prompt_tokens + charged * per.prompt_tokens,
                    completion_tokens=row.completion_tokens + charged * per.completion_tokens,
                    attempts=row.attempts, requests=row.requests + charged)
    return row_sql.update_pending_statement(row.pk, {**fields, **settled(expected, settlement)}, **only_if, **expected)


def settle_locked(row: ModelResponse, fields: dict[str, Any], settlement: Settlement, **only_if: Any) -> bool:
    """The settlement with the row's counters read again under a lock (someone else changed them, and
    ``settlement_statement`` updated no row); False if the row is no longer pending (or does not match
    ``only_if``)."""
    with transaction.atomic():
        current = (ModelResponse.objects.select_for_update()
                   .filter(pk=row.pk, status=ModelResponse.Status.PENDING, **only_if)
                   .values("prompt_tokens", "completion_tokens", "attempts", "requests").first())
        if current is None:
            return False
        return bool(ModelResponse.objects.filter(pk=row.pk).update(**fields, **settled(current, settlement)))
