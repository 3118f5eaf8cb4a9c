"""An endpoint that sends its headers and then trickles the body one byte at a time (issue 12, point 2).

httpx's read timeout is per chunk, so such an endpoint held a worker for as long as it trickled. Now the
endpoint's timeout bounds the whole request, a cancel reaches the request in flight, and the run page counts
the requests actually in flight. In-process tests here; the real-worker test is in
test_elicitation_hung_worker.py.
"""
from __future__ import annotations

import time

import pytest

from elicitation.client import EndpointClient, Stopped
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


def started(study, endpoint, n=1):
    run = create_run(study, endpoint, items=list(study.main_items().order_by("id")[:n]))
    start_run(run, queue=False)
    return run


def test_the_timeout_bounds_the_whole_request_of_a_trickling_endpoint(stub, imported_nv):
    # a byte every 0.2 s never trips a 1 s read timeout: the ~300-byte body would take a minute
    stub.default = Reply.trickling("50", every=0.2)
    endpoint = make_endpoint(stub, timeout_seconds=1.0, max_retries=1)
    began = time.monotonic()
    run = run_sync(started(imported_nv, endpoint))
    took = time.monotonic() - began

    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and row.error.startswith("timeout") and row.attempts == 2
    assert len(stub.requests) == 2 and all(r.finished_at is None for r in stub.requests)
    assert took < 2 * 1.0 + 3  # two attempts of one second each, plus the platform's own work
    assert run.status == ElicitationRun.Status.FAILED


def test_a_slow_but_whole_answer_within_the_timeout_is_kept(stub, imported_nv):
    stub.default = Reply.trickling("65", every=0.002)  # the whole body in about half a second
    run = run_sync(started(imported_nv, make_endpoint(stub, timeout_seconds=5.0)))
    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.value, row.attempts) == ("ok", 65, 1)


def test_a_stop_check_abandons_the_request_in_flight(stub, imported_nv):
    """The guard asks ``should_stop`` while the body trickles, and its exception ends the request at once."""
    stub.default = Reply.trickling("50", every=0.2)
    client = EndpointClient(make_endpoint(stub, timeout_seconds=60.0))
    client.guard.check_every = 0.2
    began = time.monotonic()

    def should_stop() -> None:
        if time.monotonic() - began > 1.0:
            raise Stopped("run is cancelled")

    client.guard.should_stop = should_stop
    with pytest.raises(Stopped):
        client.openai.chat.completions.create(model="stub-model", messages=[{"role": "user", "content": "hi"}])
    assert time.monotonic() - began < 3
    for _ in range(50):  # the connection was closed: the stub's next byte finds nobody
        if stub.in_flight == 0:
            break
        time.sleep(0.1)
    assert stub.in_flight == 0 and stub.requests[0].abandoned_at is not None
    client.close()
