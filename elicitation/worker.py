"""Answering the pending samples of one item: the body of the Celery task (and of ``--sync``).

Never lose, never duplicate:
- every (run, item, sample) row exists before any request (created when the run starts);
- a worker leases a row (conditional UPDATE) before asking for it, renews the lease before each
  attempt, and writes the answer only while the row is still pending — the first answer wins, a
  late second one is discarded, never added;
- a killed worker's lease runs out after the request timeout + a grace period, and the row is then
  taken up by whichever task (redelivered or re-queued by resume) comes next.

One synced commit per answer: the statement that leases a row also counts its first request, and an answer's
write is committed together with the lease of the task's next row (``RunContext.commit``; the task's last
answer at the task's end), before that row's request is sent; a task's new stored prompts go with its first
lease. A worker killed in between loses at most that one answer, whose row stays leased until its lease runs
out and is then asked again, as one killed mid-request.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any, Callable, Sequence

from django.db import InterfaceError, OperationalError
from django.db.models import Sum
from django.utils import timezone
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from surveys.instruments import Instrument
from surveys.models import Item
from surveys.question_kinds import asks_together, prompt_kind
from surveys.questions import keys_of

from . import conf, likelihood, refinement, row_sql, sqlite_writes, throttle
from .accounting import PerRequest, Settlement, charge_request, settle_locked, settlement_statement
from .client import Attempted, EndpointClient, RequestFailed, Stopped, call_with_retries
from .estimate import completion_tokens_per_request, cost_of, requests_per_answer
from .models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
from .nul_text import without_nul
from .modes import (Mode, Outcome, answered, call_full_distribution, complete, full_distribution_outcome,
                    parse_text, request_params, top_logprobs_outcome)
from .question_prompts import check_item, check_kind, parse_together
from .prompts import (PromptContent, adopt_ids, approx_tokens, prompt_content, prompt_for_run, prompt_hash,
                      store_prompt, stored_or_new)
from .sqlite_writes import Statement

log = logging.getLogger(__name__)
Sleep = Callable[[float], None]
# The database (or the Redis of the limits) is unreachable: retry the task, record nothing.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, RedisConnectionError, RedisTimeoutError)


def new_owner() -> str:
    """A lease owner id: host, process and a random part (unique per task execution)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def lease_seconds(endpoint: ModelEndpoint) -> float:
    """How long a row or slot lease lasts: one request timeout plus the grace period."""
    return float(endpoint.timeout_seconds) + conf.lease_grace_seconds()


_clients = threading.local()


def client_for(endpoint: ModelEndpoint) -> EndpointClient:
    """This thread's client for ``endpoint``, reused across tasks (building one costs an SSL context);
    a new one when the endpoint's URL, key or timeout changed."""
    cache: dict[int, tuple[tuple, EndpointClient]] = _clients.__dict__.setdefault("by_endpoint", {})
    signature = (endpoint.base_url, endpoint.api_key(), float(endpoint.timeout_seconds))
    cached = cache.get(endpoint.pk)
    if cached is not None and cached[0] == signature:
        return cached[1]
    if cached is not None:
        cached[1].close()
    client = EndpointClient(endpoint)
    cache[endpoint.pk] = (signature, client)
    return client


@dataclass
class Waiting:
    """A write waiting for the task's next one (``RunContext.commit``): its statement, and what to do with its
    result once committed."""

    statement: Statement
    done: Callable[[sqlite_writes.Result], None]


@dataclass
class RunContext:
    """What answering one item needs, fetched once per task."""

    run: ElicitationRun
    endpoint: ModelEndpoint
    kind: Instrument
    demonstrations: list[Item]
    client: EndpointClient
    owner: str
    sleep: Sleep = time.sleep
    prompts: dict[str, StoredPrompt] = field(default_factory=dict)  # stored prompts by hash (samples share one)
    prepared: dict[int, tuple[PromptContent, str]] = field(default_factory=dict)  # by row: content, hash
    records: dict[int, dict[str, Any]] = field(default_factory=dict)  # by row: what its prompt drew (Prompt.record)
    unsettled: list[Waiting] = field(default_factory=list)  # writes not yet committed (``commit``)

    def defer(self, row: ModelResponse, fields: dict[str, Any], settlement: Settlement | None = None, *,
              answer: bool = True, **only_if: Any) -> None:
        """Write ``fields`` to the row while it is pending (and matches ``only_if``), settling its requests with
        ``settlement``, together with the task's next write (``commit``). ``answer``: the row's answer
        (``written_fields``; a warning if another worker answered it first), else e.g. its release. A settlement
        that finds the row's counters changed is settled again under a lock (``accounting.settle_locked``)."""
        if settlement is not None:
            statement = settlement_statement(row, fields, settlement, **only_if)
            late: Callable[[], bool] = lambda: settle_locked(row, fields, settlement, **only_if)  # noqa: E731
        else:
            statement, late = row_sql.update_pending_statement(row.pk, fields, **only_if), lambda: False

        def done(result: sqlite_writes.Result) -> None:
            if not result[0] and not late() and answer:
                log.warning("run %s item %s sample %s was answered by another worker; this answer is discarded",
                            row.run_id, row.item_id, row.sample_index)

        self.unsettled.append(Waiting(statement, done))

    def commit(self, *statements: Statement) -> list[int]:
        """Run ``statements`` after the writes still waiting (an answer, new stored prompts), all in one
        transaction (on SQLite one synced commit, shared with the process's other threads: ``sqlite_writes``);
        the row counts of ``statements``."""
        waiting, self.unsettled = self.unsettled, []
        results = sqlite_writes.execute_all([w.statement for w in waiting] + list(statements))
        for w, result in zip(waiting, results):
            w.done(result)
        return [count for count, _ in results[len(waiting):]]

    def kind_of(self, row: ModelResponse) -> Instrument:
        """The kind that parses ``row``'s answer: the study's, its question's (``[[questions]]``) or its attention
        check's (an agent with ``checks = true``)."""
        if row.check_key:
            return check_kind(self.run.study, row.check_key)
        return prompt_kind(self.run.study, row.question) if row.question else self.kind

    def content_of(self, row: ModelResponse, item: Item) -> PromptContent:
        """What is sent for ``row``: the prompt, or in the likelihood mode the texts scored."""
        if self.run.mode == Mode.LIKELIHOOD:
            return likelihood.scored_text(self.kind, item)
        prompt = prompt_for_run(self.run, item, row.sample_index, self.demonstrations, row.question, row.check_key)
        if prompt.record:
            self.records[row.pk] = prompt.record
        return prompt_content(prompt, self.endpoint.api_style)

    def prepare(self, rows: Sequence[ModelResponse]) -> None:
        """Build the prompts of a task's rows and look them up all at once (one SELECT); the new ones are stored by
        one INSERT committed with the first claim (``prompts.stored_or_new``). A row whose prompt cannot be built
        is left to ``answer_row``, which records why."""
        by_hash: dict[str, PromptContent] = {}
        for row in rows:
            try:
                content = self.content_of(row, row.item)
            except Exception:  # noqa: BLE001 - answer_row builds it again and records the error on the row
                continue
            sha = prompt_hash(content)
            self.prepared[row.pk] = (content, sha)
            by_hash.setdefault(sha, content)
        missing = {sha: content for sha, content in by_hash.items() if sha not in self.prompts}
        if not missing:
            return
        try:
            found, insert = stored_or_new(missing, self.endpoint.api_style)
        except TRANSIENT_ERRORS:
            raise
        except Exception:  # noqa: BLE001 - each row's prompt is then stored alone, and a failure recorded on it
            log.exception("run %s: cannot store a task's prompts together; storing them one by one", self.run.pk)
            return
        self.prompts.update(found)
        if insert is not None:
            self.unsettled.append(Waiting(insert, lambda result: adopt_ids(found.values(), result[1])))

    def prompt_of(self, row: ModelResponse, item: Item) -> tuple[PromptContent, StoredPrompt]:
        """What is sent for ``row`` and its StoredPrompt: as ``prepare`` left them, else built, looked up (or
        created) here; a prompt is stored once per task (samples share one)."""
        if row.pk in self.prepared:
            content, sha = self.prepared.pop(row.pk)
        else:
            content = self.content_of(row, item)
            sha = prompt_hash(content)
        if sha not in self.prompts:
            self.prompts[sha] = store_prompt(content, self.endpoint.api_style, sha)
        return content, self.prompts[sha]

    def check_running(self) -> None:
        """Raise Stopped unless the run is (still) running."""
        status = ElicitationRun.objects.filter(pk=self.run.pk).values_list("status", flat=True).first()
        if status != ElicitationRun.Status.RUNNING:
            raise Stopped(f"run is {status}")

    def pause(self, seconds: float, tick: Callable[[], None] | None = None) -> None:
        """Sleep, looking every half second whether the run was stopped meanwhile (and calling ``tick``,
        e.g. to keep a lease alive through a long Retry-After)."""
        end = time.monotonic() + seconds
        while True:
            self.check_running()
            if tick is not None:
                tick()
            left = end - time.monotonic()
            if left <= 0:
                return
            self.sleep(min(left, 0.5))


def check_budget(run: ElicitationRun, next_cost: Decimal) -> None:
    """Stop the run (budget_exhausted) if the cost so far plus the next request's estimate exceeds the budget."""
    if run.budget_usd is None:
        return
    spent = ModelResponse.objects.filter(run=run).aggregate(s=Sum("cost_usd"))["s"] or Decimal(0)
    if spent + next_cost > run.budget_usd:
        ElicitationRun.objects.filter(pk=run.pk, status=ElicitationRun.Status.RUNNING).update(
            status=ElicitationRun.Status.BUDGET_EXHAUSTED, finished_at=timezone.now(),
            status_reason=f"budget reached: spent ${spent} of ${run.budget_usd}; the next request "
                          f"(≈ ${next_cost}) would exceed it. Raise the budget and resume to continue.")
        raise Stopped("budget exhausted")


def renew(row: ModelResponse, owner: str, seconds: float) -> None:
    ModelResponse.objects.filter(pk=row.pk, lease_owner=owner).update(
        lease_until=timezone.now() + timedelta(seconds=seconds))


def release(ctx: RunContext, row: ModelResponse, settlement: Settlement, history: list[str]) -> None:
    """Give a row back unanswered (run stopped), keeping count of the attempts and requests made (committed with
    the task's next write, at the latest at its end)."""
    updates: dict[str, Any] = {"lease_owner": "", "lease_until": None}
    if history:
        updates.update(without_nul({"detail": {"attempt_errors": history}}))
    ctx.defer(row, updates, settlement, answer=False, lease_owner=ctx.owner)


def give_back(owner: str) -> None:
    """After ``owner`` lost the database mid-task: free its rows and slots at once if the database is back
    (else their leases run out by themselves). Nothing of it is in flight any more."""
    try:
        ModelResponse.objects.filter(lease_owner=owner, status=ModelResponse.Status.PENDING).update(
            lease_owner="", lease_until=None)
        throttle.limits().release_all(owner)
    except TRANSIENT_ERRORS:
        pass


def interpret(ctx: RunContext, value: Any, item: Item | None = None, kind: Instrument | None = None) -> Outcome:
    mode, kind = ctx.run.mode, kind or ctx.kind
    if ctx.run.refines_id is not None:  # self-refinement: read as the kind's refinement reads it
        return refinement.outcome(kind, value)
    if mode == Mode.FULL_DISTRIBUTION:
        return full_distribution_outcome(kind, value)
    if mode == Mode.TOP_LOGPROBS:
        return top_logprobs_outcome(kind, value, ctx.run.top_logprobs)
    if mode == Mode.LIKELIHOOD:
        return likelihood.outcome(value)
    return parse_text(kind, value, item)


def together_outcomes(ctx: RunContext, completion: Any, item: Item,
                      rows: Sequence[ModelResponse]) -> list[Outcome]:
    """The outcome of each of ``rows`` (one item's questions asked in one prompt, ``[prompt] questions =
    "together"``): the reply's JSON value under the row's question, parsed by that question's kind; the same raw
    output on every row, each with its own parse error. The usage is the first row's (the request is counted once)."""
    kinds = [ctx.kind_of(row) for row in rows]
    parts = parse_together(kinds, completion.text, item)
    outcomes = []
    for n, (kind, part) in enumerate(zip(kinds, parts)):
        base = dict(raw_output=completion.text, system_fingerprint=completion.system_fingerprint,
                    detail={"finish_reason": completion.finish_reason},
                    prompt_tokens=completion.prompt_tokens if n == 0 else 0,
                    completion_tokens=completion.completion_tokens if n == 0 else 0)
        if part.parsed.ok:
            outcomes.append(answered(kind, part.parsed.answer, ModelResponse.Status.OK, **base))
        else:
            outcomes.append(Outcome(status=ModelResponse.Status.UNPARSEABLE, parse_error=part.parsed.error[:300],
                                    **base))
    return outcomes


def write_siblings(ctx: RunContext, lead: ModelResponse, siblings: Sequence[ModelResponse],
                   fields: Sequence[dict[str, Any]], provenance: dict[str, Any] | None = None) -> None:
    """Write the answers of ``siblings`` (asked in ``lead``'s prompt, ``[prompt] questions = "together"``) with the
    task's next write: ``fields`` each, plus ``detail.asked_with`` naming the lead's question; no request or token is
    counted on them (the lead's row holds the request)."""
    extra = dict(provenance or {})
    stored = extra.pop("prompt", None)
    if stored is not None:
        if stored.pk is None:  # stored by another worker first: named by its hash
            stored = row_sql.stored_prompts([stored.sha256]).get(stored.sha256, stored)
        if stored.pk is not None:
            extra["prompt"] = stored
    for sibling, values in zip(siblings, fields):
        values = dict(values)
        values["detail"] = {**(values.get("detail") or {}), "asked_with": lead.question}
        ctx.defer(sibling, {**written_fields(values), **extra})


def written_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """An answer's ``fields`` as written: without NUL characters, the lease given back, the answer's time."""
    return {**without_nul(fields), "lease_owner": "", "lease_until": None, "answered_at": timezone.now()}


def prompt_detail(run: ElicitationRun, params: dict[str, Any], record: dict[str, Any]) -> dict[str, Any]:
    """What is stored in an answer's ``detail`` about its request: what its prompt drew (e.g. a hint condition's
    hint) and, when no temperature was sent, that the provider's default decoding applied."""
    detail = dict(record)
    if "temperature" not in params and run.mode in (Mode.GREEDY, Mode.SAMPLED):
        detail["temperature"] = "provider default (not sent)"
    return detail


def answer_row(ctx: RunContext, row: ModelResponse, item: Item,
               siblings: Sequence[ModelResponse] = ()) -> float | None:
    """Ask for one (item, sample, question). Returns seconds until another worker's lease on the row runs out
    (the row is busy), else None. Raises Stopped when the run is no longer running. The answer is written with
    the task's next write (``RunContext.commit``). ``siblings``: the pending rows of the item's other questions,
    asked in the same prompt (``[prompt] questions = "together"``) and written with it, the request counted on
    ``row`` alone."""
    lease = lease_seconds(ctx.endpoint)
    built = build_request(ctx, row, item, lease, siblings)
    if built is None:
        return None
    content, stored, params = built
    provenance = dict(prompt=stored, prompt_hash=stored.sha256, params=params, base_url=ctx.endpoint.base_url,
                      model_id=ctx.endpoint.model)
    asking = Asking.estimated(ctx, row, item, content, params, lease, siblings, provenance)
    drawn = prompt_detail(ctx.run, params, ctx.records.pop(row.pk, {}))
    if ctx.run.budget_usd is not None:  # before the claim, which counts this answer's first request
        ctx.commit()  # the answers written so far count with their settled cost
        check_budget(ctx.run, asking.next_cost)
    if not claim(ctx, row, lease, asking.per_request, provenance):
        return busy_seconds(row)
    asking.ask(drawn)
    return None


def build_request(ctx: RunContext, row: ModelResponse, item: Item, lease: float,
                  siblings: Sequence[ModelResponse] = ()) -> tuple[PromptContent, StoredPrompt, dict[str, Any]] | None:
    """What is sent for ``row``: its content, stored prompt and parameters. None when the instrument cannot build
    the item's prompt: the row (and its ``siblings``) is then claimed and its failure recorded (never dropped)."""
    try:
        content, stored = ctx.prompt_of(row, item)
        return content, stored, request_params(ctx.run, ctx.endpoint, row.sample_index)
    except Exception as exc:  # the instrument cannot build this item's prompt: record it, never drop it
        log.exception("run %s item %s: cannot build the prompt", ctx.run.pk, item.pk)
        if ctx.commit(row_sql.claim_statement(row, ctx.owner, lease))[0]:
            failed = {"status": ModelResponse.Status.FAILED, "error": f"cannot build the prompt: {exc!r}"[:2000]}
            ctx.defer(row, written_fields(failed))
            write_siblings(ctx, row, siblings, [failed] * len(siblings))
        return None


def claim(ctx: RunContext, row: ModelResponse, lease: float, per_request: PerRequest,
          provenance: dict[str, Any]) -> bool:
    """Lease ``row`` and count its first request in one statement, committed with the previous answer; False when
    the row is not (or no longer) this task's to ask."""
    first = (per_request.prompt_tokens, per_request.completion_tokens, per_request.cost)
    return bool(ctx.commit(row_sql.claim_statement(row, ctx.owner, lease, first, **provenance))[0])


def busy_seconds(row: ModelResponse) -> float | None:
    """Seconds until another worker's lease on ``row`` runs out; None when the row is answered (or gone)."""
    current = ModelResponse.objects.filter(pk=row.pk).values("status", "lease_until").first()
    if current is None or current["status"] != ModelResponse.Status.PENDING or current["lease_until"] is None:
        return None
    return max(0.5, (current["lease_until"] - timezone.now()).total_seconds())


@dataclass
class Asking:
    """One claimed (item, sample) being asked: what is sent, the estimates its requests are counted with, and
    this execution's requests (attempts made, requests charged, the first one not yet sent, when the row's and
    the slot's leases were last renewed)."""

    ctx: RunContext
    row: ModelResponse
    item: Item
    content: PromptContent
    params: dict[str, Any]
    lease: float
    est_prompt: int  # the prompt's tokens, estimated (characters / 4)
    per_request: PerRequest
    next_cost: Decimal  # the whole answer's estimated cost (checked against the budget)
    attempts: int = 0
    charged: int = 1  # the claim counted the first request…
    unsent: int = 1  # …not yet sent
    row_renewed: float = 0.0
    slot_renewed: float = 0.0
    slot: int | None = None
    history: list[str] = field(default_factory=list)
    siblings: list[ModelResponse] = field(default_factory=list)  # asked in the same prompt (questions together)
    provenance: dict[str, Any] = field(default_factory=dict)  # the claim's prompt, hash, parameters, endpoint
    together: list[Outcome] = field(default_factory=list)  # the outcome of the row and of each sibling

    @classmethod
    def estimated(cls, ctx: RunContext, row: ModelResponse, item: Item, content: PromptContent,
                  params: dict[str, Any], lease: float, siblings: Sequence[ModelResponse] = (),
                  provenance: dict[str, Any] | None = None) -> "Asking":
        run, endpoint = ctx.run, ctx.endpoint
        est_prompt = approx_tokens(content)
        per_answer = requests_per_answer(run)
        return cls(ctx, row, item, content, params, lease, est_prompt,
                   PerRequest.estimate(endpoint, est_prompt, completion_tokens_per_request(run)),
                   cost_of(endpoint, est_prompt * per_answer, completion_tokens_per_request(run) * per_answer),
                   siblings=list(siblings), provenance=dict(provenance or {}))

    def settlement(self, usage: tuple[int, int] | None = None, replied: int = 0, attempts: int = 0) -> Settlement:
        """This execution's requests: those refused, and ``replied`` more with ``usage``, get their estimate
        back; the others (no reply) stay counted with it; the claim's, if never sent, is taken back out, and so
        are those whose connection never opened (the endpoint never received them)."""
        client = self.ctx.client
        undelivered = client.undelivered
        return Settlement(self.ctx.endpoint, self.per_request,
                          replied=min(client.requests - undelivered, client.refused + replied),
                          usage=usage, attempts=attempts, charged=self.charged, unsent=self.unsent + undelivered)

    def keep_lease(self) -> None:
        """Renew the row's lease once a quarter of it has passed (fewer writes); the slot's too."""
        now = time.monotonic()
        if now - self.row_renewed > self.lease / 4:
            renew(self.row, self.ctx.owner, self.lease)
            self.row_renewed = now
        if self.slot is not None and now - self.slot_renewed > self.lease / 4:
            throttle.limits().renew_slot(self.ctx.endpoint, self.slot, self.ctx.owner, self.lease)
            self.slot_renewed = now

    def before_attempt(self, n: int) -> None:
        if n > 1:  # the claim just found the run running, and the budget was checked before it
            self.ctx.check_running()
            check_budget(self.ctx.run, self.next_cost)
        self.keep_lease()

    def before_request(self) -> None:
        """Every HTTP request: the endpoint's rate limits; counted before it is sent."""
        throttle.take_rate(self.ctx.endpoint, self.per_request.prompt_tokens + self.per_request.completion_tokens,
                           sleep=self.ctx.sleep)
        if self.unsent:  # the first: counted by the claim
            self.unsent = 0
        else:
            charge_request(self.row.pk, self.ctx.owner, self.lease, self.per_request)  # also renews the row's lease
            self.charged += 1
            self.row_renewed = time.monotonic()
        self.keep_lease()  # the slot's, on a long multi-request answer

    def attempt(self) -> Any:
        """One attempt in an endpoint slot: the mode's request(s)."""
        ctx = self.ctx
        with throttle.endpoint_slot(ctx.endpoint, ctx.owner, self.lease, should_stop=ctx.check_running,
                                    sleep=ctx.sleep) as self.slot:
            self.slot_renewed = time.monotonic()  # a slot lease just taken
            try:
                self.keep_lease()
                self.attempts += 1
                return send(ctx, self.item, self.content, self.params)
            finally:
                self.slot = None

    def ask(self, drawn: dict[str, Any]) -> None:
        """Ask (with retries) and write the answer, the failure, or the release of a stopped run's row."""
        ctx, endpoint = self.ctx, self.ctx.endpoint
        self.row_renewed = time.monotonic()
        ctx.client.reset_counts()
        try:
            ctx.client.before_request = self.before_request
            done = call_with_retries(self.attempt, max_retries=endpoint.max_retries,
                                     base=endpoint.retry_backoff_seconds, cap=endpoint.retry_backoff_max_seconds,
                                     timeout=endpoint.timeout_seconds, before_attempt=self.before_attempt,
                                     sleep=lambda t: ctx.pause(t, self.keep_lease), history=self.history)
            self.write(done, self.outcome(done.value), drawn)
        except RequestFailed as failed:
            lost = {"status": ModelResponse.Status.FAILED, "error": failed.failure.reason,
                    "raw_output": failed.failure.raw, "detail": {**drawn, "attempt_errors": failed.history}}
            ctx.defer(self.row, written_fields(lost), self.settlement(attempts=failed.attempts))
            write_siblings(ctx, self.row, self.siblings, [lost] * len(self.siblings), self.provenance)
        except Stopped:
            release(ctx, self.row, self.settlement(attempts=self.attempts), self.history)
            raise
        except TRANSIENT_ERRORS:  # the database (or the limits' Redis) went away: nothing to record; retried (tasks.py)
            raise
        except Exception as exc:  # a bug or an unexpected reply: record it on the row, never drop it
            log.exception("run %s item %s sample %s: unexpected error", ctx.run.pk, self.item.pk,
                          self.row.sample_index)
            broken = {"status": ModelResponse.Status.FAILED, "error": f"internal error: {exc!r}"[:2000],
                      "detail": {"attempt_errors": self.history} if self.history else None}
            ctx.defer(self.row, written_fields(broken), self.settlement(attempts=self.attempts))
            write_siblings(ctx, self.row, self.siblings, [broken] * len(self.siblings), self.provenance)

    def outcome(self, value: Any) -> Outcome:
        """The row's outcome; with the item's questions asked together, each sibling's too (``together``)."""
        ctx, row = self.ctx, self.row
        if self.siblings or (row.question and asks_together(ctx.run.study)):
            self.together = together_outcomes(ctx, value, self.item, [row, *self.siblings])
            return self.together[0]
        return interpret(ctx, value, self.item, ctx.kind_of(row))

    def write(self, done: Attempted, outcome: Outcome, drawn: dict[str, Any]) -> None:
        """The answer's row as written (with the task's next write): the outcome, its tokens — those the endpoint
        did not report estimated (characters / 4; max_tokens) and flagged — and its requests settled; with
        ``together``, the outcomes of the sibling rows asked in the same prompt (written without tokens)."""
        run, client = self.ctx.run, self.ctx.client
        prompt_tokens = (outcome.prompt_tokens if outcome.prompt_tokens is not None
                         else self.est_prompt * outcome.requests)
        completion_tokens = (outcome.completion_tokens if outcome.completion_tokens is not None
                             else completion_tokens_per_request(run) * outcome.requests)
        detail = {**drawn, **(outcome.detail or {})}
        if self.history:
            detail["attempt_errors"] = self.history
        if outcome.prompt_tokens is None or outcome.completion_tokens is None:
            detail["usage_estimated"] = True
        unreplied = client.requests - client.refused - client.undelivered - outcome.requests
        if unreplied > 0:
            detail["requests_without_reply"] = unreplied  # counted with estimated tokens (see accounting)
        self.ctx.defer(self.row, written_fields({
            "status": outcome.status, "raw_output": outcome.raw_output, **outcome.answer_columns(),
            "parse_error": outcome.parse_error, "distribution": outcome.distribution, "coverage": outcome.coverage,
            "error": outcome.error, "detail": detail or None, "latency_ms": done.latency_ms,
            "system_fingerprint": outcome.system_fingerprint[:200],
        }), self.settlement((prompt_tokens, completion_tokens), outcome.requests, done.attempts))
        write_siblings(self.ctx, self.row, self.siblings, [{
            "status": other.status, "raw_output": other.raw_output, **other.answer_columns(),
            "parse_error": other.parse_error, "error": other.error, "detail": {**drawn, **(other.detail or {})},
            "latency_ms": done.latency_ms, "system_fingerprint": other.system_fingerprint[:200],
        } for other in self.together[1:]], self.provenance)


def send(ctx: RunContext, item: Item, content: PromptContent, params: dict[str, Any]) -> Any:
    """The request(s) of one attempt, by the run's mode (the endpoint's API style is its adapter's business)."""
    run, endpoint, client = ctx.run, ctx.endpoint, ctx.client.openai
    if run.mode == Mode.FULL_DISTRIBUTION:
        return call_full_distribution(client, endpoint, content, params)
    if run.mode == Mode.LIKELIHOOD:
        return likelihood.score_item(client, endpoint, ctx.kind, item, params)
    if run.refines_id is not None:  # self-refinement: asked as the kind's refinement asks (it may ask again)
        return refinement.ask(run, ctx.kind, client, endpoint, content, params)
    return complete(client, endpoint, content, params)


def process_item(run_id: int, item_id: int, *, owner: str | None = None, sleep: Sleep = time.sleep) -> float | None:
    """Answer every pending sample of one item in one run (``process_items`` of that item)."""
    return process_items(run_id, [item_id], owner=owner, sleep=sleep)


def process_items(run_id: int, item_ids: Sequence[int], *, owner: str | None = None,
                  sleep: Sleep = time.sleep) -> float | None:
    """Answer every pending sample of ``item_ids`` (one task's items, ``runs.enqueue``) in one run, one after
    the other. What a task costs besides its answers — the rows read with their run, the study's
    demonstrations, the prompts looked up and stored (``RunContext.prepare``), the check whether the run is done,
    the queue's own work — is paid once for them all.

    Returns None when nothing is left for these items (or the run is stopped), else the number of seconds
    after which to try again because another worker holds some of their rows.
    """
    rows = row_sql.pending_rows(run_id, item_ids)  # each with its run, endpoint, study and item
    if not rows:  # (a stopped run's rows stay pending: finish_if_done finishes only running runs)
        finish_if_done(run_id)
        return None
    run = rows[0].run
    if run.status != ElicitationRun.Status.RUNNING:
        return None
    if key_problem := run.endpoint.key_problem():  # never send a variable where it is not allowed
        ModelResponse.objects.filter(pk__in=[r.pk for r in rows], status=ModelResponse.Status.PENDING).update(
            status=ModelResponse.Status.FAILED, error=key_problem[:2000])
        finish_if_done(run.pk)
        return None
    ctx = RunContext(run=run, endpoint=run.endpoint, kind=run.study.kind,
                     demonstrations=row_sql.demonstrations(run.study) if run.few_shot else [],
                     client=client_for(run.endpoint), owner=owner or new_owner(), sleep=sleep)
    retry_in: float | None = None
    asked = asked_rows(run, rows)
    ctx.prepare([row for row, _ in asked])
    ctx.client.guard.should_stop = ctx.check_running  # a cancel reaches the request in flight
    try:
        for row, siblings in asked:
            item = row.item if row.item_id is not None else check_item(run.study, row.check_key)
            busy = answer_row(ctx, row, item, siblings)
            if busy is not None:
                retry_in = busy if retry_in is None else min(retry_in, busy)
    except Stopped:
        return None
    finally:
        ctx.client.before_request = ctx.client.guard.should_stop = None
        ctx.commit()  # the task's last answer (or release)
    finish_if_done(run.pk)
    return retry_in


def asked_rows(run: ElicitationRun, rows: Sequence[ModelResponse]) -> list[tuple[ModelResponse,
                                                                                 list[ModelResponse]]]:
    """The prompts a task sends for ``rows``: each row alone, or, when the study asks an item's questions
    together, one per (item, sample) on the row of its first pending question, with the rows of its other pending
    questions (written with it)."""
    if run.refines_id is not None or not asks_together(run.study):
        return [(row, []) for row in rows]
    order = {key: n for n, key in enumerate(keys_of(run.study))}
    groups: dict[tuple[int, int], list[ModelResponse]] = {}
    out: list[tuple[ModelResponse, list[ModelResponse]]] = []
    for row in rows:
        if row.check_key:  # an attention check: asked alone
            out.append((row, []))
        else:
            groups.setdefault((row.item_id, row.sample_index), []).append(row)
    for group in groups.values():
        group.sort(key=lambda r: order.get(r.question, len(order)))
        out.append((group[0], group[1:]))
    return out


def finish_if_done(run_id: int) -> bool:
    """Mark a running run completed (or failed, if any answer failed) once no row is pending."""
    if row_sql.has_pending(run_id):
        return False
    failed = ModelResponse.objects.filter(run_id=run_id, status=ModelResponse.Status.FAILED).count()
    status = ElicitationRun.Status.FAILED if failed else ElicitationRun.Status.COMPLETED
    reason = f"{failed} answer(s) failed; resume the run to retry them" if failed else ""
    return bool(ElicitationRun.objects.filter(pk=run_id, status=ElicitationRun.Status.RUNNING).update(
        status=status, status_reason=reason, finished_at=timezone.now()))
