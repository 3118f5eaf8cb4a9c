"""A run's life: create, start, cancel, resume, run in-process, and its progress figures."""
from __future__ import annotations

import logging
import math
import time
from decimal import Decimal
from typing import Any, Callable, Iterable

from django.db import transaction
from django.db.models import Count, Exists, Max, OuterRef, Sum
from django.utils import timezone
from kombu.exceptions import KombuError

from config.lazy_import import lazy_module
from surveys.condition_context import cells_of
from surveys.models import Item, Study

from . import conf, throttle
from .destinations import url_problem
from .estimate import MICRO, requests_per_answer
from .likelihood import LikelihoodUnavailable, check_endpoint
from .models import ElicitationRun, ModelEndpoint, ModelResponse
from surveys.questions import keys_of

from .question_prompts import agent_asks_checks
from .run_settings import settings_errors

redis = lazy_module("redis")  # imported only when the limits' Redis fails

log = logging.getLogger(__name__)
Mode = ElicitationRun.Mode
Status = ElicitationRun.Status
STALLED_AFTER_SECONDS = 60
RESUMABLE = {Status.RUNNING, Status.CANCELLED, Status.BUDGET_EXHAUSTED, Status.FAILED, Status.COMPLETED}
# What publishing a task raises when the broker is down: kombu wraps the transport's connection errors in
# its OperationalError (a KombuError); a refused or timed-out socket can come through unwrapped.
BROKER_ERRORS = (KombuError, ConnectionError, TimeoutError)


class RunStateError(Exception):
    """The action does not apply to the run in its current state."""


def missing_key(endpoint: ModelEndpoint) -> str:
    """Why a run on ``endpoint`` cannot start for want of its API key ("" when it can): the endpoint names a
    key variable that is not set (or is empty) in this process's environment. Checked by every start path
    (``start_run``, ``resume_run``; the elicit command before it creates a run), so a run is refused at once
    instead of failing every answer after its retries."""
    if endpoint.api_key_env and not endpoint.api_key():
        return (f"endpoint {endpoint.name!r} reads its API key from the environment variable "
                f"{endpoint.api_key_env}, which is not set: set {endpoint.api_key_env} for the web server and "
                "the workers (then restart them), or change the endpoint's key variable")
    return ""


def _check_key(run: ElicitationRun) -> None:
    """Refuse a run whose endpoint is at an address requests may not go to, or names a key variable the
    operator does not allow for its host, or one that is unset;
    and a likelihood run whose endpoint cannot return prompt log-probabilities (one probe request)."""
    if problem := url_problem(run.endpoint.base_url) or run.endpoint.key_problem():
        raise RunStateError(f"endpoint {run.endpoint.name}: {problem}")
    if problem := missing_key(run.endpoint):
        raise RunStateError(problem)
    if run.mode == Mode.LIKELIHOOD:
        try:
            check_endpoint(run.endpoint)
        except LikelihoodUnavailable as exc:
            raise RunStateError(str(exc)) from None


def run_condition(study: Study, condition: str) -> str:
    """The cell a new run of ``study`` asks under: ``condition``, or the study's first cell when it declares factors
    and none is given ("" without factors); ValidationError for a cell the study does not have."""
    cells = cells_of(study.definition)
    if not cells:
        if condition:
            from django.core.exceptions import ValidationError

            raise ValidationError({"condition": f"study {study.slug} declares no factors (no cell {condition!r})"})
        return ""
    if condition and condition not in cells:
        from django.core.exceptions import ValidationError

        raise ValidationError({"condition": f"no cell {condition!r} in {study.slug} (cells: {', '.join(cells)})"})
    return condition or cells[0]


def create_run(study: Study, endpoint: ModelEndpoint, mode: str = Mode.GREEDY, *, items: Iterable[Item] = (),
               samples: int = 1, temperature: float = 0.0, seed: int | None = None, few_shot: bool = True,
               max_tokens: int = 8, top_logprobs: int = 20, budget_usd: Decimal | None = None, name: str = "",
               prompt_version: str | None = None, prompt_style: str = "standard",
               created_by: Any = None, idempotency_key: str = "", idempotency_fingerprint: str = "",
               before_save: Callable[[ModelEndpoint], None] | None = None, agent: str = "",
               agent_settings: dict | None = None, personas: list | None = None,
               persona_seed: int | None = None, condition: str = "") -> ElicitationRun:
    """A new draft run (validated; ValidationError names the bad settings). With an ``idempotency_key``
    (elicitation.idempotency) a second run of the same user and key is refused by IntegrityError.
    ``before_save(endpoint)`` runs once the settings are valid, before anything is saved, and may refuse the run
    by raising (e.g. the endpoint's pre-flight check, elicitation.preflight). A declared agent's run
    (elicitation.declared_agents) carries ``agent``, its ``agent_settings``, its ``personas`` and their
    ``persona_seed``. A study with ``[[factors]]``: the run asks under ``condition`` (a cell; empty: the study's
    first cell, recorded on the run)."""
    run = ElicitationRun(study=study, endpoint=endpoint, mode=mode, samples_per_item=samples,
                         temperature=temperature, seed=seed, few_shot=few_shot, max_tokens=max_tokens,
                         top_logprobs=top_logprobs, budget_usd=budget_usd, name=name, prompt_style=prompt_style,
                         created_by=created_by, idempotency_key=idempotency_key,
                         idempotency_fingerprint=idempotency_fingerprint, agent=agent,
                         agent_settings=agent_settings or {}, personas=personas or [], persona_seed=persona_seed,
                         condition=run_condition(study, condition))
    if prompt_version:
        run.prompt_version = prompt_version
    run.full_clean()
    items = list(items)
    foreign = [i.key for i in items if i.study_id != study.pk or i.is_demonstration]
    if foreign:
        from django.core.exceptions import ValidationError

        raise ValidationError({"items": f"not main items of {study.slug}: {', '.join(foreign[:5])}"})
    if before_save is not None:
        before_save(endpoint)
    with transaction.atomic():
        run.save()
        if items:
            run.items.set(items)
    return run


def ensure_rows(run: ElicitationRun) -> int:
    """Create the pending row of every (item, sample, question) the run still lacks; the number of rows. A run
    with personas asks every item once per persona per sample: sample index = persona index × samples per item +
    sample, and the row carries the persona's field values. A study with ``[[questions]]`` has a row per question
    of each (its key in ``question``; elicitation/question_prompts.py), else one with ``question`` "". An agent with
    ``checks = true`` has a row per attention check, persona and sample too (no item; ``check_key``)."""
    item_ids = list(run.target_items().values_list("pk", flat=True))
    personas = [p["fields"] for p in run.personas] if run.personas else [None]
    per = run.samples_per_item
    questions = [""] if run.refines_id is not None else keys_of(run.study)
    ModelResponse.objects.bulk_create(
        [ModelResponse(run=run, item_id=item_id, sample_index=p * per + s, question=question, persona=fields,
                       condition=run.condition)
         for item_id in item_ids for p, fields in enumerate(personas) for s in range(per) for question in questions]
        + [ModelResponse(run=run, item=None, check_key=key, sample_index=p * per + s, persona=fields,
                         condition=run.condition)
           for key in agent_asks_checks(run) for p, fields in enumerate(personas) for s in range(per)],
        ignore_conflicts=True, batch_size=500,
    )
    return ModelResponse.objects.filter(run=run).count()


def pending_item_ids(run: ElicitationRun) -> list[int | None]:
    """The items with a pending row, in order; None (last) stands for the run's pending attention checks."""
    found = set(ModelResponse.objects.filter(run=run, status=ModelResponse.Status.PENDING)
                .values_list("item_id", flat=True).distinct().order_by())
    return sorted(i for i in found if i is not None) + ([None] if None in found else [])


def items_per_task(run: ElicitationRun, n_items: int) -> int:
    """How many items the next task answers when ``n_items`` are left to queue: as many as make about
    ``ELICITATION_REQUESTS_PER_TASK`` requests (8), and no more than an equal share of them per endpoint slot
    (``task_groups``). One item per task for sampled and multi-request runs whose item alone asks that many."""
    per_item = run.answers_per_item() * run.requests_per_sample() * requests_per_answer(run)
    by_requests = int(conf.requests_per_task() // max(1.0, per_item))
    share = math.ceil(n_items / max(1, run.endpoint.max_concurrency))
    return max(1, min(by_requests, share))


def task_groups(run: ElicitationRun, item_ids: list[int]) -> list[list[int]]:
    """``item_ids`` cut, in order, into the groups one task each answers, each of ``items_per_task`` of the items
    left (guided self-scheduling): groups of about 8 requests while many items are left, fewer as a run's end
    nears, and one item each for the last ones (as many as the endpoint has slots, less one), so that the slots
    finish together: a run's end waits for about one item, not for a whole group started last while the other
    slots sit idle. Large groups pay a task's own costs (its message, rows, prompts, the check whether the run is
    done) once for more answers."""
    groups, start = [], 0
    while start < len(item_ids):
        size = items_per_task(run, len(item_ids) - start)
        groups.append(list(item_ids[start:start + size]))
        start += size
    return groups


BROKER_UNAVAILABLE = ("queued, broker unavailable: the answers are asked once the broker is back "
                      "(the periodic sweep sends the run's items then; nothing to do)")


def enqueue(run: ElicitationRun, item_ids: list[int]) -> None:
    """Queue the items in tasks of a few items each (``task_groups``; after the current transaction commits).
    Grouped, an answer does not pay alone for what a task costs: the queue's message, the rows read with
    their run, the demonstrations, the check whether the run is done.

    A broker that cannot be reached does not fail the caller (the run and its pending rows are committed):
    the run's ``status_reason`` says ``BROKER_UNAVAILABLE`` and the sweep (``elicitation.sweep``) queues the
    items once the broker answers and its queue is empty; a later successful send clears the reason."""
    from .item_tasks import elicit_items

    run_id, queue, groups = run.pk, conf.queue(), task_groups(run, item_ids)

    def send() -> None:
        try:
            for group in groups:
                elicit_items.apply_async((run_id, group), queue=queue)
        except BROKER_ERRORS as exc:
            log.warning("run %s: the broker cannot be reached (%r); the sweep will queue its items", run_id, exc)
            ElicitationRun.objects.filter(pk=run_id, status=Status.RUNNING).update(status_reason=BROKER_UNAVAILABLE)
            return
        ElicitationRun.objects.filter(pk=run_id, status_reason=BROKER_UNAVAILABLE).update(status_reason="")

    transaction.on_commit(send)


def _set_running(run: ElicitationRun) -> None:
    now = timezone.now()
    run.status, run.status_reason, run.finished_at, run.last_started_at = Status.RUNNING, "", None, now
    run.started_at = run.started_at or now
    run.save(update_fields=["status", "status_reason", "finished_at", "last_started_at", "started_at"])


def refuse_imported(run: ElicitationRun) -> None:
    """An imported run holds answers read from a file: there is nothing to ask, and its endpoint stands for
    a model that is not reachable."""
    if run.source == ElicitationRun.Source.IMPORTED:
        raise RunStateError(f"run {run.pk} holds imported answers ({run.source_file or 'a file'}); "
                            "it cannot be started or resumed")


def start_run(run: ElicitationRun, *, queue: bool = True) -> list[int]:
    """Start a draft run: create its rows and queue its items. Returns the queued item ids."""
    refuse_imported(run)
    errors = settings_errors(run)
    if errors:
        raise RunStateError("; ".join(f"{k}: {v}" for k, v in errors.items()))
    _check_key(run)
    with transaction.atomic():
        run = ElicitationRun.objects.select_for_update().get(pk=run.pk)
        if run.status != Status.DRAFT:
            raise RunStateError(f"run {run.pk} is {run.get_status_display().lower()}, not a draft; use resume")
        if ensure_rows(run) == 0:
            raise RunStateError(f"run {run.pk} has no items to ask (does study {run.study.slug} have items?)")
        _set_running(run)
        item_ids = pending_item_ids(run)
        if queue:
            enqueue(run, item_ids)
    return item_ids


def cancel_run(run: ElicitationRun, reason: str = "") -> bool:
    """Stop a running run: no new request is sent; queued tasks become no-ops. False if not running."""
    return bool(ElicitationRun.objects.filter(pk=run.pk, status__in=[Status.RUNNING, Status.DRAFT]).update(
        status=Status.CANCELLED, status_reason=reason or "cancelled", finished_at=timezone.now()))


def resume_run(run: ElicitationRun, *, queue: bool = True) -> list[int]:
    """Carry on a stopped or finished run: failed answers become pending again and every item with a
    pending answer is queued (answers already given are kept). Returns the queued item ids."""
    refuse_imported(run)
    if run.status == Status.DRAFT:
        return start_run(run, queue=queue)
    _check_key(run)
    with transaction.atomic():
        run = ElicitationRun.objects.select_for_update().get(pk=run.pk)
        if run.status not in RESUMABLE:
            raise RunStateError(f"run {run.pk} cannot be resumed from {run.status}")
        ensure_rows(run)
        ModelResponse.objects.filter(run=run, status=ModelResponse.Status.FAILED).update(
            status=ModelResponse.Status.PENDING)
        item_ids = pending_item_ids(run)
        _set_running(run)
        if queue:
            enqueue(run, item_ids)
    if not item_ids:
        from .worker import finish_if_done

        finish_if_done(run.pk)
    return item_ids


def run_sync(run: ElicitationRun, on_item: Callable[[], None] | None = None,
             sleep: Callable[[float], None] = time.sleep) -> ElicitationRun:
    """Answer a running run's pending items in this process (no worker), one request at a time, in the groups
    a worker's tasks would take (``items_per_task``); ``on_item`` is called for each item of a group done.
    Rows another worker holds are waited for. Returns the run as it ended."""
    from .worker import finish_if_done, new_owner, process_items

    owner = new_owner()
    while True:
        run.refresh_from_db(fields=["status"])
        if run.status != Status.RUNNING:
            break
        waits = []
        for group in task_groups(run, pending_item_ids(run)):
            retry_in = process_items(run.pk, group, owner=owner, sleep=sleep)
            if retry_in is not None:
                waits.append(retry_in)
            if on_item is not None:
                for _ in group:
                    on_item()
        if not waits:
            finish_if_done(run.pk)
            run.refresh_from_db(fields=["status"])
            if run.status != Status.RUNNING or not pending_item_ids(run):
                break
            continue
        sleep(min(waits))
    run.refresh_from_db()
    return run


def requests_in_flight(run: ElicitationRun, held) -> int:
    """Requests of the run at its endpoint right now: the endpoint's concurrency slots held (lease live) by
    the workers that hold the run's rows (``held``); a worker holds a slot exactly while it asks."""
    try:
        holders = throttle.limits().holders(run.endpoint)
    except redis.RedisError:  # the limits' Redis is out of reach: the page still shows everything else
        log.warning("run %s: requests in flight unknown (the limits' Redis cannot be reached)", run.pk)
        return 0
    return len(holders & set(held.values_list("lease_owner", flat=True))) if holders else 0


def runs_ahead(run: ElicitationRun) -> list[int]:
    """Running runs started or resumed before ``run`` that still have answers to get, oldest first: their tasks
    are ahead of ``run``'s in the Celery queue, which every run shares."""
    if run.last_started_at is None:
        return []
    pending = ModelResponse.objects.filter(run=OuterRef("pk"), status=ModelResponse.Status.PENDING)
    return list(ElicitationRun.objects.filter(status=Status.RUNNING, last_started_at__lt=run.last_started_at)
                .filter(Exists(pending)).order_by("last_started_at", "pk").values_list("pk", flat=True))


def progress(run: ElicitationRun, failures: int = 50) -> dict[str, Any]:
    """The figures of the run page: counts, tokens, cost, answers per second, recent failures."""
    rows = ModelResponse.objects.filter(run=run)
    counts = {status: n for status, n in rows.values_list("status").annotate(n=Count("id")).order_by()}
    total = sum(counts.values())
    if total == 0 and run.status == Status.DRAFT:
        total = (run.target_items().count() * run.questions_per_answer() + len(agent_asks_checks(run))) \
            * run.answers_per_item()
    sums = rows.aggregate(prompt_tokens=Sum("prompt_tokens"), completion_tokens=Sum("completion_tokens"),
                          cost=Sum("cost_usd"), requests=Sum("requests"))
    now = timezone.now()
    done_statuses = [ModelResponse.Status.OK, ModelResponse.Status.UNPARSEABLE]
    rate = None
    if run.last_started_at:
        end = run.finished_at if run.finished_at and run.finished_at > run.last_started_at else now
        elapsed = (end - run.last_started_at).total_seconds()
        recent = rows.filter(status__in=done_statuses, answered_at__gte=run.last_started_at).count()
        rate = round(recent / elapsed, 3) if elapsed > 0 else None
    ok, unparseable = counts.get(ModelResponse.Status.OK, 0), counts.get(ModelResponse.Status.UNPARSEABLE, 0)
    failed_rows = (rows.filter(status=ModelResponse.Status.FAILED).select_related("item")
                   .order_by("-answered_at")[:failures])
    pending = counts.get(ModelResponse.Status.PENDING, 0)
    held = rows.filter(status=ModelResponse.Status.PENDING, lease_until__gte=now)
    working = held.count()  # answers a worker holds: asking, or waiting to retry
    in_flight = requests_in_flight(run, held) if working else 0
    quiet_for = queued_behind = queue_position = None
    status_display = run.get_status_display()
    idle = run.status == Status.RUNNING and pending and not working
    ahead = runs_ahead(run) if idle else []
    if ahead:  # waiting for the runs before it, not stuck: position 1 is the run being answered
        queued_behind, queue_position = ahead[-1], len(ahead) + 1
        status_display = f"Queued behind run {queued_behind} (position {queue_position} in the queue)"
    elif idle:
        last = rows.aggregate(last=Max("answered_at"))["last"]
        since = max(t for t in (last, run.last_started_at) if t is not None) if (last or run.last_started_at) else None
        quiet_for = (now - since).total_seconds() if since else None
    return {
        "run": run.pk, "status": run.status, "status_display": status_display,
        "status_reason": run.status_reason, "queued_behind": queued_behind, "queue_position": queue_position,
        "total": total, "done": ok + unparseable, "ok": ok, "unparseable": unparseable,
        "failed": counts.get(ModelResponse.Status.FAILED, 0), "pending": pending, "in_flight": in_flight,
        "working": working,
        # running, answers missing, nothing in flight and no answer for a while: are the workers up?
        "stalled": quiet_for is not None and quiet_for > STALLED_AFTER_SECONDS,
        "prompt_tokens": sums["prompt_tokens"] or 0, "completion_tokens": sums["completion_tokens"] or 0,
        "requests": sums["requests"] or 0,
        "cost_usd": str(Decimal(sums["cost"] or 0).quantize(MICRO)),
        "budget_usd": str(run.budget_usd) if run.budget_usd is not None else None,
        "answers_per_second": rate,
        "started_at": run.started_at.isoformat() if run.started_at else None,
        "finished_at": run.finished_at.isoformat() if run.finished_at else None,
        "failures": [{"item": r.item.key if r.item_id else f"check {r.check_key}", "item_id": r.item_id,
                      "sample_index": r.sample_index, "error": r.error, "attempts": r.attempts} for r in failed_rows],
    }

