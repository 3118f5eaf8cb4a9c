"""Many requests in flight per worker process: Celery's thread pool (``celery worker -P threads -c N``) runs
N elicitation tasks at once in one process (issue 10, point 1). The guarantees hold there too: the endpoint's
concurrency limit, one answer per (item, sample), and a SIGKILLed process's work redone once — with beat's
sweep, without Resume. Subprocesses on a scratch database, as in test_elicitation_worker.py.
"""
from __future__ import annotations

import json
import subprocess
import sys

from stub_openai import Reply
from test_elicitation_restarts import Beat, start_run, wait_until_finished
from test_elicitation_worker import ROOT, Worker, platform, wait_for  # noqa: F401 (platform: a fixture)

ENDPOINT = """
from elicitation.models import ModelEndpoint
ModelEndpoint.objects.filter(name="stub").update(max_concurrency=6)
print("null")
"""


class ThreadsWorker(Worker):
    def __init__(self, env, name, log):  # noqa: D107 - one process, 8 threads
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", env["ELICITATION_QUEUE"], "-c", "8",
             "-P", "threads", "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-l", "INFO"], cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)


def test_one_threaded_worker_process_keeps_many_requests_in_flight_and_loses_nothing_when_killed(platform, tmp_path):  # noqa: F811
    from test_elicitation_worker import query

    stub = platform["stub"]
    stub.reset()
    stub.default = Reply.answer("30", delay=0.5)
    env = {**platform["env"], "ELICITATION_QUEUE": "threads", "ELICITATION_SWEEP_SECONDS": "2",
           "ELICITATION_SWEEP_MIN_AGE_SECONDS": "3"}
    query(env, ENDPOINT)
    keys = platform["keys"][:24]
    log = tmp_path / "threads-1.log"
    workers = [ThreadsWorker(env, "threads-1", log)]
    beat = Beat(env, tmp_path)
    try:
        wait_for(lambda: "ready." in log.read_text(), 90, "the worker to start")
        run = start_run(env, keys)
        wait_for(lambda: sum(r.finished_at is not None for r in stub.requests) >= 8
                 and sum(r.finished_at is None for r in stub.requests) >= 3, 90, "several requests in flight")
        assert stub.max_in_flight > 1  # one process, several requests at once
        workers[0].kill()
        in_flight = [json.dumps(r.body["messages"]) for r in stub.requests if r.finished_at is None]
        log2 = tmp_path / "threads-2.log"
        workers.append(ThreadsWorker(env, "threads-2", log2))
        state = wait_until_finished(env, run, 180)
    finally:
        beat.stop()
        for w in workers:
            w.stop()
    assert state["status"] == "completed" and state["answered"] == len(keys)
    assert sorted(r["item__key"] for r in state["rows"]) == sorted(keys)
    assert all(r["status"] == "ok" for r in state["rows"])
    asked: dict[str, int] = {}
    for request in stub.requests:
        key = json.dumps(request.body["messages"])
        asked[key] = asked.get(key, 0) + 1
    assert len(asked) == len(keys) and max(asked.values()) <= 2
    assert all(asked[key] == 2 for key in in_flight)
    assert 3 <= stub.max_in_flight <= 6  # the endpoint's limit holds across the threads
    # every request is counted before it is sent: the killed process may have counted a few it never sent
    assert len(stub.requests) <= sum(r["requests"] for r in state["rows"]) <= len(stub.requests) + 8
