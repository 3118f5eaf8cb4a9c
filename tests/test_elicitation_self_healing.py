"""Runs heal themselves (issue 12, point 4): the sweep re-queues stranded work, a task that loses the
database is retried instead of acknowledged and lost, and a request whose answer was lost still counts in
tokens and cost. In-process here (SQLite or DATABASE_URL); the broker tests need a real Redis / RabbitMQ.
The restarts with real processes are in test_elicitation_restarts.py.
"""
from __future__ import annotations

import os
import time
import uuid
from datetime import timedelta
from decimal import Decimal

import pytest
from django.db import OperationalError
from django.utils import timezone

from elicitation import item_tasks, tasks, worker
from elicitation.estimate import cost_of
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.prompts import approx_tokens, build_prompt, prompt_content
from elicitation.runs import cancel_run, create_run, start_run
from elicitation.sweep import queue_backlog, sweep
from elicitation.worker import process_item
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

Status = ElicitationRun.Status


def started(study, endpoint, n, **settings):
    run = create_run(study, endpoint, items=list(study.main_items().order_by("id")[:n]), **settings)
    start_run(run, queue=False)
    return run


@pytest.fixture
def queued(monkeypatch):
    """The (run, item) of each item queued (the tasks sent to the broker, each with a few items), instead of
    sending them."""
    sent: list[tuple[int, int]] = []
    monkeypatch.setattr(tasks.elicit_items, "apply_async",
                        lambda args, **kw: sent.extend((args[0], item_id) for item_id in args[1]))
    return sent


@pytest.mark.django_db
def test_a_request_whose_answer_was_lost_still_counts_in_tokens_and_cost(stub, imported_nv, monkeypatch,
                                                                         queued, django_capture_on_commit_callbacks):
    stub.default = Reply.answer("70", prompt_tokens=100, completion_tokens=2)
    endpoint = make_endpoint(stub, price_prompt_per_1k="1", price_completion_per_1k="2")
    run = started(imported_nv, endpoint, 1, max_tokens=8)
    item = run.target_items().get()
    estimate = approx_tokens(prompt_content(build_prompt(imported_nv, item, True), "chat"))

    # the endpoint answers, then the database is gone when the answer is written (committed at the task's end)
    real_commit = worker.RunContext.commit

    def gone(ctx, *statements):
        if ctx.unsettled and not statements:  # the task's last write: its answer
            raise OperationalError("gone")
        return real_commit(ctx, *statements)

    monkeypatch.setattr(worker.RunContext, "commit", gone)
    with pytest.raises(OperationalError):
        process_item(run.pk, item.pk)
    row = ModelResponse.objects.get(run=run)
    assert len(stub.requests) == 1 and row.status == "pending"
    assert (row.requests, row.prompt_tokens, row.completion_tokens) == (1, estimate, 8)  # counted, estimated
    assert row.cost_usd == cost_of(endpoint, estimate, 8) > 0

    # its lease runs out; the sweep queues the item again; the next worker answers it
    monkeypatch.setattr(worker.RunContext, "commit", real_commit)
    ModelResponse.objects.filter(pk=row.pk).update(lease_until=timezone.now() - timedelta(seconds=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep(backlog=3) == {run.pk: 1}
    assert queued == [(run.pk, item.pk)]
    assert process_item(run.pk, item.pk) is None
    row.refresh_from_db()
    assert (row.status, row.value, row.requests, row.attempts) == ("ok", 70, 2, 1)
    # the lost request's estimate stays; the answered one counts what the endpoint reported
    assert (row.prompt_tokens, row.completion_tokens) == (estimate + 100, 8 + 2)
    assert row.cost_usd == cost_of(endpoint, estimate + 100, 10)
    assert row.detail.get("requests_without_reply") is None


@pytest.mark.django_db
def test_answered_and_refused_requests_count_exactly(stub, imported_nv):
    """Estimates are provisional: a 500 (refused) counts no tokens, the answer counts what was reported."""
    stub.queue(Reply.error(500), Reply.answer("40", prompt_tokens=321, completion_tokens=3))
    endpoint = make_endpoint(stub, price_prompt_per_1k="1", price_completion_per_1k="1")
    run = started(imported_nv, endpoint, 1)
    process_item(run.pk, run.target_items().get().pk)
    row = ModelResponse.objects.get(run=run)
    assert (row.requests, row.attempts, row.prompt_tokens, row.completion_tokens) == (2, 2, 321, 3)
    assert row.cost_usd == Decimal("0.324")


@pytest.mark.django_db
def test_a_request_whose_connection_never_opened_is_neither_counted_nor_billed(stub, imported_nv, monkeypatch):
    """A refused or timed-out connect never reached the endpoint: it is not a request asked (the stub and the
    row agree), and its estimate is taken back out."""
    from elicitation.deadline import GuardedBackend, httpcore

    real_connect, failed = GuardedBackend.connect_tcp, []

    def refused_once(self, *args, **kwargs):
        if not failed:
            failed.append(1)
            raise httpcore.ConnectTimeout("timed out")
        return real_connect(self, *args, **kwargs)

    monkeypatch.setattr(GuardedBackend, "connect_tcp", refused_once)
    stub.queue(Reply.answer("40", prompt_tokens=321, completion_tokens=3))
    endpoint = make_endpoint(stub, price_prompt_per_1k="1", price_completion_per_1k="1")
    run = started(imported_nv, endpoint, 1)
    process_item(run.pk, run.target_items().get().pk)
    row = ModelResponse.objects.get(run=run)
    assert failed and len(stub.requests) == 1
    assert (row.status, row.requests, row.attempts, row.prompt_tokens, row.completion_tokens) == ("ok", 1, 2, 321, 3)
    assert row.cost_usd == Decimal("0.324")
    assert "requests_without_reply" not in (row.detail or {})


@pytest.mark.django_db
def test_the_sweep_requeues_expired_leases_once_and_idle_items_when_the_queue_is_empty(
        stub, imported_nv, queued, django_capture_on_commit_callbacks):
    run = started(imported_nv, make_endpoint(stub), 4)
    expired, idle, held, answered = ModelResponse.objects.filter(run=run).order_by("item_id")
    now = timezone.now()
    ModelResponse.objects.filter(pk=expired.pk).update(lease_owner="dead", lease_until=now - timedelta(seconds=5))
    ModelResponse.objects.filter(pk=held.pk).update(lease_owner="alive", lease_until=now + timedelta(seconds=60))
    ModelResponse.objects.filter(pk=answered.pk).update(status="ok", value=50)

    with django_capture_on_commit_callbacks(execute=True):
        # tasks still wait in the queue: only the expired lease's item, and its lease is cleared
        assert sweep(backlog=7, min_age=0) == {run.pk: 1}
        assert sweep(backlog=7, min_age=0) == {}  # not again at the next sweep
        # a broker that cannot count: the same
        assert sweep(backlog=None, ask_broker=False, min_age=0) == {}
        # a run started a moment ago is left to the tasks being queued for it
        assert sweep(backlog=0, min_age=60) == {}
        # the queue is empty: every item with an unleased pending row, never the one a live worker holds
        assert sweep(backlog=0, min_age=0) == {run.pk: 2}
    assert queued == [(run.pk, expired.item_id), (run.pk, expired.item_id), (run.pk, idle.item_id)]
    assert ModelResponse.objects.get(pk=expired.pk).lease_owner == ""
    assert ModelResponse.objects.get(pk=held.pk).lease_owner == "alive"

    # a cancelled run is left alone
    cancel_run(run)
    with django_capture_on_commit_callbacks(execute=True):
        assert sweep(backlog=0, min_age=0) == {}


@pytest.mark.django_db
def test_the_sweep_finishes_a_running_run_with_nothing_pending(stub, imported_nv, queued):
    run = started(imported_nv, make_endpoint(stub), 2)
    ModelResponse.objects.filter(run=run).update(status="ok", value=10)  # its last task died before finishing it
    assert sweep(backlog=0, min_age=0) == {}
    run.refresh_from_db()
    assert run.status == Status.COMPLETED and queued == []


@pytest.mark.django_db
def test_a_task_that_loses_the_database_gives_its_rows_back_and_is_retried(stub, imported_nv, monkeypatch):
    from celery.exceptions import Retry

    run = started(imported_nv, make_endpoint(stub), 1)
    row = ModelResponse.objects.get(run=run)

    def lose_the_database(run_id, item_ids, owner):
        ModelResponse.objects.filter(pk=row.pk).update(lease_owner=owner,
                                                       lease_until=timezone.now() + timedelta(seconds=60))
        raise OperationalError("server closed the connection unexpectedly")

    sent = []
    monkeypatch.setattr(item_tasks, "process_items", lose_the_database)
    monkeypatch.setattr(tasks.elicit_items, "apply_async", lambda *a, **kw: sent.append((a, kw)))
    tasks.elicit_items.push_request(id="t1", args=[run.pk, [row.item_id]], kwargs={}, called_directly=False,
                                    retries=2, delivery_info={})
    try:
        with pytest.raises(Retry):
            tasks.elicit_items.run(run.pk, [row.item_id])
    finally:
        tasks.elicit_items.pop_request()
    (args, kwargs), = sent
    assert args[0] == (run.pk, [row.item_id]) and 3 <= kwargs["countdown"] <= 5  # 2^2 s, with jitter
    row.refresh_from_db()
    assert row.status == "pending" and row.lease_owner == "" and row.lease_until is None


# --- the broker's count of waiting messages ------------------------------------------------------------

def _backlog_on(url: str) -> None:
    import kombu

    with kombu.Connection(url, connect_timeout=3) as conn:
        try:
            conn.ensure_connection(max_retries=1)
        except Exception as exc:  # noqa: BLE001 - no broker here
            pytest.skip(f"no broker at {url}: {exc}")
        name = f"sweep-test-{uuid.uuid4().hex[:8]}"
        assert queue_backlog(name, conn) == 0  # no such queue
        queue = conn.SimpleQueue(name)
        try:
            for i in range(3):
                queue.put({"n": i})
            for _ in range(50):  # RabbitMQ counts a message published on another channel a moment later
                if queue_backlog(name, conn) == 3:
                    break
                time.sleep(0.1)
            assert queue_backlog(name, conn) == 3
            queue.clear()
            assert queue_backlog(name, conn) == 0  # emptied (e.g. a broker restarted without persistence)
        finally:
            queue.close()
            with conn.channel() as channel:  # leave nothing behind on the shared broker
                channel.queue_delete(name)


@pytest.mark.broker
def test_queue_backlog_counts_the_messages_waiting_in_redis():
    _backlog_on(os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15"))


@pytest.mark.broker
def test_queue_backlog_counts_the_messages_waiting_in_rabbitmq():
    _backlog_on(os.environ.get("TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//"))


def test_queue_backlog_is_unknown_when_the_broker_is_down():
    import kombu

    from private_services import free_port

    with kombu.Connection(f"redis://127.0.0.1:{free_port()}/0", connect_timeout=1,
                          transport_options={"max_retries": 0}) as conn:
        assert queue_backlog("celery", conn) is None
