"""The fault matrix: repeat the outside fault review on real processes and print what each fault did.

    .venv/bin/python bench/faults.py [--only NAME[,NAME…]] [--list] [--participants 50]
    make faults

Everything runs against private servers started here and removed afterwards (never the shared ones): a
PostgreSQL cluster (initdb + pg_ctl on a free port), a Redis (broker), the web server (gunicorn,
2 processes × 4 threads, DEBUG on, as ``make run`` starts it), Celery workers, and a scripted OpenAI-compatible endpoint
(tests/stub_openai.py). Each fault runs on its own (a failure or hang of one does not stop the others) and
prints one row: answers expected, stored, lost (expected or confirmed but not stored), duplicated, and a
note with what else was measured (HTTP 500s, 503s, time, whether a run needed Resume…). Nothing is
asserted: the tests assert; this shows.
"""
from __future__ import annotations

import argparse
import http.server
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from private_services import (Participant, PrivatePostgres, PrivateRedis, django_env, free_port,  # noqa: E402
                              manage)
from real_server import Gunicorn  # noqa: E402


@dataclass
class Row:
    fault: str
    expected: int | str = "-"
    stored: int | str = "-"
    lost: int | str = "-"
    duplicated: int | str = "-"
    note: str = ""


class Lab:
    """The private servers and helpers the faults share."""

    def __init__(self, args) -> None:
        self.args = args
        self.var = Path(tempfile.mkdtemp(prefix="hedgelab-faults-"))
        self.pg = self.redis = self.web = None
        self.workers: list[subprocess.Popen] = []
        self.pid_counter = 0
        self.address_counter = 0

    def start(self) -> None:
        self.pg = PrivatePostgres().__enter__()
        self.redis = PrivateRedis().__enter__()
        self.env = django_env(self.pg.url(), self.var, CELERY_BROKER_URL=self.redis.url(0),
                              ELICITATION_LEASE_GRACE_SECONDS="3", LOG_LEVEL="WARNING",
                              ELICITATION_SWEEP_SECONDS="5", ELICITATION_SWEEP_MIN_AGE_SECONDS="5",
                              TRUSTED_PROXY_COUNT="1")  # each participant sends X-Forwarded-For as its proxy would
        os.environ.update(self.env)
        import django

        django.setup()
        manage(self.env, "migrate", "--noinput")
        manage(self.env, "load_demo")
        self.web = Gunicorn(self.env).__enter__()

    def close(self) -> None:
        """Stop everything this lab started (also after an interrupted start)."""
        for w in self.workers:
            if w.poll() is None:
                w.kill()
        for service in (self.web, self.redis):
            if service is not None:
                service.__exit__(None, None, None)
        if self.pg is not None:
            try:
                from django.db import connections

                connections.close_all()
            except Exception:  # noqa: BLE001 - Django may not be set up yet
                pass
            self.pg.__exit__(None, None, None)

    def pid(self, prefix: str) -> str:
        self.pid_counter += 1
        return f"{prefix}{self.pid_counter:05d}"

    def fresh_counters(self) -> None:
        """Each fault starts with no entry counts (rows in the lab's database, surveys.entry_counter), so one
        fault's entries do not use up the next one's entry quota."""
        from django.db import close_old_connections

        from surveys.models import EntryCount

        close_old_connections()  # the database may have restarted during the previous fault
        EntryCount.objects.all().delete()

    def participant(self, prefix: str, pid: str | None = None, **kw) -> Participant:
        """A participant from an address of their own (documentation range, sent as X-Forwarded-For), as
        participants on Prolific are; ``address=`` for several from one client."""
        self.address_counter += 1
        kw.setdefault("address", client_address(self.address_counter))
        return Participant(self.web.base, "demo", pid or self.pid(prefix), **kw)

    def answers_of(self, pids: list[str]) -> dict[str, list[int]]:
        """Stored positions per PID (a fresh connection: the database may have restarted)."""
        from django.db import connections

        connections.close_all()
        from surveys.models import Response

        out: dict[str, list[int]] = {p: [] for p in pids}
        for pid, position in Response.objects.filter(participant__prolific_pid__in=pids).values_list(
                "participant__prolific_pid", "assignment__position"):
            out[pid].append(position)
        return out

    def worker(self, concurrency: int = 2) -> subprocess.Popen:
        log = (self.var / f"worker-{len(self.workers)}.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "worker", "-l", "warning",
                                 "-c", str(concurrency), "--without-gossip", "--without-mingle"],
                                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.workers.append(proc)
        time.sleep(3)
        return proc

    def beat(self) -> subprocess.Popen:
        """Celery beat (the Procfile's beat role): the elicitation sweep every 5 s here."""
        log = (self.var / f"beat-{len(self.workers)}.log").open("w")
        proc = subprocess.Popen([sys.executable, "-m", "celery", "-A", "config", "beat", "-l", "warning",
                                 "--max-interval", "1", "-s", str(self.var / f"beat-{len(self.workers)}")],
                                cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.workers.append(proc)  # stopped with the workers
        return proc

    def stop_workers(self) -> None:
        for w in self.workers:
            if w.poll() is None:
                w.send_signal(signal.SIGTERM)
                try:
                    w.wait(20)
                except subprocess.TimeoutExpired:
                    w.kill()
        self.workers.clear()


def client_address(n: int) -> str:
    """The n-th participant's address: a header value in the benchmarking range 198.18.0.0/15, never a target."""
    return f"198.{18 + n // 65000}.{n // 250 % 250}.{1 + n % 250}"


def human_row(name: str, people: list[Participant], lab: Lab, per_person: int, extra: str = "") -> Row:
    pids = sorted({p.pid for p in people})
    stored = lab.answers_of(pids)
    expected = per_person * len(pids)
    total = sum(len(v) for v in stored.values())
    dup = sum(len(v) - len(set(v)) for v in stored.values())
    confirmed_lost = sum(len(set(p.confirmed) - set(stored[p.pid])) for p in people)
    short = sum(max(0, per_person - len(set(v))) for v in stored.values())
    statuses = Counter(s for p in people for s in p.statuses)
    others = ", ".join(f"{code}: {n}" for code, n in sorted(statuses.items()) if code not in (0, 200, 302, 500, 503))
    note = (f"HTTP 500: {statuses.get(500, 0)}, 503: {statuses.get(503, 0)}, no answer: {statuses.get(0, 0)}"
            + (f", other: {others}" if others else ""))
    refusals = sorted({p.first_refusal for p in people if p.first_refusal})
    if refusals:
        note += f" (first: {refusals[0]})"
    return Row(name, expected, total, max(short, confirmed_lost), dup, (note + "; " + extra).strip("; "))


def in_threads(people: list[Participant], fn: Callable[[Participant], None], timeout: float = 600) -> None:
    threads = [threading.Thread(target=fn, args=(p,)) for p in people]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)


# --- the participant side -------------------------------------------------------------------------
def double_click(lab: Lab) -> Row:
    p = lab.participant("DBL")
    p.enter()
    form = p.question()
    two = [Participant(p.base, p.slug, p.pid) for _ in range(2)]
    for t in two:
        t.jar, t.opener = p.jar, p.opener  # the same browser
    in_threads(two, lambda t: t.post_answer(form))
    return human_row("double click (two POSTs of one answer at once)", [p], lab, 1)


def stale_tab(lab: Lab) -> Row:
    p = lab.participant("STALE")
    p.enter()
    first = p.question()
    p.post_answer(first, "50")
    p.post_answer(first, "95")  # the old tab submits the same question again with another value
    from surveys.models import Response

    value = Response.objects.filter(participant__prolific_pid=p.pid).values_list("value", flat=True).first()
    return human_row("stale tab (old question submitted again)", [p], lab, 1, f"value kept: {value:g} (first: 50)")


def back_button(lab: Lab) -> Row:
    p = lab.participant("BACK")
    p.enter()
    first = p.question()
    p.post_answer(first)
    p.post_answer(p.question())
    p.post_answer(first)  # back twice, submit again
    return human_row("back button (earlier page re-submitted)", [p], lab, 2)


def one_pid_eight_browsers(lab: Lab) -> Row:
    pid = lab.pid("SHARED")
    people = [lab.participant("", pid=pid) for _ in range(8)]
    in_threads(people, lambda p: p.run())
    from surveys.models import Participant as P

    rows = P.objects.filter(prolific_pid=pid).count()
    return human_row("8 browsers enter with one PID", people, lab, 30, f"participant rows: {rows}")


def many_at_once(lab: Lab) -> Row:
    n = lab.args.participants
    people = [lab.participant("MANY") for _ in range(n)]
    started = time.monotonic()
    in_threads(people, lambda p: p.run(answers=3))
    from surveys.assignment import item_usage
    from surveys.models import Study

    study = Study.objects.get(slug="demo")
    usage = item_usage(study)
    by_label: dict[str, list[int]] = {}
    for item_id, label in study.main_items().values_list("id", "expression"):
        by_label.setdefault(label, []).append(usage[item_id])
    spread = max(max(u) - min(u) for u in by_label.values())
    return human_row(f"{n} participants at once (3 answers each)", people, lab, 3,
                     f"{time.monotonic() - started:.0f} s; item use max−min within a pool: {spread}")


def postgres_restart(down: float) -> Callable[[Lab], Row]:
    def fault(lab: Lab) -> Row:
        people = [lab.participant("PGR", pause=0.05) for _ in range(3)]
        threads = [threading.Thread(target=p.run) for p in people]
        for t in threads:
            t.start()
        time.sleep(3)
        lab.pg.restart(down=down)
        for t in threads:
            t.join(600)
        return human_row(f"PostgreSQL restart, down {down:g} s (3 participants answering)", people, lab, 30)

    return fault


def entry_flood(lab: Lab) -> Row:
    from surveys.models import Participant as P

    before = P.objects.count()
    codes = Counter()
    started = time.monotonic()
    for _ in range(300):
        p = lab.participant("FLOOD", address="203.0.113.7")  # one client
        status, _, _ = p._request(f"/s/demo/?PROLIFIC_PID={p.pid}")
        codes[status] += 1
    created = P.objects.count() - before
    return Row("300 new participants from one client", note=f"created {created}, refused (429) {codes.get(429, 0)}, "
                                                             f"{time.monotonic() - started:.1f} s")


def permissions(lab: Lab) -> Row:
    from django.contrib.auth.models import User
    from rest_framework.authtoken.models import Token

    user, _ = User.objects.get_or_create(username="no-perms-staff", defaults={"is_staff": True})
    token, _ = Token.objects.get_or_create(user=user)
    results = []
    for method, path in [("GET", "/api/participants/"), ("GET", "/api/studies/demo/export/csv/?raw_ids=1"),
                         ("POST", "/api/studies/demo/attention/"), ("GET", "/api/responses/")]:
        request = urllib.request.Request(lab.web.base + path, method=method, data=b"" if method == "POST" else None,
                                         headers={"Authorization": f"Token {token.key}"})
        try:
            with urllib.request.urlopen(request, timeout=30) as r:
                status = r.status
        except urllib.error.HTTPError as exc:
            status = exc.code
        results.append(f"{method} {path.split('?')[0]} → {status}")
    return Row("staff account without permissions", note="; ".join(results))


def secret_key_variable(lab: Lab) -> Row:
    result = subprocess.run([sys.executable, "manage.py", "add_endpoint", "evil", "--base-url",
                             "http://127.0.0.1:9/v1", "--model", "m", "--key-env", "ADMIN_PASSWORD"],
                            cwd=ROOT, env=lab.env, capture_output=True, text=True)
    said = (result.stderr or result.stdout).strip().splitlines()[-1][:120]
    return Row("endpoint key variable = ADMIN_PASSWORD", note=f"exit {result.returncode}: {said}")


# --- the model side -------------------------------------------------------------------------------
def model_run(lab: Lab, name: str, replies, items: int = 10, during: Callable[[Lab], None] | None = None,
              endpoint_fields: dict | None = None, deadline: float = 240, server=None) -> Row:
    """A greedy run of ``items`` demo items on Celery workers against the stub (scripted with ``replies``)
    or ``server``; ``during`` is the fault, applied once the run is under way. Resume is pressed only if
    the run is still not finished at ``deadline`` (and said so)."""
    from django.db import connections

    from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
    from elicitation.runs import create_run, resume_run, start_run
    from stub_openai import StubOpenAI
    from surveys.models import Study

    stub = server or StubOpenAI().__enter__()
    try:
        if server is None:
            stub.queue(*replies)
            from stub_openai import Reply

            stub.default = Reply.answer("70", delay=0.3)
        study = Study.objects.get(slug="demo")
        fields = dict(base_url=stub.base_url, model="stub", max_retries=4, retry_backoff_seconds=0.1,
                      retry_backoff_max_seconds=1, timeout_seconds=5, max_concurrency=4) | (endpoint_fields or {})
        endpoint = ModelEndpoint.objects.create(name=f"fault-{time.monotonic_ns()}", **fields)
        chosen = list(study.main_items().order_by("?")[:items])
        run = create_run(study, endpoint, items=chosen)
        lab.worker()
        lab.beat()
        start_run(run)
        started, resumed = time.monotonic(), False
        if during is not None:
            time.sleep(2)
            during(lab)
        while True:
            connections.close_all()
            run = ElicitationRun.objects.get(pk=run.pk)
            if run.status not in (ElicitationRun.Status.RUNNING,):
                break
            if time.monotonic() - started > deadline:
                if resumed:
                    break
                run.status = ElicitationRun.Status.CANCELLED  # stalled: what a researcher would do
                ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.CANCELLED)
                resume_run(ElicitationRun.objects.get(pk=run.pk))
                resumed, started = True, time.monotonic()
            time.sleep(1)
        rows = ModelResponse.objects.filter(run=run)
        counts = Counter(rows.values_list("status", flat=True))
        answered = counts.get("ok", 0) + counts.get("unparseable", 0)
        dup = rows.count() - len(set(rows.values_list("item_id", "sample_index")))
        note = (f"run {run.status}; ok {counts.get('ok', 0)}, failed {counts.get('failed', 0)}, pending "
                f"{counts.get('pending', 0)}; {time.monotonic() - started:.0f} s"
                + ("; needed Resume" if resumed else "; no Resume needed"))
        return Row(name, items, answered, items - answered, dup, note)
    finally:
        lab.stop_workers()
        if server is None:
            stub.__exit__(None, None, None)


def endpoint_errors(lab: Lab) -> Row:
    from stub_openai import Reply

    truncated = Reply.garbage(b'{"id": "x", "object": "chat.completion", "choices": [{"index": 0, "mess',
                              "application/json")
    replies = [Reply.error(429, headers={"Retry-After": "1"}), Reply.error(500), Reply.answer("10", delay=8),
               Reply.garbage(), truncated, Reply.error(503)]
    return model_run(lab, "endpoint 429/500/503/timeout/garbage/truncated JSON", replies)


class _Trickle(http.server.BaseHTTPRequestHandler):
    """Sends the headers of a completion, then one byte a second, for ever (a hung endpoint)."""

    def do_POST(self):  # noqa: N802
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        try:
            for _ in range(100000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass

    def log_message(self, *args):
        pass


def trickling_endpoint(lab: Lab) -> Row:
    port = free_port()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), _Trickle)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    server.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        return model_run(lab, "endpoint that trickles one byte a second", [], items=2, server=server,
                         endpoint_fields={"max_retries": 0}, deadline=90)
    finally:
        server.shutdown()


def kill_worker(lab: Lab) -> Row:
    def fault(lab: Lab) -> None:
        for w in lab.workers[:1]:  # the worker (the beat stays)
            w.send_signal(signal.SIGKILL)
        time.sleep(1)
        lab.worker()

    return model_run(lab, "kill -9 of the worker mid-run", [], items=20, during=fault)


def broker_restart(lab: Lab) -> Row:
    def fault(lab: Lab) -> None:
        lab.redis.stop()
        time.sleep(2)
        lab.redis.start()

    return model_run(lab, "broker (Redis, no persistence) restart mid-run", [], items=20, during=fault)


def database_restart_run(lab: Lab) -> Row:
    return model_run(lab, "PostgreSQL restart mid-run (2 s down)", [], items=20,
                     during=lambda lab: lab.pg.restart(down=2))


def embedded_default(lab: Lab) -> Row:
    """The server-less default (SQLite) with many participants at once (its own web server and database)."""
    var = Path(tempfile.mkdtemp(prefix="hedgelab-faults-sqlite-"))
    env = {k: v for k, v in lab.env.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    env["HEDGELAB_VAR_DIR"] = str(var)
    env.pop("DATABASE_URL", None)
    manage(env, "migrate", "--noinput")
    manage(env, "load_demo")
    n = lab.args.participants
    with Gunicorn(env) as web:
        people = [Participant(web.base, "demo", f"SQLITE{i:04d}", address=client_address(i)) for i in range(n)]
        in_threads(people, lambda p: p.run(answers=3))
    import sqlite3

    conn = sqlite3.connect(var / "db.sqlite3")
    rows = conn.execute("SELECT p.prolific_pid, a.position FROM surveys_response r JOIN surveys_participant p "
                        "ON p.id = r.participant_id JOIN surveys_assignment a ON a.id = r.assignment_id").fetchall()
    stored: dict[str, list[int]] = {p.pid: [] for p in people}
    for pid, position in rows:
        stored[pid].append(position)
    statuses = Counter(s for p in people for s in p.statuses)
    dup = sum(len(v) - len(set(v)) for v in stored.values())
    short = sum(max(0, 3 - len(set(v))) for v in stored.values())
    return Row(f"embedded default (SQLite), {n} participants at once", 3 * n, len(rows), short, dup,
               f"HTTP 500: {statuses.get(500, 0)}, 503: {statuses.get(503, 0)}")


FAULTS: dict[str, Callable[[Lab], Row]] = {
    "double-click": double_click,
    "stale-tab": stale_tab,
    "back-button": back_button,
    "one-pid-8-browsers": one_pid_eight_browsers,
    "many-at-once": many_at_once,
    "pg-blip": postgres_restart(0.5),
    "pg-outage": postgres_restart(10),
    "entry-flood": entry_flood,
    "permissions": permissions,
    "secret-key-variable": secret_key_variable,
    "endpoint-errors": endpoint_errors,
    "trickling-endpoint": trickling_endpoint,
    "kill-worker": kill_worker,
    "broker-restart": broker_restart,
    "db-restart-run": database_restart_run,
    "embedded-default": embedded_default,
}


def print_matrix(rows: list[Row]) -> None:
    head = ("fault", "expected", "stored", "lost", "duplicated", "measured")
    width = max(len(r.fault) for r in rows) if rows else 10
    print(f"\n{head[0]:<{width}}  {head[1]:>8}  {head[2]:>6}  {head[3]:>4}  {head[4]:>10}  {head[5]}")
    for r in rows:
        print(f"{r.fault:<{width}}  {r.expected!s:>8}  {r.stored!s:>6}  {r.lost!s:>4}  {r.duplicated!s:>10}  {r.note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", help="comma-separated fault names (see --list)")
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--participants", type=int, default=50)
    args = parser.parse_args()
    if args.list:
        print("\n".join(FAULTS))
        return
    names = args.only.split(",") if args.only else list(FAULTS)
    unknown = [n for n in names if n not in FAULTS]
    if unknown:
        sys.exit(f"unknown fault(s): {', '.join(unknown)} (see --list)")
    lab = Lab(args)
    rows: list[Row] = []
    try:
        lab.start()
        for name in names:
            print(f"… {name}", flush=True)
            started = time.monotonic()
            try:
                lab.fresh_counters()
                row = FAULTS[name](lab)
            except Exception as exc:  # noqa: BLE001 - one fault's crash must not stop the others
                traceback.print_exc()
                row = Row(name, note=f"could not be measured: {exc!r}"[:200])
            row.note += f" [{time.monotonic() - started:.0f} s]"
            rows.append(row)
            print(json.dumps(row.__dict__), flush=True)
    finally:
        lab.close()
    print_matrix(rows)


if __name__ == "__main__":
    main()
