"""Retries, timeouts, budget, cancellation, resume, leases and limits (in-process, against the stub)."""
from __future__ import annotations

import logging
import random
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Count
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from elicitation import throttle
from elicitation.client import backoff_delay, parse_retry_after
from elicitation.estimate import estimate_run
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.prompts import approx_tokens, build_prompt, prompt_content
from elicitation.runs import RunStateError, cancel_run, create_run, progress, resume_run, run_sync, start_run
from elicitation.worker import process_item
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db
Status = ElicitationRun.Status


def items_of(study, n):
    return list(study.main_items().order_by("id")[:n])


def started(study, endpoint, items, **settings) -> ElicitationRun:
    run = create_run(study, endpoint, items=items, **settings)
    start_run(run, queue=False)
    return run


# --- retry policy -------------------------------------------------------------------------------

def test_429_with_retry_after_then_success(stub, imported_nv):
    stub.queue(Reply.error(429, "slow down", headers={"Retry-After": "1"}), Reply.answer("65"))
    endpoint = make_endpoint(stub, retry_backoff_seconds=0.01)
    run = run_sync(started(imported_nv, endpoint, items_of(imported_nv, 1)))

    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.value, row.attempts, row.requests) == ("ok", 65, 2, 2)
    assert len(stub.requests) == 2
    # the retry came no earlier than the server asked (backoff alone would wait ~0.01 s)
    assert stub.requests[1].received_at - stub.requests[0].received_at >= 1.0
    assert row.detail["attempt_errors"] == ["attempt 1: HTTP 429: slow down"]
    assert run.status == Status.COMPLETED


def test_retry_after_ms_is_honoured(stub, imported_nv):
    stub.queue(Reply.error(503, headers={"retry-after-ms": "600"}), Reply.answer("20"))
    run = run_sync(started(imported_nv, make_endpoint(stub), items_of(imported_nv, 1)))
    assert ModelResponse.objects.get(run=run).attempts == 2
    assert stub.requests[1].received_at - stub.requests[0].received_at >= 0.6


def test_5xx_until_retries_are_exhausted_marks_the_answer_failed(stub, imported_nv):
    stub.default = Reply.error(502, "upstream exploded")
    endpoint = make_endpoint(stub, max_retries=2)
    run = run_sync(started(imported_nv, endpoint, items_of(imported_nv, 2)))

    rows = list(ModelResponse.objects.filter(run=run))
    assert len(rows) == 2 and len(stub.requests) == 6  # 2 items × (1 + 2 retries)
    for row in rows:
        assert row.status == "failed" and row.attempts == 3 and row.requests == 3
        assert row.error == "HTTP 502: upstream exploded"
        assert len(row.detail["attempt_errors"]) == 3
        assert "upstream exploded" in row.raw_output  # the error body is kept
    assert run.status == Status.FAILED and "2 answer(s) failed" in run.status_reason
    p = progress(run)
    assert p["failed"] == 2 and p["done"] == 0
    assert {f["error"] for f in p["failures"]} == {"HTTP 502: upstream exploded"}


def test_client_errors_are_not_retried(stub, imported_nv):
    stub.default = Reply.error(400, "model not found")
    run = run_sync(started(imported_nv, make_endpoint(stub, max_retries=4), items_of(imported_nv, 1)))
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and row.attempts == 1 and len(stub.requests) == 1
    assert "400" in row.error and "model not found" in row.error


def test_timeout_is_retried_then_recorded(stub, imported_nv):
    stub.default = Reply.answer("50", delay=1.5)
    endpoint = make_endpoint(stub, timeout_seconds=0.3, max_retries=1)
    run = run_sync(started(imported_nv, endpoint, items_of(imported_nv, 1)))
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and row.attempts == 2 and len(stub.requests) == 2
    assert row.error.startswith("timeout")


def test_timeout_then_answer(stub, imported_nv):
    stub.queue(Reply.answer("10", delay=1.5), Reply.answer("85"))
    endpoint = make_endpoint(stub, timeout_seconds=0.3, max_retries=2)
    run = run_sync(started(imported_nv, endpoint, items_of(imported_nv, 1)))
    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.value, row.attempts) == ("ok", 85, 2)
    assert row.detail["attempt_errors"][0].startswith("attempt 1: timeout")


def test_garbage_http_body_is_retried_and_kept_when_it_persists(stub, imported_nv):
    items = items_of(imported_nv, 2)
    stub.queue(Reply.garbage(), Reply.answer("45"), Reply.garbage(b'{"not": "a completion"}', "application/json"),
               Reply.garbage(b'{"not": "a completion"}', "application/json"))
    run = run_sync(started(imported_nv, make_endpoint(stub, max_retries=1), items))
    first, second = ModelResponse.objects.filter(run=run).order_by("item_id")
    assert (first.status, first.value, first.attempts) == ("ok", 45, 2)
    assert second.status == "failed" and second.error.startswith("malformed response")
    assert "not" in second.raw_output


def test_truncated_json_body_is_retried(stub, imported_nv):
    """A body cut off mid-JSON (a proxy dropped the connection) is a malformed body: retried, as documented."""
    truncated = Reply.garbage(b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "mess',
                              "application/json")
    stub.queue(truncated, Reply.answer("45"), truncated, truncated)
    run = run_sync(started(imported_nv, make_endpoint(stub, max_retries=1), items_of(imported_nv, 2)))
    first, second = ModelResponse.objects.filter(run=run).order_by("item_id")
    assert (first.status, first.value, first.attempts) == ("ok", 45, 2)
    assert first.detail["attempt_errors"][0].startswith("attempt 1: malformed response")
    assert (second.status, second.attempts) == ("failed", 2) and second.error.startswith("malformed response")


def test_a_connection_cut_while_reading_the_body_is_retried():
    from elicitation.client import classify, httpx
    failure = classify(httpx.RemoteProtocolError("peer closed connection without sending complete message body"))
    assert failure.retryable and failure.reason.startswith("connection error")


def test_backoff_is_exponential_with_jitter_and_capped():
    rng = random.Random(1)
    for attempt, ceiling in [(1, 1.0), (2, 2.0), (3, 4.0), (4, 8.0), (8, 10.0)]:
        for _ in range(50):
            d = backoff_delay(attempt, base=1.0, cap=10.0, retry_after=None, rng=rng)
            assert ceiling / 2 <= d <= ceiling
    assert backoff_delay(1, base=1.0, cap=10.0, retry_after=30.0, rng=rng) == 30.0


def test_parse_retry_after_forms():
    assert parse_retry_after({"retry-after": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    future = timezone.now() + timedelta(seconds=20)
    from email.utils import format_datetime

    assert 15 < parse_retry_after({"retry-after": format_datetime(future, usegmt=True)}) <= 20
    assert parse_retry_after({"retry-after": "soon"}) is None
    assert parse_retry_after({}) is None


# --- budget ------------------------------------------------------------------------------------

def test_budget_cap_stops_cleanly_and_resume_with_more_budget_finishes(stub, imported_nv):
    items = items_of(imported_nv, 4)
    # each answer really costs 1000 prompt tokens × $1/1k = $1.00
    stub.default = Reply.answer("60", prompt_tokens=1000, completion_tokens=0)
    endpoint = make_endpoint(stub, price_prompt_per_1k="1", price_completion_per_1k="0")
    run = started(imported_nv, endpoint, items, budget_usd=Decimal("2.5"), max_tokens=1)
    # the estimate of one request (characters/4 + max_tokens) is between $0.50 and $1.00, so:
    # before #1: 0 + est ≤ 2.5; before #2: 1 + est ≤ 2.5; before #3: 2 + est > 2.5 → stop
    per_request = [(approx_tokens(prompt_content(build_prompt(imported_nv, i, True), "chat")) + 1) / 1000
                   for i in items]
    assert all(0.5 < c < 1.0 for c in per_request)
    run = run_sync(run)

    assert run.status == Status.BUDGET_EXHAUSTED and "budget reached" in run.status_reason
    assert len(stub.requests) == 2
    counts = dict(ModelResponse.objects.filter(run=run).values_list("status").annotate(n=Count("id")).order_by())
    assert counts == {"ok": 2, "pending": 2}
    # queued tasks after the stop send nothing
    assert process_item(run.pk, items[3].pk) is None and len(stub.requests) == 2

    ElicitationRun.objects.filter(pk=run.pk).update(budget_usd=Decimal("10"))
    run.refresh_from_db()
    assert sorted(resume_run(run, queue=False)) == sorted(i.pk for i in items[2:])
    run = run_sync(run)
    assert run.status == Status.COMPLETED and len(stub.requests) == 4
    assert ModelResponse.objects.filter(run=run, status="ok").count() == 4
    assert progress(run)["cost_usd"] == "4.000000"


# --- cancellation and resume -----------------------------------------------------------------------

def test_cancel_makes_queued_work_a_no_op_and_resume_does_only_the_rest(stub, imported_nv):
    items = items_of(imported_nv, 5)
    stub.default = Reply.answer("40")
    run = started(imported_nv, make_endpoint(stub), items)
    answered = []

    def after_item():
        answered.append(1)
        if len(answered) == 2:
            assert cancel_run(run)

    run = run_sync(run, on_item=after_item)
    assert run.status == Status.CANCELLED
    assert len(stub.requests) == 2
    assert ModelResponse.objects.filter(run=run, status="pending").count() == 3
    for item in items:  # tasks still in the queue do nothing
        assert process_item(run.pk, item.pk) is None
    assert len(stub.requests) == 2
    first_answers = dict(ModelResponse.objects.filter(run=run, status="ok").values_list("pk", "answered_at"))

    queued = resume_run(run, queue=False)
    assert len(queued) == 3
    run = run_sync(run)
    assert run.status == Status.COMPLETED and len(stub.requests) == 5
    assert ModelResponse.objects.filter(run=run).count() == 5
    # the answers given before the cancel were not asked again
    for pk, answered_at in first_answers.items():
        assert ModelResponse.objects.get(pk=pk).answered_at == answered_at


def test_cancel_during_a_backoff_wait_sends_nothing_more(stub, imported_nv):
    stub.queue(Reply.error(429, headers={"Retry-After": "30"}))
    run = started(imported_nv, make_endpoint(stub), items_of(imported_nv, 1))
    sleeps = []

    def sleep(seconds):  # the worker waits for the Retry-After; the researcher cancels meanwhile
        sleeps.append(seconds)
        cancel_run(run)

    run = run_sync(run, sleep=sleep)
    assert run.status == Status.CANCELLED and sleeps
    row = ModelResponse.objects.get(run=run)
    assert row.status == "pending" and row.attempts == 1 and row.lease_owner == "" and row.lease_until is None
    assert row.detail == {"attempt_errors": ["attempt 1: HTTP 429: stub error"]}
    assert len(stub.requests) == 1


def test_cancel_while_waiting_for_a_slot_takes_the_claims_count_back(stub, imported_nv):
    """The claim counts the answer's first request (with its estimated tokens and cost) in the statement that
    leases the row; a run cancelled before that request was sent (its worker waiting for the endpoint's slot)
    gives the row back as it was: no request, no tokens, no cost."""
    endpoint = make_endpoint(stub, max_concurrency=1, price_prompt_per_1k="1", price_completion_per_1k="1")
    run = started(imported_nv, endpoint, items_of(imported_nv, 1))
    assert throttle.limits().try_acquire_slot(endpoint, "another-worker", 60) is not None
    counted = []

    def sleep(seconds):  # waiting for the slot: the row is leased and its first request counted
        counted.append(ModelResponse.objects.filter(run=run).values_list("requests", "cost_usd").get())
        cancel_run(run)

    run = run_sync(run, sleep=sleep)
    assert run.status == Status.CANCELLED and counted and counted[0][0] == 1 and counted[0][1] > 0
    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.requests, row.prompt_tokens, row.completion_tokens, row.cost_usd, row.attempts) == \
        ("pending", 0, 0, 0, Decimal(0), 0)
    assert row.lease_owner == "" and row.lease_until is None and len(stub.requests) == 0


def test_resume_retries_only_failed_answers(stub, imported_nv):
    items = items_of(imported_nv, 3)
    failing = items[1].text()
    stub.responder = lambda r: Reply.error(500) if failing in r.prompt_text.split("Kathleen")[-1].split(
        "Cedric")[-1] else Reply.answer("55")
    endpoint = make_endpoint(stub, max_retries=1)
    run = run_sync(started(imported_nv, endpoint, items))
    assert run.status == Status.FAILED
    assert ModelResponse.objects.get(run=run, item=items[1]).attempts == 2
    before = dict(ModelResponse.objects.filter(run=run, status="ok").values_list("pk", "answered_at"))
    assert len(before) == 2

    stub.responder = None
    stub.default = Reply.answer("95")
    assert resume_run(run, queue=False) == [items[1].pk]
    run = run_sync(run)
    assert run.status == Status.COMPLETED
    assert len(stub.requests) == 2 + 2 + 1
    row = ModelResponse.objects.get(run=run, item=items[1])
    assert (row.status, row.value, row.attempts) == ("ok", 95, 3)  # attempts add up over resumes
    for pk, answered_at in before.items():
        assert ModelResponse.objects.get(pk=pk).answered_at == answered_at


def test_start_twice_is_refused_and_resume_of_a_finished_run_does_nothing(stub, imported_nv):
    run = run_sync(started(imported_nv, make_endpoint(stub), items_of(imported_nv, 2)))
    with pytest.raises(RunStateError):
        start_run(run, queue=False)
    assert resume_run(run, queue=False) == []
    run.refresh_from_db()
    assert run.status == Status.COMPLETED and len(stub.requests) == 2


# --- never a second row; leases -------------------------------------------------------------------

def test_database_refuses_a_second_row_for_the_same_sample(stub, imported_nv):
    run = started(imported_nv, make_endpoint(stub), items_of(imported_nv, 1))
    row = ModelResponse.objects.get(run=run)
    with pytest.raises(IntegrityError), transaction.atomic():
        ModelResponse.objects.create(run=run, item=row.item, sample_index=0)


def test_row_held_by_a_live_worker_is_left_alone_until_its_lease_runs_out(stub, imported_nv):
    items = items_of(imported_nv, 1)
    run = started(imported_nv, make_endpoint(stub), items)
    row = ModelResponse.objects.get(run=run)
    ModelResponse.objects.filter(pk=row.pk).update(lease_owner="other-worker",
                                                   lease_until=timezone.now() + timedelta(seconds=20))
    retry_in = process_item(run.pk, items[0].pk)
    assert retry_in is not None and 15 < retry_in <= 20
    assert len(stub.requests) == 0

    # that worker died: its lease expires and the row is answered, once
    ModelResponse.objects.filter(pk=row.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    assert process_item(run.pk, items[0].pk) is None
    assert process_item(run.pk, items[0].pk) is None  # a redelivered task finds nothing to do
    assert len(stub.requests) == 1
    row.refresh_from_db()
    assert row.status == "ok" and row.lease_owner == ""
    run.refresh_from_db()
    assert run.status == Status.COMPLETED


def test_a_late_answer_never_overwrites_the_first(stub, imported_nv, caplog):
    from elicitation.worker import RunContext, written_fields

    run = started(imported_nv, make_endpoint(stub), items_of(imported_nv, 1))
    row = ModelResponse.objects.get(run=run)
    ctx = RunContext(run=run, endpoint=run.endpoint, kind=run.study.kind, demonstrations=[], client=None,
                     owner="w1")
    discarded = "was answered by another worker; this answer is discarded"
    ctx.defer(row, written_fields({"status": "ok", "value": 10.0, "raw_output": "10"}))
    with caplog.at_level(logging.WARNING, logger="elicitation.worker"):
        ctx.commit()  # the worker writes an answer with its next write
    assert discarded not in caplog.text
    ctx.defer(row, written_fields({"status": "ok", "value": 90.0, "raw_output": "90"}))  # a late second answer
    with caplog.at_level(logging.WARNING, logger="elicitation.worker"):
        ctx.commit()
    assert discarded in caplog.text
    row.refresh_from_db()
    assert row.value == 10.0 and ModelResponse.objects.filter(run=run).count() == 1


# --- shared limits ----------------------------------------------------------------------------------

def test_concurrency_slots_are_shared_and_expire(stub):
    endpoint = make_endpoint(stub, max_concurrency=2)
    throttle.ensure_slots(endpoint)
    a = throttle.try_acquire_slot(endpoint, "a", 30)
    b = throttle.try_acquire_slot(endpoint, "b", 30)
    assert {a, b} == {0, 1}
    assert throttle.try_acquire_slot(endpoint, "c", 30) is None
    assert throttle.slots_in_use(endpoint) == 2
    throttle.release_slot(endpoint, a, "not-the-holder")
    assert throttle.try_acquire_slot(endpoint, "c", 30) is None
    throttle.release_slot(endpoint, a, "a")
    assert throttle.try_acquire_slot(endpoint, "c", 30) == a
    # b's worker died: once its lease is over, its slot can be taken
    from elicitation.models import EndpointSlot

    EndpointSlot.objects.filter(endpoint=endpoint, index=b).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert throttle.try_acquire_slot(endpoint, "d", 30) == b


def test_requests_per_minute_bucket_paces_requests(stub):
    endpoint = make_endpoint(stub, requests_per_minute=60)
    assert throttle.try_take(endpoint, "requests", 1, 60) == 0  # the bucket starts with one request
    wait = throttle.try_take(endpoint, "requests", 1, 60)
    assert 0.5 < wait <= 1.0  # one per second
    sleeps = []
    throttle.take_rate(endpoint, tokens=10, sleep=sleeps.append)
    assert sleeps and sum(sleeps) > 0.5


def test_tokens_per_minute_bucket(stub):
    endpoint = make_endpoint(stub, tokens_per_minute=6000)  # 100 tokens per second
    assert throttle.try_take(endpoint, "tokens", 500, 6000) == 0  # a large request passes when the bucket is full
    wait = throttle.try_take(endpoint, "tokens", 500, 6000)
    assert 4.0 < wait <= 5.0


def test_estimate_counts_prompt_characters_and_prices(stub, imported_nv):
    items = items_of(imported_nv, 3)
    endpoint = make_endpoint(stub, price_prompt_per_1k="2", price_completion_per_1k="4")
    run = create_run(imported_nv, endpoint, mode="sampled", samples=4, temperature=1.0, items=items, max_tokens=5)
    est = estimate_run(run)
    prompt_tokens = sum(approx_tokens(prompt_content(build_prompt(imported_nv, i, True), "chat")) for i in items) * 4
    assert (est.items, est.answers, est.requests) == (3, 12, 12)
    assert est.prompt_tokens == prompt_tokens and est.completion_tokens == 60
    assert est.cost_usd == (Decimal(prompt_tokens) * 2 + Decimal(60) * 4) / 1000
    # only what is left after some answers
    start_run(run, queue=False)
    ModelResponse.objects.filter(run=run, item=items[0]).update(status="ok")
    assert estimate_run(run, answers_left_only=True).answers == 8


def test_requests_per_minute_limit_paces_real_requests(stub, imported_nv):
    # 120 per minute: a bucket of 2 requests refilled at 2 per second
    run = run_sync(started(imported_nv, make_endpoint(stub, requests_per_minute=120), items_of(imported_nv, 4)))
    assert run.status == Status.COMPLETED
    times = [r.received_at for r in stub.requests]
    assert len(times) == 4
    assert times[3] - times[0] >= 0.95  # requests 3 and 4 each waited about half a second


# --- the Celery task ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, args, items", [("elicit_items", (1, [2, 3]), [2, 3]),
                                               ("elicit_item", (1, 2), [2])])  # an earlier version's message
def test_task_retries_through_the_queue_while_another_worker_holds_a_row(monkeypatch, name, args, items):
    from celery.exceptions import Retry

    from elicitation import item_tasks, tasks

    task, sent, asked = getattr(tasks, name), [], []
    monkeypatch.setattr(item_tasks, "process_items", lambda run_id, item_ids, **kw: asked.append(item_ids) or 4.2)
    monkeypatch.setattr(task, "apply_async", lambda *a, **kw: sent.append((a, kw)))
    monkeypatch.setenv("ELICITATION_QUEUE", "elicit-q")
    task.push_request(id="t1", args=list(args), kwargs={}, called_directly=False, retries=0, delivery_info={})
    try:
        with pytest.raises(Retry):
            task.run(*args)
    finally:
        task.pop_request()
    (sent_args, kwargs), = sent
    assert asked == [items] and sent_args[0] == args and kwargs["countdown"] == 4.2 and kwargs["queue"] == "elicit-q"


@pytest.mark.parametrize("n_items, settings, slots, expected", [
    (200, {}, 8, 8),  # ELICITATION_REQUESTS_PER_TASK: at most 8 requests per task
    (2000, {}, 8, 8),
    (20, {}, 8, 3),  # few items: ceil(20 / 8 slots), so that every slot has work
    (200, {"mode": "sampled", "samples": 3, "temperature": 1.0}, 1, 2),  # 2 items × 3 samples ≤ 8 requests
    (200, {"mode": "sampled", "samples": 50, "temperature": 1.0}, 1, 1),  # an item alone asks more than 8
    (200, {"mode": "full_distribution"}, 1, 1),
])
def test_items_are_queued_in_groups_of_about_eight_requests(stub, imported_nv, monkeypatch,
                                                            django_capture_on_commit_callbacks, n_items, settings,
                                                            slots, expected):
    from elicitation import tasks
    from elicitation.runs import enqueue, items_per_task

    style = "completions" if settings.get("mode") == "full_distribution" else "chat"
    run = create_run(imported_nv, make_endpoint(stub, max_concurrency=slots, api_style=style),
                     items=items_of(imported_nv, 1), **settings)
    assert items_per_task(run, n_items) == expected
    monkeypatch.setenv("ELICITATION_REQUESTS_PER_TASK", "1")  # one item per task, as before groups
    assert items_per_task(run, n_items) == 1
    monkeypatch.delenv("ELICITATION_REQUESTS_PER_TASK")
    sent = []
    monkeypatch.setattr(tasks.elicit_items, "apply_async", lambda args, **kw: sent.append(args))
    ids = list(range(1000, 1000 + n_items))
    with django_capture_on_commit_callbacks(execute=True):
        enqueue(run, ids)
    assert [item for _, group in sent for item in group] == ids  # every item once, in order
    sizes = [len(group) for _, group in sent]
    assert sizes[0] == expected and sizes == sorted(sizes, reverse=True)  # groups shrink towards the run's end
    left = n_items  # none larger than the items left shared among the slots
    for size in sizes:
        assert size <= max(1, -(-left // slots))
        left -= size
    tail = min(n_items, slots) - 1  # the last tasks, one but one per slot: one item each
    assert all(size == 1 for size in sizes[len(sizes) - tail:])
    assert {run_id for run_id, _ in sent} == {run.pk}


def test_a_task_answers_each_of_its_items_once_and_pays_its_own_costs_once(stub, imported_nv):
    """``process_items``: one task's eight items, each asked once; the rows with their run, the demonstrations,
    the prompts and the check whether the run is done are read (and the new prompts stored) once for the group,
    not once per item."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from elicitation.worker import process_items

    stub.default = Reply.answer("I'd say 70")
    items = items_of(imported_nv, 9)
    run = started(imported_nv, make_endpoint(stub), items)
    with CaptureQueriesContext(connection) as group:
        assert process_items(run.pk, [i.pk for i in items[:8]]) is None
    assert len(stub.requests) == 8 and len({r.prompt_text for r in stub.requests}) == 8
    assert ModelResponse.objects.filter(run=run, status="ok").count() == 8
    with CaptureQueriesContext(connection) as single:
        assert process_item(run.pk, items[8].pk) is None
    assert ModelResponse.objects.filter(run=run, status="ok").count() == 9
    run.refresh_from_db()
    assert run.status == Status.COMPLETED
    # per answer: the lease with the request's count, the endpoint's slot taken and given back (limits in the
    # database here), the settlement; per task: the rows, the demonstrations, the prompts looked up and the new
    # ones stored, whether the run is done, its failed answers counted and the run finished
    per_answer, per_task, slot_rows_created = 4, 7, 3
    assert len(single.captured_queries) <= per_answer + per_task
    assert len(group.captured_queries) <= 8 * per_answer + per_task + slot_rows_created, \
        "\n".join(q["sql"][:120] for q in group.captured_queries)


def test_a_task_whose_prompts_cannot_be_stored_together_stores_them_one_by_one(stub, imported_nv, monkeypatch):
    """A failure of the batch (not a lost database) is logged; each row's prompt is then stored alone, and the
    answers are given as usual."""
    from elicitation import worker

    def broken(contents, api_style):
        raise ValueError("cannot store these together")

    monkeypatch.setattr(worker, "stored_or_new", broken)
    stub.default = Reply.answer("I'd say 70")
    items = items_of(imported_nv, 3)
    run = started(imported_nv, make_endpoint(stub), items)
    assert worker.process_items(run.pk, [i.pk for i in items]) is None
    rows = ModelResponse.objects.filter(run=run)
    assert [r.status for r in rows] == ["ok"] * 3 and all(r.prompt_id for r in rows)


def test_a_prompt_another_worker_stored_meanwhile_is_still_the_rows_prompt(stub, imported_nv, monkeypatch):
    """A task's new prompts are stored in the transaction of its first claim, which names each by its hash: a
    prompt another worker stored after the task looked it up (the INSERT skips it) is still the row's prompt."""
    from elicitation import row_sql
    from elicitation.models import StoredPrompt
    from elicitation.worker import process_items

    stub.default = Reply.answer("I'd say 70")
    items = items_of(imported_nv, 3)
    first = started(imported_nv, make_endpoint(stub), items)
    assert process_items(first.pk, [i.pk for i in items]) is None
    stored = dict(ModelResponse.objects.filter(run=first).values_list("item_id", "prompt_id"))
    assert all(r.prompt.sha256 == r.prompt_hash for r in ModelResponse.objects.filter(run=first))

    monkeypatch.setattr(row_sql, "stored_prompts", lambda shas: {})  # the lookup finds none of them
    second = started(imported_nv, make_endpoint(stub, name="other"), items)
    assert process_items(second.pk, [i.pk for i in items]) is None
    rows = ModelResponse.objects.filter(run=second)
    assert [r.status for r in rows] == ["ok"] * 3
    assert dict(rows.values_list("item_id", "prompt_id")) == stored and StoredPrompt.objects.count() == 3


def test_task_in_eager_mode_waits_instead_of_recursing(monkeypatch):
    from elicitation import item_tasks, tasks

    calls = iter([0.01, 0.01, None])
    monkeypatch.setattr(item_tasks, "process_items", lambda run_id, item_ids, **kw: next(calls))
    result = tasks.elicit_items.apply(args=(1, [2]))
    assert result.state == "SUCCESS"
    assert next(calls, "used up") == "used up"


def test_a_prompt_is_stored_once_also_when_two_workers_race(monkeypatch):
    """store_prompt(s): the first call inserts the row, a later one finds it; a worker whose look-up came before
    another's insert (the race, simulated by a look-up that finds nothing) gets that row, not a second one; a
    task's prompts, some stored and some new, in one look-up and one insert."""
    from elicitation import row_sql
    from elicitation.models import StoredPrompt
    from elicitation.prompts import prompt_hash, store_prompt, store_prompts

    content = [{"role": "user", "content": "How likely is 'probably'?"}]
    first = store_prompt(content, "chat")
    assert first.pk and StoredPrompt.objects.get(pk=first.pk).content == content
    again = store_prompt(content, "chat")
    assert again.pk == first.pk and again.content == content and again.sha256 == first.sha256
    real, look_ups = row_sql.stored_prompts, []

    def late(shas):  # the first look-up finds nothing: the other worker had not inserted it yet
        look_ups.append(list(shas))
        return {} if len(look_ups) == 1 else real(shas)

    monkeypatch.setattr(row_sql, "stored_prompts", late)
    assert store_prompt(content, "chat").pk == first.pk and len(look_ups) == 2
    assert StoredPrompt.objects.count() == 1
    monkeypatch.setattr(row_sql, "stored_prompts", real)
    text = store_prompt("How likely is 'probably'?", "completions")
    assert text.pk != first.pk and StoredPrompt.objects.get(pk=text.pk).content == "How likely is 'probably'?"

    contents = {prompt_hash(c): c for c in (content, [{"role": "user", "content": "And 'doubtful'?"}],
                                           [{"role": "user", "content": "And 'almost certain'?"}])}
    with CaptureQueriesContext(connection) as queries:
        stored = store_prompts(contents, "chat")
    assert len(queries.captured_queries) == 2  # one look-up, one insert of the two new ones
    assert stored[first.sha256].pk == first.pk and StoredPrompt.objects.count() == 4
    assert {sha: StoredPrompt.objects.get(pk=p.pk).content for sha, p in stored.items()} == contents
    assert store_prompts(contents, "chat") == stored  # all stored now: found, none added
    assert StoredPrompt.objects.count() == 4


def test_the_workers_sql_reads_what_the_orm_reads(imported_nv, stub):
    """elicitation/row_sql.py: an item's pending rows come with the same run, endpoint, study and item the ORM
    gives, field by field, and the demonstrations are the study's own, in order."""
    from django.forms.models import model_to_dict

    from elicitation import row_sql
    from elicitation.models import ElicitationRun, ModelEndpoint

    endpoint = make_endpoint(stub)
    item, other, unasked = imported_nv.main_items().order_by("id")[:3]
    run = create_run(imported_nv, endpoint, mode="sampled", samples=3, temperature=1.0, items=[item, other, unasked])
    start_run(run, queue=False)
    both = row_sql.pending_rows(run.pk, [other.pk, item.pk])  # a task's items: by item, then sample
    assert [(r.item_id, r.sample_index) for r in both] == [(i.pk, k) for i in (item, other) for k in range(3)]
    assert both[0].item is both[2].item and both[3].item is not both[0].item and both[3].item.pk == other.pk
    assert model_to_dict(both[4].item) == model_to_dict(other) and both[0].run is both[5].run
    rows = row_sql.pending_rows(run.pk, [item.pk])
    assert [r.sample_index for r in rows] == [0, 1, 2]
    orm = ModelResponse.objects.get(run=run, item=item, sample_index=1)
    assert model_to_dict(rows[1]) == model_to_dict(orm) and rows[1].pk == orm.pk
    for got, want in ((rows[0].run, ElicitationRun.objects.get(pk=run.pk)), (rows[0].item, item),
                      (rows[0].run.endpoint, ModelEndpoint.objects.get(pk=endpoint.pk)),
                      (rows[0].run.study, imported_nv)):
        assert model_to_dict(got) == model_to_dict(want)
    assert rows[0].run is rows[2].run and rows[0].item is rows[2].item
    assert [d.pk for d in row_sql.demonstrations(imported_nv)] == [d.pk for d in imported_nv.demonstrations()]
    assert row_sql.demonstrations(imported_nv) and row_sql.has_pending(run.pk)
    ModelResponse.objects.filter(run=run).update(status="ok")
    assert row_sql.pending_rows(run.pk, [item.pk]) == [] and not row_sql.has_pending(run.pk)


def test_slot_rows_are_created_when_needed_and_again_if_removed(stub):
    """The database limits create an endpoint's slot rows the first time no slot is free, and again (at most
    once a minute per process) if they were removed meanwhile, instead of waiting for ever."""
    from elicitation.models import EndpointSlot

    store = throttle.DatabaseLimits()
    endpoint = make_endpoint(stub, max_concurrency=2)
    assert store.try_acquire_slot(endpoint, "a", 30) is not None and EndpointSlot.objects.filter(endpoint=endpoint).count() == 2
    EndpointSlot.objects.filter(endpoint=endpoint).delete()
    assert store.try_acquire_slot(endpoint, "b", 30) is None  # within the minute: not recreated yet
    store._ensured = {key: at - 61 for key, at in store._ensured.items()}  # a minute later
    assert store.try_acquire_slot(endpoint, "b", 30) is not None


# --- queued runs ----------------------------------------------------------------------------------

def queued(study, endpoint, items) -> ElicitationRun:
    """A started run whose tasks wait in the queue (none of its answers held by a worker)."""
    run = started(study, endpoint, items)
    run.refresh_from_db()
    return run


def test_a_run_waiting_behind_others_says_so_instead_of_looking_stuck(stub, imported_nv):
    endpoint = make_endpoint(stub)
    first, second, third = (queued(imported_nv, endpoint, items_of(imported_nv, 2)) for _ in range(3))

    p = progress(first)  # the run being answered is not queued behind anything
    assert (p["status_display"], p["queued_behind"], p["queue_position"]) == ("Running", None, None)
    p = progress(third)
    assert (p["queued_behind"], p["queue_position"]) == (second.pk, 3)
    assert p["status_display"] == f"Queued behind run {second.pk} (position 3 in the queue)"
    assert progress(second)["queued_behind"] == first.pk and progress(second)["queue_position"] == 2

    run_sync(first)
    second.refresh_from_db()
    third.refresh_from_db()
    assert progress(second)["status_display"] == "Running" and progress(third)["queue_position"] == 2
    # a worker holding one of its answers: it is being answered, not waiting
    ModelResponse.objects.filter(run=third).update(lease_until=timezone.now() + timedelta(seconds=60))
    assert progress(third)["queued_behind"] is None


def test_the_command_line_and_the_run_page_show_the_queue(stub, imported_nv, admin_client):
    from django.core.management import call_command
    import io

    endpoint = make_endpoint(stub)
    first, second = (queued(imported_nv, endpoint, items_of(imported_nv, 1)) for _ in range(2))
    out = io.StringIO()
    call_command("elicit", "--status", str(second.pk), stdout=out)
    assert f"[Queued behind run {first.pk} (position 2 in the queue)]" in out.getvalue()
    page = admin_client.get(f"/admin/elicitation/elicitationrun/{second.pk}/monitor/")
    assert f"Queued behind run {first.pk}" in page.content.decode()


def test_the_command_line_says_how_many_answers_could_not_be_read(stub, imported_nv):
    """A run whose answers are all kept as unparseable reads "Completed, 0 failed" (the walk of issue 23: an
    interval study asked with a stub answering "70"); the status says how many could not be read."""
    from django.core.management import call_command
    import io

    stub.queue(Reply.answer("no idea"), Reply.answer("perhaps"))
    stub.default = Reply.answer("80")
    run = create_run(imported_nv, make_endpoint(stub), items=items_of(imported_nv, 3))
    start_run(run, queue=False)
    run_sync(run)
    out = io.StringIO()
    call_command("elicit", "--status", str(run.pk), stdout=out)
    assert "2 of the 3 answers could not be read as an answer" in out.getvalue(), out.getvalue()
    readable = create_run(imported_nv, make_endpoint(stub, name="stub2"), items=items_of(imported_nv, 3))
    start_run(readable, queue=False)
    run_sync(readable)
    out = io.StringIO()
    call_command("elicit", "--status", str(readable.pk), stdout=out)
    assert "could not be read" not in out.getvalue()
