"""Answers per second through the elicitation machinery against the loopback OpenAI stub, beside the ceiling:
the raw ``openai.AsyncOpenAI`` client on the same stub at the same concurrency, measured in the same run.

    .venv/bin/python bench/elicitation.py [--items 200] [--latency 0.0] [--workers 0] [--concurrency 4]
                                          [--pool prefork|threads] [--matrix]
                                          [--postgres postgres://postgres@127.0.0.1:5432] [--redis redis://…/15]

Sets up a scratch database — a SQLite file in a temporary HEDGELAB_VAR_DIR, or with ``--postgres`` a
fresh database on that server, dropped afterwards — with the demo study, registers an endpoint
pointing at tests/stub_openai.py and runs greedy runs over ``--items`` items:

* ``--workers 0`` (default): in this process (``elicit --sync``), one request at a time, against the stub run as
  a process of its own (``tests/stub_openai.py --delay``), as the raw client is: a stub in this process would make
  its replies under the platform's interpreter lock and count them against the platform;
* ``--workers K``: K real Celery worker processes with ``--concurrency`` each (``--pool threads``: that many
  threads per process, i.e. that many requests in flight per process), on the default SQLite broker (or
  Redis with ``--redis``), the endpoint's ``max_concurrency`` set to K × concurrency (or K × ``--slots``: the
  raw client then runs at that concurrency too);
* ``--matrix``: stub latency 0 and 200 ms × 1 and 2 worker processes (with the other options as given).

For each configuration it prints the platform's answers per second (first to last answer, after a warm-up run
of 2 × the slots' items that builds each pool thread's client), the raw client's requests per second at the
same concurrency (a separate process, like the workers; measured just before and just after the platform's run and
averaged, since a shared machine's load drifts), their ratio, and for a stub with latency the ideal
concurrency / latency; with workers, where a pool thread's time per answer goes (the request at the stub, the
rest of the attempt: slot lease, the HTTP client; and besides: the row's claim, which counts the request, committed
with the previous answer's settlement, the task's hand-off through the broker, prompts) and the workers' CPU per
answer. Then (``--profile N``, default 100; 0 skips) it answers N
more items in this process against the instant stub, half of them under cProfile, and prints where an answer's
time goes: database statements per answer by kind and table, write transactions (synced commits) per answer,
and milliseconds per answer by part (database, the openai client, HTTP transport and the wait for the stub
process's reply, prompts and parsing, the elicitation machinery, the rest), the profile's shares scaled by
the time per answer of the half run without it. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]
from bench.profiling import UNATTRIBUTED, Func, fold  # noqa: E402 (needs ROOT on the path)
from bench.scratch import scratch_environment  # noqa: E402
from stub_openai import allow_loopback  # noqa: E402

RAW_CLIENT = """
import asyncio, json, sys, time
import openai
base_url, n, concurrency, prompt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

async def main():
    client = openai.AsyncOpenAI(base_url=base_url, api_key="none", max_retries=0, timeout=30)
    gate = asyncio.Semaphore(concurrency)
    async def one():
        async with gate:
            await client.chat.completions.create(model="stub-model", temperature=0, max_tokens=8,
                                                 messages=[{"role": "user", "content": prompt}])
    await one()  # warm up the connection
    started = time.perf_counter()
    await asyncio.gather(*(one() for _ in range(n)))
    print(json.dumps(n / (time.perf_counter() - started)))
    await client.close()

asyncio.run(main())
"""


def raw_rate(base_url: str, n: int, concurrency: int, prompt: str) -> float:
    """Requests per second of the raw AsyncOpenAI client at ``concurrency`` (in its own process)."""
    out = subprocess.run([sys.executable, "-c", RAW_CLIENT, base_url, str(n), str(concurrency), prompt],
                         capture_output=True, text=True, timeout=600, check=True)
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def cpu_seconds(procs: list[subprocess.Popen]) -> float:
    """CPU time (user + system) the worker processes used so far (Linux's /proc; NaN elsewhere)."""
    total = 0.0
    for proc in procs:
        try:
            fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return float("nan")
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime
    return total


def wait_for(start_run, run) -> None:
    """Start ``run`` (queued to the workers) and wait until it is no longer running."""
    start_run(run)
    while True:
        run.refresh_from_db()
        if run.status != "running":
            return
        time.sleep(0.1)


@contextmanager
def stub_process(latency: float) -> Iterator[str]:
    """The stub in a process of its own (``tests/stub_openai.py --delay``); yields its base URL. The in-process
    measurement uses it, as the raw client does: with the stub in this process its reply would be made under the
    same interpreter lock as the platform's request, and counted against the platform."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "stub_openai.py"), "--answer", "I'd say 70",
                             "--delay", str(latency)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        line = proc.stdout.readline()
        found = re.search(r"at (http://\S+)", line)
        if not found:
            raise RuntimeError(f"the stub did not start: {line!r}")
        yield found.group(1)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def platform_rate(study, stub, args, items: list, latency: float, workers: int, base_url: str | None = None) -> dict:
    """One greedy run over ``items`` with ``workers`` worker processes (0: in this process), against the stub
    at ``base_url`` when given (a stub process: no request log) or the in-process ``stub``."""
    from django.db.models import Max, Min, Sum

    from elicitation.models import ModelEndpoint, ModelResponse
    from elicitation.runs import create_run, run_sync, start_run
    from stub_openai import Reply

    stub.reset()
    stub.default = Reply.answer("I'd say 70", delay=latency)
    slots = max(1, workers * (args.slots or args.concurrency))
    endpoint = ModelEndpoint.objects.create(name=f"bench-{time.monotonic_ns()}", base_url=base_url or stub.base_url,
                                            model="stub-model", max_concurrency=slots, timeout_seconds=30)
    run = create_run(study, endpoint, items=items)
    procs: list[subprocess.Popen] = []
    cpu = float("nan")
    try:
        if workers == 0:
            start_run(run, queue=False)
            run = run_sync(run)
        else:
            for n in range(workers):
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", os.environ["ELICITATION_QUEUE"],
                     "-c", str(args.concurrency), "-P", args.pool, "-n", f"bench{n}-{time.monotonic_ns()}@%h",
                     "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
                    cwd=ROOT, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(2)
            # warm-up, as the raw client's first request: each pool thread's first task imports the client
            # modules and builds its HTTP client and connection; a long-running worker pays that once
            wait_for(start_run, create_run(study, endpoint, items=items[:2 * slots]))
            stub.reset()
            stub.default = Reply.answer("I'd say 70", delay=latency)
            cpu = -cpu_seconds(procs)
            wait_for(start_run, run)
            cpu += cpu_seconds(procs)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
    rows = ModelResponse.objects.filter(run=run)
    span = rows.aggregate(first=Min("answered_at"), last=Max("answered_at"))
    answered = rows.filter(status__in=["ok", "unparseable"]).count()
    seconds = (span["last"] - span["first"]).total_seconds() if answered > 1 else float("nan")
    rate = (answered - 1) / seconds if answered > 1 and seconds > 0 else float("nan")
    served = [(r.received_at, r.finished_at) for r in stub.requests if r.finished_at is not None]
    at_stub = sum(end - start for start, end in served)
    attempts = [ms for ms in rows.values_list("latency_ms", flat=True) if ms is not None]
    threads = max(1, workers) * args.concurrency
    if base_url:  # a stub process: the rows count the requests; in this process, one at a time
        sent, in_flight = rows.aggregate(n=Sum("requests"))["n"] or 0, 1
    else:
        sent, in_flight = len(stub.requests), stub.max_in_flight
    return {"status": run.status, "answered": answered, "requests": sent, "rate": rate,
            "seconds": seconds, "concurrency": slots, "max_in_flight": in_flight,
            # where a pool thread's time per answer goes: the request at the stub; the rest of the attempt (the
            # slot's lease, the HTTP client); the rest (the row's claim with the request's count and the previous
            # answer's settlement, the task's hand-off through the broker, prompts): from the rows' attempt times
            # and the stub's log
            "mean_in_flight": at_stub / seconds if answered > 1 and seconds > 0 else float("nan"),
            "thread_ms": threads * seconds / answered * 1000 if answered > 1 else float("nan"),
            "stub_ms": at_stub / len(served) * 1000 if served else float("nan"),
            "attempt_ms": sum(attempts) / len(attempts) if attempts else float("nan"),
            # the workers' CPU per answer: 1000 / it is what they can answer per second if CPU-bound
            "cpu_ms": cpu / answered * 1000 if answered else float("nan")}


PARTS = [  # (part, substrings of a profiled function's file, or a built-in's name); the first that matches wins
    ("database (ORM, driver)", ("django/db/", "psycopg", "sqlite", "dj_database_url", "surveys/sql_rows.py")),
    ("openai client (building, parsing)", ("/openai/", "pydantic", "/annotated_types/")),
    ("HTTP transport, waiting for the stub", ("httpx", "httpcore", "/h11/", "elicitation/deadline.py", "socket", "ssl",
                                          "recv", "send", "select", "poll")),
    ("prompts and answer parsing", ("surveys/instruments/", "surveys/definition/", "/jinja2/", "/markupsafe/",
                                    "elicitation/prompts.py", "elicitation/modes.py", "analysis/metrics/", "numpy")),
    ("elicitation machinery", ("elicitation/", "redis")),
    ("Django (other)", ("django/",)),
]


def part_of(func: Func) -> str | None:
    """A profiled function's part by its file (a built-in by its name); None for Python's own library and the
    built-ins not named in PARTS, whose time goes to their callers' parts (``bench.profiling.fold``)."""
    filename, _, name = func
    text = (name if filename == "~" else filename).lower()
    found = next((part for part, marks in PARTS if any(m in text for m in marks)), None)
    library = filename == "~" or filename.startswith("<") or ("/lib/python3" in filename
                                                               and "site-packages" not in filename)
    return found or (None if library else "other")


def profile_answers(study, base_url: str, items: list) -> None:
    """Answer ``items`` in this process (elicit --sync) against the instant stub at ``base_url`` (a stub process),
    half of them under cProfile, and
    print statements per answer and milliseconds per answer by part: each part's share of the profile (each
    function's own time counted once, ``bench.profiling.fold``) × the time per answer without the profiler."""
    import cProfile
    import pstats
    from collections import Counter

    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from elicitation.models import ModelEndpoint
    from elicitation.runs import create_run, run_sync, start_run

    def answer(some: list, profiler: cProfile.Profile | None = None) -> tuple[int, float]:
        endpoint = ModelEndpoint.objects.create(name=f"bench-profile-{time.monotonic_ns()}", base_url=base_url,
                                                model="stub-model", max_concurrency=1, timeout_seconds=30)
        run = create_run(study, endpoint, items=some)
        start_run(run, queue=False)
        started = time.perf_counter()
        if profiler:
            profiler.enable()
        run_sync(run)
        if profiler:
            profiler.disable()
        return run.responses.filter(status__in=["ok", "unparseable"]).count() or 1, time.perf_counter() - started

    half = len(items) // 2
    plain, plain_seconds = answer(items[:half])  # the time per answer, without the profiler's overhead
    profiler = cProfile.Profile()
    with CaptureQueriesContext(connection) as queries:
        n, _ = answer(items[half:], profiler)
    wall = plain_seconds / plain
    parts = fold(pstats.Stats(profiler).stats, part_of)
    total = sum(parts.values()) or 1.0
    print(f"profile: {plain} answers in this process (elicit --sync, instant stub): {wall * 1000:.1f} ms per answer; "
          f"{n} more under cProfile for the shares")
    statements = Counter()
    for query in queries.captured_queries:
        sql = query["sql"]
        table = re.search(r'(?:FROM|UPDATE|INTO)\s+"?(\w+)', sql)
        statements[f"{sql.split()[0]} {table.group(1) if table else ''}".strip()] += 1
    from elicitation import throttle

    side = (" (the endpoint's slot: a lease and a release per answer in the slots' side file, not counted)"
            if type(throttle.limits()).__name__ == "SQLiteLimits" else "")
    print(f"  database statements per answer: {len(queries.captured_queries) / n:.1f} — "
          + ", ".join(f"{k} {v / n:.2f}" for k, v in statements.most_common(8)) + side)
    commits = statements["COMMIT"] / n
    if connection.vendor == "sqlite":  # (elsewhere a lone statement commits by itself, uncounted)
        print(f"  write transactions per answer: {commits:.2f} (each a synced commit: the claim of a row, which counts "
              f"its request, with the previous answer's settlement; and per task its last answer; the new prompts "
              f"go with its first claim), {statements['UPDATE elicitation_modelresponse'] / n:.2f} row updates")
    for part, seconds in parts.most_common():
        if part == UNATTRIBUTED and seconds / total < 0.005:
            continue  # the usual case: every function had a caller with a part
        print(f"  {part:<36} {seconds / total * wall * 1000:6.1f} ms per answer  {seconds / total:5.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--items", type=int, default=200, help="items to ask (the demo study has 300)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the stub waits before answering")
    parser.add_argument("--workers", type=int, default=0, help="Celery worker processes (0: in-process)")
    parser.add_argument("--concurrency", type=int, default=4, help="pool size of each worker")
    parser.add_argument("--slots", type=int, default=0,
                        help="the endpoint's max_concurrency per worker process (default: --concurrency); fewer slots "
                             "than threads let one thread's database work overlap another's request")
    parser.add_argument("--pool", default="prefork", choices=["prefork", "threads"], help="Celery pool of the workers")
    parser.add_argument("--matrix", action="store_true", help="latency 0 and 0.2 s × 1 and 2 worker processes")
    parser.add_argument("--postgres", help="PostgreSQL server URL (without a database name) for a scratch database")
    parser.add_argument("--redis", help="Redis URL for the broker (default: the SQLite broker)")
    parser.add_argument("--profile", type=int, default=100, help="answers to profile in-process (0: none)")
    args = parser.parse_args()

    allow_loopback(os.environ)  # the stub and its workers' endpoint are on loopback
    os.environ.pop("CELERY_BROKER_URL", None)
    queue = f"bench-{os.getpid()}"
    os.environ["ELICITATION_QUEUE"] = queue
    if args.redis:
        os.environ["CELERY_BROKER_URL"] = args.redis
    with scratch_environment(args.postgres) as var:
        try:
            run(args)
        finally:
            shutil.rmtree(var, ignore_errors=True)
            if args.redis:
                import redis

                client = redis.Redis.from_url(args.redis)
                for key in client.scan_iter(f"*{queue}*"):
                    client.delete(key)


def run(args) -> None:
    """Every configuration of ``args`` and the profile, in the scratch setting ``main`` made."""
    import django

    django.setup()
    from django.core.management import call_command

    from elicitation.prompts import build_prompt, prompt_content
    from stub_openai import StubOpenAI
    from surveys.demo.loader import load_demo
    from surveys.models import Study

    stub = StubOpenAI().start()
    try:
        call_command("migrate", interactive=False, verbosity=0)
        load_demo()
        study = Study.objects.get(slug="demo")
        main_items = list(study.main_items().order_by("id"))
        items = main_items[: args.items]
        prompt = json.dumps(prompt_content(build_prompt(study, items[0], True), "chat"))
        configs = ([(lat, w) for lat in (0.0, 0.2) for w in (1, 2)] if args.matrix
                   else [(args.latency, args.workers)])
        database = "PostgreSQL" if args.postgres else "SQLite"
        broker = "Redis" if args.redis else "SQLite (kombu sqla)"
        print(f"greedy runs over {len(items)} items; database {database}; broker {broker}; "
              f"pool {args.pool} × {args.concurrency} per worker process"
              + (f", the endpoint's max_concurrency {args.slots} per process" if args.slots else ""))
        print(f"{'stub latency':>12}  {'workers':>18}  {'platform ans/s':>14}  {'raw client req/s':>16}  "
              f"{'ratio':>5}  {'ideal C/latency':>15}  notes")
        from stub_openai import Reply

        for latency, workers in configs:
            concurrency = max(1, workers * (args.slots or args.concurrency)) if workers else 1

            def raw_now(base_url: str | None) -> float:
                stub.reset()
                stub.default = Reply.answer("I'd say 70", delay=latency)
                return raw_rate(base_url or stub.base_url, max(50, min(len(items), 400)) if latency == 0
                                else len(items), concurrency, prompt)

            # in this process: both against a stub process (stub_process); with workers: the stub in this
            # process, which then only serves (its log says where a pool thread's time goes)
            with stub_process(latency) if workers == 0 else nullcontext() as base_url:
                raw_before = raw_now(base_url)  # just before and just after the platform: the load drifts
                result = platform_rate(study, stub, args, items, latency, workers, base_url)
                raw_after = raw_now(base_url)
            raw = (raw_before + raw_after) / 2
            ideal = f"{concurrency / latency:.1f}" if latency else "-"
            who = "in-process (--sync)" if workers == 0 else f"{workers} × {args.concurrency}"
            print(f"{latency * 1000:>10.0f}ms  {who:>18}  {result['rate']:>14.1f}  {raw:>16.1f}  "
                  f"{result['rate'] / raw:>5.2f}  {ideal:>15}  {result['status']}, {result['answered']} answers, "
                  f"{result['requests']} requests, at most {result['max_in_flight']} in flight; raw client "
                  f"{raw_before:.1f} before, {raw_after:.1f} after", flush=True)
            if workers:
                print(f"{'':>12}  on average {result['mean_in_flight']:.1f} of {concurrency} requests in flight. "
                      f"A pool thread's {result['thread_ms']:.0f} ms per answer: {result['stub_ms']:.0f} the request "
                      f"at the stub, {result['attempt_ms'] - result['stub_ms']:.0f} the rest of the attempt (waiting for a slot, its "
                      f"lease, the HTTP client), "
                      f"{result['thread_ms'] - result['attempt_ms']:.0f} besides (the row's claim, which counts the "
                      f"request, committed with the previous answer's settlement; the task's hand-off through the "
                      f"broker; prompts). The workers' CPU: {result['cpu_ms']:.1f} "
                      f"ms per answer (at most {1000 / result['cpu_ms'] * workers:.0f} answers/s if CPU-bound)",
                      flush=True)
        if args.profile:
            with stub_process(0.0) as base_url:
                profile_answers(study, base_url, main_items[-args.profile:])
    finally:
        stub.stop()


if __name__ == "__main__":
    main()
