"""A real Celery worker is SIGKILLed in the middle of a run; another worker and `elicit --resume`
finish it: exactly one answer per (item, sample), none lost. On each broker the platform supports: the
default SQLite file, Redis and RabbitMQ.

Everything the platform does runs in subprocesses (manage.py, celery worker) against a scratch
database of their own — a SQLite file, or a fresh PostgreSQL database on the server of
DATABASE_URL — because pytest-django's SQLite test database lives in memory where no other
process can see it. The loopback stub runs in this process and sees every request.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from stub_openai import Reply, StubOpenAI

ROOT = Path(__file__).resolve().parent.parent
BELEM_NV = ROOT.parent / "shared" / "data" / "belem2024-stimuli" / "non-verifiable.csv"
ITEMS, SAMPLES, STUB_DELAY, TIMEOUT, GRACE = 5, 2, 0.6, 3, 2


def manage(env: dict[str, str], *args: str, timeout: float = 120) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode != 0:
        raise AssertionError(f"manage.py {' '.join(args)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done.stdout


def query(env: dict[str, str], code: str, timeout: float = 120) -> Any:
    """Run Python in a Django shell of the scratch database; it must print one JSON value."""
    return json.loads(manage(env, "shell", "-c", code, timeout=timeout).strip().splitlines()[-1])


SETUP = f"""
import json
from django.core.management import call_command
call_command("migrate", interactive=False, verbosity=0)
from surveys.models import Study
from surveys.importers import import_items
from elicitation.models import ModelEndpoint
study, created = Study.objects.get_or_create(slug="kill", defaults={{"title": "kill test"}})
if created:
    import_items(study, {str(BELEM_NV)!r})
ModelEndpoint.objects.update_or_create(name="stub", defaults=dict(
    base_url="{{base_url}}", model="stub-model", max_concurrency=2, timeout_seconds={TIMEOUT}, max_retries=2,
    retry_backoff_seconds=0.05, retry_backoff_max_seconds=0.2))
print(json.dumps(list(study.main_items().order_by("id").values_list("key", flat=True))))
"""

ROWS = """
import json
from elicitation.models import ElicitationRun, ModelResponse
run = ElicitationRun.objects.get(pk={run})
rows = list(ModelResponse.objects.filter(run=run).values("item__key", "sample_index", "status", "value", "params"))
print(json.dumps({{"status": run.status, "rows": rows}}))
"""


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    """A migrated scratch database with the Belem items and an endpoint pointing at the stub."""
    var = tmp_path_factory.mktemp("killtest")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "ELICITATION_"))}
    env.update(HEDGELAB_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings", PYTHONUNBUFFERED="1",
               ELICITATION_LEASE_GRACE_SECONDS=str(GRACE), ELICITATION_POLL_SECONDS="0.05", LOG_LEVEL="WARNING")
    scratch_db = None
    if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        import dj_database_url
        import psycopg

        cfg = dj_database_url.parse(os.environ["DATABASE_URL"])
        scratch_db = f"c1_killtest_{uuid.uuid4().hex[:8]}"
        server = dict(host=cfg["HOST"] or "127.0.0.1", port=cfg["PORT"] or 5432, user=cfg["USER"],
                      password=cfg["PASSWORD"] or None)
        with psycopg.connect(dbname="postgres", autocommit=True, **server) as conn:
            conn.execute(f'CREATE DATABASE "{scratch_db}"')
        base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
        env["DATABASE_URL"] = f"{base}/{scratch_db}"
    else:
        env.pop("DATABASE_URL", None)  # a SQLite file in the scratch VAR dir
    stub = StubOpenAI().start()
    try:
        keys = query(env, SETUP.replace("{base_url}", stub.base_url), timeout=300)
        yield {"env": env, "stub": stub, "keys": keys, "var": var}
    finally:
        stub.stop()
        if scratch_db:
            with psycopg.connect(dbname="postgres", autocommit=True, **server) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{scratch_db}" WITH (FORCE)')


class Worker:
    """A real `celery worker` subprocess in its own process group (so SIGKILL takes its children too)."""

    def __init__(self, env: dict[str, str], name: str, log: Path):
        self.log = open(log, "w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", env["ELICITATION_QUEUE"], "-c", "2",
             "-P", "prefork", "-n", f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
             "-l", "INFO"],
            cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # warm shutdown of the main process; it stops its pool
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self.log.close()


def wait_for(condition, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def request_key(request) -> tuple[str, int]:
    """(prompt, seed): the seed is the run's seed + the sample index, so this names one (item, sample)."""
    return json.dumps(request.body["messages"]), request.body["seed"]


def kill_and_resume(platform, broker_env: dict[str, str], label: str, queue: str | None = None) -> None:
    stub: StubOpenAI = platform["stub"]
    stub.reset()
    counter = iter(range(10_000))
    stub.responder = lambda request: Reply.answer(str(5 * (next(counter) % 21)), delay=STUB_DELAY)
    env = {**platform["env"], **broker_env, "ELICITATION_QUEUE": queue or f"c1-kill-{label}-{uuid.uuid4().hex[:6]}"}
    keys = platform["keys"][:ITEMS]
    logs = platform["var"]
    first = Worker(env, f"first-{label}", logs / f"worker1-{label}.log")  # starts while the run is created
    second = None
    try:
        out = manage(env, "elicit", "kill", "--endpoint", "stub", "--mode", "sampled", "--samples", str(SAMPLES),
                     "--temperature", "0.8", "--seed", "1000", "--items", ",".join(keys),
                     "--no-check")  # the stub's requests are the run's alone
        run_id = int(out.split("created run ")[1].split(":")[0])
        # kill the first worker while it waits on the (slow) stub, after it has answered a few
        wait_for(lambda: sum(r.finished_at is not None for r in stub.requests) >= 2
                 and any(r.finished_at is None for r in stub.requests), 90, "the first worker to be mid-request")
        first.kill()
        in_flight = {request_key(r) for r in stub.requests if r.finished_at is None}
        assert in_flight, "nothing was in flight when the worker was killed"

        second = Worker(env, f"second-{label}", logs / f"worker2-{label}.log")
        out = manage(env, "elicit", "--resume", str(run_id), "--wait", "--no-check", timeout=150)
        assert f"resumed run {run_id}" in out and "[Completed]" in out
    finally:
        first.stop()
        if second is not None:
            second.stop()

    state = query(env, ROWS.format(run=run_id))
    assert state["status"] == "completed"
    rows = state["rows"]
    pairs = [(r["item__key"], r["sample_index"]) for r in rows]
    assert sorted(pairs) == sorted((k, s) for k in keys for s in range(SAMPLES))  # complete, no duplicates
    assert all(r["status"] == "ok" and r["value"] is not None for r in rows)
    assert {r["params"]["seed"] - 1000 for r in rows} == set(range(SAMPLES))
    # the requests lost with the killed worker were asked again; nothing was asked more than twice
    asked: dict[tuple[str, int], int] = {}
    for request in stub.requests:
        if "_unparsed" in request.body:  # a body the kill cut off mid-send: never a whole request, never answered
            continue
        asked[request_key(request)] = asked.get(request_key(request), 0) + 1
    assert len(asked) == ITEMS * SAMPLES
    assert all(asked[key] == 2 for key in in_flight)
    assert max(asked.values()) <= 2
    # the endpoint's concurrency limit held across both workers' processes
    assert stub.max_in_flight <= 2


def test_killed_worker_on_the_default_sqlite_broker_then_resume(platform):
    kill_and_resume(platform, {}, "sqla")


@pytest.mark.broker
def test_killed_worker_on_redis_then_resume(platform):
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        pytest.skip(f"no Redis at TEST_REDIS_URL={url}: {exc}")
    kill_and_resume(platform, {"CELERY_BROKER_URL": url, "CELERY_VISIBILITY_TIMEOUT": "30"}, "redis")
    # leave no messages of this test behind in the shared Redis database
    for key in client.scan_iter("*c1-kill-redis-*"):
        client.delete(key)
    for tag, payload in client.hgetall("unacked").items():
        if b"c1-kill-redis-" in payload:
            client.hdel("unacked", tag)
            client.zrem("unacked_index", tag)



@pytest.mark.broker
def test_killed_worker_on_rabbitmq_then_resume(platform):
    import kombu

    url = os.environ.get("TEST_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672//")
    connection = kombu.Connection(url, connect_timeout=3)
    try:
        connection.ensure_connection(max_retries=1)
    except Exception as exc:  # noqa: BLE001 - any failure to connect means no broker here
        pytest.skip(f"no RabbitMQ at TEST_AMQP_URL={url}: {exc}")
    queue = f"c1-kill-amqp-{uuid.uuid4().hex[:6]}"
    try:
        kill_and_resume(platform, {"CELERY_BROKER_URL": url}, "amqp", queue=queue)
    finally:
        connection.default_channel.queue_delete(queue)  # leave nothing behind on the shared broker
        connection.release()
