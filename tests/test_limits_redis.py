"""Per-endpoint limits kept in Redis (elicitation/limits_redis.py): the same contract as the database's slots and
buckets (tests/test_elicitation_runs.py), shared by separate clients, atomic under contention, and a Redis that
cannot be reached leaves the answer pending for a retry instead of recording a failure."""
from __future__ import annotations

import os
import threading
import time

import pytest

from elicitation import throttle
from elicitation.limits_redis import RedisLimits
from elicitation.models import EndpointSlot, ModelResponse, RateBucket
from elicitation.runs import create_run, run_sync, start_run
from elicitation.worker import TRANSIENT_ERRORS, process_item
from stub_openai import make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db
URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")


@pytest.fixture
def redis_url():
    import redis

    try:
        redis.Redis.from_url(URL).ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.skip(f"no Redis at TEST_REDIS_URL={URL}: {exc}")
    return URL


@pytest.fixture
def limits_in_redis(redis_url, settings):
    settings.ELICITATION_LIMITS_URL = redis_url
    return throttle.limits()


def test_slots_are_shared_by_separate_clients_and_expire(stub, redis_url):
    endpoint = make_endpoint(stub, max_concurrency=2)
    one, two = RedisLimits(redis_url), RedisLimits(redis_url)  # two worker processes
    try:
        a = one.try_acquire_slot(endpoint, "a", 30)
        b = two.try_acquire_slot(endpoint, "b", 0.3)
        assert {a, b} == {0, 1}
        assert one.try_acquire_slot(endpoint, "c", 30) is None
        assert two.holders(endpoint) == one.holders(endpoint) == {"a", "b"}
        two.release_slot(endpoint, a, "not-the-holder")
        assert one.try_acquire_slot(endpoint, "c", 30) is None
        two.release_slot(endpoint, a, "a")
        assert one.try_acquire_slot(endpoint, "c", 30) == a
        time.sleep(0.4)  # b's worker died: once its lease is over, its slot can be taken
        assert two.holders(endpoint) == {"c"}
        assert two.try_acquire_slot(endpoint, "d", 30) == b
        one.renew_slot(endpoint, b, "c", 30)  # not c's slot: nothing changes
        assert one.holders(endpoint) == {"c", "d"}
        one.release_all("d")
        assert one.holders(endpoint) == {"c"}
    finally:
        one.forget(endpoint)
    assert not EndpointSlot.objects.filter(endpoint=endpoint).exists()  # the database was not used


def test_a_new_endpoint_with_the_same_id_inherits_no_leases(stub, redis_url):
    store = RedisLimits(redis_url)
    endpoint = make_endpoint(stub, max_concurrency=1)
    assert store.try_acquire_slot(endpoint, "old", 30) == 0
    try:
        endpoint.created_at = endpoint.created_at.replace(microsecond=(endpoint.created_at.microsecond + 1) % 10**6)
        assert store.try_acquire_slot(endpoint, "new", 30) == 0
        store.forget(endpoint)
    finally:
        endpoint.refresh_from_db()
        store.forget(endpoint)


def test_slots_hold_under_contention(stub, redis_url):
    """12 threads, each with its own client, take and give back 4 slots 30 times: never more than 4 held."""
    endpoint = make_endpoint(stub, max_concurrency=4)
    held, peak, lock, errors = set(), [0], threading.Lock(), []

    def worker(n: int) -> None:
        store = RedisLimits(redis_url)
        try:
            for k in range(30):
                owner = f"w{n}-{k}"
                index = None
                while index is None:
                    index = store.try_acquire_slot(endpoint, owner, 30)
                with lock:
                    assert index not in held, f"slot {index} handed out twice"
                    held.add(index)
                    peak[0] = max(peak[0], len(held))
                time.sleep(0.001)
                with lock:
                    held.discard(index)
                store.release_slot(endpoint, index, owner)
        except AssertionError as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    RedisLimits(redis_url).forget(endpoint)
    assert not errors and peak[0] == 4


def test_rate_buckets_pace_requests_and_tokens(stub, redis_url):
    endpoint = make_endpoint(stub, requests_per_minute=60, tokens_per_minute=6000)
    store = RedisLimits(redis_url)
    try:
        assert store.try_take(endpoint, "requests", 1, 60) == 0  # the bucket starts with one request
        assert 0.5 < store.try_take(endpoint, "requests", 1, 60) <= 1.0  # one per second
        assert store.try_take(endpoint, "tokens", 500, 6000) == 0  # a large request passes when the bucket is full
        assert 4.0 < store.try_take(endpoint, "tokens", 500, 6000) <= 5.0  # 100 tokens per second
    finally:
        store.forget(endpoint)
    assert not RateBucket.objects.filter(endpoint=endpoint).exists()


def test_a_run_with_limits_in_redis_uses_no_limit_rows(stub, imported_nv, limits_in_redis):
    endpoint = make_endpoint(stub, max_concurrency=2, requests_per_minute=6000)
    run = create_run(imported_nv, endpoint, items=list(imported_nv.main_items().order_by("id")[:3]))
    start_run(run, queue=False)
    run = run_sync(run)
    try:
        assert run.status == "completed" and len(stub.requests) == 3
        assert not EndpointSlot.objects.exists() and not RateBucket.objects.exists()
        assert limits_in_redis.holders(endpoint) == set()  # every slot given back
    finally:
        limits_in_redis.forget(endpoint)


def test_redis_out_of_reach_leaves_the_answer_pending_for_a_retry(stub, imported_nv, settings):
    settings.ELICITATION_LIMITS_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    endpoint = make_endpoint(stub)
    run = create_run(imported_nv, endpoint, items=list(imported_nv.main_items().order_by("id")[:1]))
    start_run(run, queue=False)
    with pytest.raises(TRANSIENT_ERRORS):
        process_item(run.pk, run.responses.get().item_id)
    row = ModelResponse.objects.get(run=run)
    assert row.status == "pending" and not stub.requests  # nothing sent, nothing recorded as failed


def test_a_thread_waiting_for_a_slot_is_woken_when_another_thread_of_the_process_releases_one(
        stub, limits_in_redis, settings):
    """A thread-pool worker with more threads than the endpoint's slots: a waiting thread takes a slot as soon as
    a thread of the same process gives one back, not at its next poll (here 60 s: the threads would still be
    waiting when the join gives up)."""
    settings.ELICITATION_POLL_SECONDS = 60
    endpoint = make_endpoint(stub, max_concurrency=1)
    done: list[int] = []

    def ask(n: int) -> None:
        with throttle.endpoint_slot(endpoint, f"thread-{n}", 30):
            time.sleep(0.05)
        done.append(n)

    threads = [threading.Thread(target=ask, args=(n,)) for n in range(4)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=20)
        assert sorted(done) == [0, 1, 2, 3]
    finally:
        limits_in_redis.forget(endpoint)


def test_the_run_page_works_while_the_limits_redis_is_out_of_reach(stub, imported_nv, settings):
    """progress() (run page, API) with the limits in an unreachable Redis: every figure but the requests in
    flight, which reads 0, instead of an error page."""
    from datetime import timedelta

    from django.utils import timezone

    from elicitation.runs import progress

    endpoint = make_endpoint(stub)
    run = create_run(imported_nv, endpoint, items=list(imported_nv.main_items().order_by("id")[:2]))
    start_run(run, queue=False)
    ModelResponse.objects.filter(run=run).update(lease_owner="w1", lease_until=timezone.now() + timedelta(seconds=60))
    settings.ELICITATION_LIMITS_URL = "redis://127.0.0.1:9/0"  # nothing listens there
    figures = progress(run)
    assert figures["total"] == 2 and figures["pending"] == 2 and figures["working"] == 2 and figures["in_flight"] == 0
