"""A trickling endpoint against a real Celery worker (issue 12, point 2): headers at once, then the body one
byte every half second. The worker's two processes must not hang in it: the endpoint's timeout cuts each
request, the run page counts the requests in flight all along, ``elicit --cancel`` frees the processes within
seconds, and another run then gets answered by the same worker.

Subprocesses (manage.py, celery worker) on a scratch database, as in test_elicitation_worker.py.
"""
from __future__ import annotations

import json
import time
import uuid

from stub_openai import Reply
from test_elicitation_worker import Worker, manage, platform, query, wait_for  # noqa: F401 (platform: a fixture)

TRICKLE_EVERY = 0.5  # a ~300-byte body takes 2.5 minutes

ENDPOINTS = """
from elicitation.models import ModelEndpoint
common = dict(base_url="{base_url}", model="trickle-model", max_concurrency=2, retry_backoff_seconds=0.01,
              retry_backoff_max_seconds=0.05)
ModelEndpoint.objects.update_or_create(name="trickle-short", defaults=dict(common, timeout_seconds=2, max_retries=100))
ModelEndpoint.objects.update_or_create(name="trickle-long", defaults=dict(common, timeout_seconds=300, max_retries=0))
print("null")
"""

PROGRESS = """
import json, time
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.runs import progress
samples = []
for _ in range({samples}):
    run = ElicitationRun.objects.get(pk={run})
    p = progress(run)
    rows = list(ModelResponse.objects.filter(run=run).values("status", "requests", "attempts", "lease_owner"))
    samples.append({{"in_flight": p["in_flight"], "working": p["working"], "status": run.status, "rows": rows}})
    time.sleep(1)
print(json.dumps(samples if {samples} > 1 else samples[0]))
"""


def start(env, endpoint: str, keys: list[str]) -> int:
    out = manage(env, "elicit", "kill", "--endpoint", endpoint, "--items", ",".join(keys),
                 "--no-check")  # a hung endpoint would fail its pre-flight check: the point is to run on it
    return int(out.split("created run ")[1].split(":")[0])


def test_a_trickling_endpoint_neither_hangs_the_worker_nor_hides_its_requests(platform):  # noqa: F811
    stub = platform["stub"]
    stub.reset()
    stub.responder = lambda r: (Reply.trickling("50", every=TRICKLE_EVERY) if r.body.get("model") == "trickle-model"
                                else Reply.answer("40"))
    env = {**platform["env"], "ELICITATION_QUEUE": f"hung-{uuid.uuid4().hex[:6]}"}
    query(env, ENDPOINTS.format(base_url=stub.base_url))
    keys = platform["keys"]
    log = platform["var"] / "worker-hung.log"
    worker = Worker(env, "hung", log)
    try:
        wait_for(lambda: "ready." in log.read_text(), 90, "the worker to start")  # it declares the queue
        # 1. a 2 s timeout bounds each whole request; the run page shows both requests in flight throughout,
        #    also after the rows' first leases (timeout + grace = 4 s) would have run out
        short = start(env, "trickle-short", keys[:2])
        wait_for(lambda: stub.in_flight == 2, 90, "both worker processes to be in a request")
        samples = query(env, PROGRESS.format(run=short, samples=8))  # one a second
        assert all(s["working"] == 2 for s in samples), samples  # both rows held throughout
        # Both requests are counted throughout. Between a cut request and its retry a worker truly holds no
        # slot for a moment (backoff, claim, a new connection), and on a loaded machine both workers can be in
        # that gap at once, so a single sample may see fewer; a request the page lost would stay lost.
        assert not any(a["in_flight"] == 0 and b["in_flight"] == 0 for a, b in zip(samples, samples[1:])), samples
        assert sum(s["in_flight"] >= 1 for s in samples) >= len(samples) - 2, samples
        assert any(s["in_flight"] == 2 for s in samples[4:]), samples  # also after the first leases ran out
        manage(env, "elicit", "--cancel", str(short))
        wait_for(lambda: stub.in_flight == 0, 15, "the short run's requests to end")
        cut = [r.abandoned_at - r.received_at for r in stub.requests if r.abandoned_at is not None]
        assert len(cut) >= 4 and max(cut) < 2 + 3 * TRICKLE_EVERY + 1, cut  # each one cut at about 2 s
        assert not any(r.finished_at for r in stub.requests)

        # 2. a 300 s timeout: the requests stay in flight until the run is cancelled, then end within seconds
        stub.requests.clear()
        long = start(env, "trickle-long", keys[2:4])
        wait_for(lambda: stub.in_flight == 2, 90, "both worker processes to be in a request")
        assert query(env, PROGRESS.format(run=long, samples=1))["in_flight"] == 2
        manage(env, "elicit", "--cancel", str(long))
        cancelled_at = time.monotonic()
        wait_for(lambda: stub.in_flight == 0, 10, "the cancelled run's requests in flight to be abandoned")
        assert time.monotonic() - cancelled_at < 10
        state = query(env, PROGRESS.format(run=long, samples=1))
        assert state["status"] == "cancelled" and state["in_flight"] == 0
        # the rows are given back untouched, their request counted
        assert [(r["status"], r["requests"], r["lease_owner"]) for r in state["rows"]] == [("pending", 1, "")] * 2
        assert len(stub.requests) == 2

        # 3. the same worker is free for another run on a healthy endpoint
        out = manage(env, "elicit", "kill", "--endpoint", "stub", "--items", ",".join(keys[4:6]), "--wait",
                     "--no-check", timeout=120)
        assert "[Completed]" in out
    finally:
        worker.stop()
    print(json.dumps({"samples": [(s["working"], s["in_flight"]) for s in samples]}))
