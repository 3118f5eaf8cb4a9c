"""Answers per second through the elicitation machinery, against the loopback OpenAI stub.

    .venv/bin/python bench/elicitation.py [--items 200] [--latency 0.0] [--workers 0] [--concurrency 4]
                                          [--postgres postgres://postgres@127.0.0.1:5432] [--redis redis://…/15]

Sets up a scratch database — a SQLite file in a temporary HEDGELAB_VAR_DIR, or with ``--postgres`` a
fresh database on that server, dropped afterwards — with the demo study, registers an endpoint
pointing at tests/stub_openai.py and runs one greedy run over ``--items`` items:

* ``--workers 0`` (default): in this process (``elicit --sync``), one request at a time;
* ``--workers K``: K real Celery worker processes with ``--concurrency`` each, on the default SQLite
  broker (or Redis with ``--redis``), the endpoint's ``max_concurrency`` set to K × concurrency.

Prints answers per second (from the run's first to its last answer) and the platform's overhead per
answer (wall time minus the stub's latency, for the in-process mode). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200, help="items to ask (the demo study has 300)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the stub waits before answering")
    parser.add_argument("--workers", type=int, default=0, help="Celery worker processes (0: in-process)")
    parser.add_argument("--concurrency", type=int, default=4, help="pool size of each worker")
    parser.add_argument("--postgres", help="PostgreSQL server URL (without a database name) for a scratch database")
    parser.add_argument("--redis", help="Redis URL for the broker (default: the SQLite broker)")
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="hedgelab-bench-"))
    os.environ.update(HEDGELAB_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    for name in ("DATABASE_URL", "CELERY_BROKER_URL"):
        os.environ.pop(name, None)
    queue = f"bench-{os.getpid()}"
    os.environ["ELICITATION_QUEUE"] = queue
    scratch = None
    if args.postgres:
        import psycopg

        server = args.postgres.rstrip("/")
        scratch = f"hedgelab_bench_{os.getpid()}"
        with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{scratch}"')
        os.environ["DATABASE_URL"] = f"{server}/{scratch}"
    if args.redis:
        os.environ["CELERY_BROKER_URL"] = args.redis
    import django

    django.setup()
    from django.core.management import call_command
    from django.db.models import Max, Min

    from elicitation.models import ModelEndpoint, ModelResponse
    from elicitation.runs import create_run, run_sync, start_run
    from stub_openai import Reply, StubOpenAI
    from surveys.demo.loader import load_demo
    from surveys.models import Study

    workers: list[subprocess.Popen] = []
    stub = StubOpenAI().start()
    try:
        call_command("migrate", interactive=False, verbosity=0)
        load_demo()
        study = Study.objects.get(slug="demo")
        items = list(study.main_items().order_by("id")[: args.items])
        stub.default = Reply.answer("I'd say 70", delay=args.latency)
        slots = max(1, args.workers * args.concurrency)
        endpoint = ModelEndpoint.objects.create(name="bench-stub", base_url=stub.base_url, model="stub-model",
                                                max_concurrency=slots, timeout_seconds=30)
        run = create_run(study, endpoint, items=items)
        started = time.perf_counter()
        if args.workers == 0:
            start_run(run, queue=False)
            run = run_sync(run)
        else:
            for n in range(args.workers):
                workers.append(subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "-c",
                     str(args.concurrency), "-n", f"bench{n}@%h", "--without-gossip", "--without-mingle",
                     "--without-heartbeat", "-l", "WARNING"], cwd=ROOT, env=os.environ.copy(),
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            start_run(run)
            while True:
                run.refresh_from_db()
                if run.status != "running":
                    break
                time.sleep(0.2)
        wall = time.perf_counter() - started
        rows = ModelResponse.objects.filter(run=run)
        span = rows.aggregate(first=Min("answered_at"), last=Max("answered_at"))
        answered = rows.filter(status__in=["ok", "unparseable"]).count()
        seconds = (span["last"] - span["first"]).total_seconds() if answered > 1 else float("nan")
        rate = (answered - 1) / seconds if answered > 1 and seconds > 0 else float("nan")
        mode = "in-process (--sync)" if args.workers == 0 else f"{args.workers} worker(s) × {args.concurrency}"
        broker = "none" if args.workers == 0 else ("Redis" if args.redis else "SQLite (kombu sqla)")
        print(f"greedy run over {len(items)} items, {mode}, stub latency {args.latency * 1000:.0f} ms, "
              f"database {'PostgreSQL' if scratch else 'SQLite'}, broker {broker}")
        print(f"  status {run.status}; {answered} answers; {len(stub.requests)} requests")
        print(f"  answers per second: {rate:.1f} (first to last answer); wall time incl. startup {wall:.1f} s")
        if args.workers == 0 and answered:
            overhead = (seconds / max(1, answered - 1) - args.latency) * 1000
            print(f"  platform overhead per answer: ≈ {overhead:.1f} ms (prompt, leases, limits, writes, HTTP)")
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            try:
                worker.wait(timeout=20)
            except subprocess.TimeoutExpired:
                worker.kill()
        stub.stop()
        shutil.rmtree(var, ignore_errors=True)
        if args.redis:
            import redis

            client = redis.Redis.from_url(args.redis)
            for key in client.scan_iter(f"*{queue}*"):
                client.delete(key)
        if scratch:
            from django.db import connections

            connections.close_all()
            with psycopg.connect(f"{server}/postgres", autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


if __name__ == "__main__":
    main()
