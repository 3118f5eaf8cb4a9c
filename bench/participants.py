"""Simulated participants through the real server, against a bare Django view on the same server and database.

    .venv/bin/python bench/participants.py [--participants 1000] [--think 3,10] [--duration 90]
                                           [--concurrency 16] [--saturate 20] [--rounds 4] [--workers 4] [--threads 2]
                                           [--no-crowd-ceiling] [--profile 200]
                                           [--database-url postgres://postgres@127.0.0.1:5432/NAME]

Starts gunicorn (``--workers`` × ``--threads``, as ``make run`` and the Procfile do) on a free port of
127.0.0.1, on a scratch SQLite file (default) or on ``--database-url`` (migrated; the bench's participants are
removed afterwards), with the demo study. The server's settings are the platform's plus one bare view
(bench/bare_site.py: the session, one INSERT, a small page). Then, over real HTTP (a small asyncio client,
one connection per request, as a browser after a few seconds' thought):

1. **ceiling**: ``--concurrency`` clients without pause on the bare view for ``--saturate`` seconds;
2. **platform**: as many clients answering the demo study (an answer = the POST, whose reply is the next
   question's page);
   the two alternate in ``--rounds`` rounds, so that other load on the machine weighs on both alike;
3. **participants**: ``--participants`` people, each thinking ``--think`` seconds (uniform) before every
   answer, for ``--duration`` seconds (they start spread over the first think time); then (unless
   ``--no-crowd-ceiling``) as many people thinking as long on the bare view (an answer = one request), which
   says whether the machine itself can carry the crowd;

and prints answers per second, the ratio platform / ceiling, latency percentiles (p50, p99) of an answer,
failed requests, and a check in the database: every answer the server confirmed (the next question in the reply
to the POST, or the redirect after the last) is stored, and none twice. Participants are pledged beforehand (rows written directly) so that the run
measures answering, not the item draw.

Then, the server stopped, the **profile** that says why (``--profile`` answers, 0: skip): the same answers
(platform flow and bare view) in this process through ``django.test.Client``, with the same settings and
database: SQL statements per answer (by verb), CPU and wall ms per answer (without the profiler), and where
the time goes, in ms per answer for the platform and the bare view: each function's own time under cProfile
counted once, in a category by its file (templates, forms, ORM + database, sessions, request handling, the
platform's own code, the test client), a helper's (Python's library, django/utils, builtins) for its callers;
then the platform's costliest functions, each with what it calls down to the next platform function.
Nothing is asserted; the figures depend on the machine.
"""
from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import urlencode

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
sys.path[:0] = [str(ROOT)]
from bench.profiling import UNATTRIBUTED, Func, fold  # noqa: E402 (needs ROOT on the path)

SLUG = "demo"
FORM = re.compile(r'name="position" value="(\d+)".*?name="item" value="(\d+)".*?name="token" value="(\w*)"', re.S)


# --- a small HTTP/1.1 client (one connection per request, cookies kept per participant) -----------------
@dataclass
class Browser:
    host: str
    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    async def request(self, method: str, path: str, form: dict | None = None) -> tuple[int, str, str]:
        body = urlencode(form).encode() if form is not None else b""
        headers = [f"{method} {path} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: close",
                   "User-Agent: hedgelab-bench"]
        if self.cookies:
            headers.append("Cookie: " + "; ".join(f"{k}={v}" for k, v in self.cookies.items()))
        if form is not None:
            headers += ["Content-Type: application/x-www-form-urlencoded", f"Content-Length: {len(body)}"]
        reader, writer = await asyncio.open_connection(self.host, self.port)
        try:
            writer.write(("\r\n".join(headers) + "\r\n\r\n").encode() + body)
            await writer.drain()
            raw = await reader.read(-1)
        finally:
            writer.close()
        head, _, text = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
        location = ""
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "set-cookie":
                key, _, rest = value.strip().partition("=")
                self.cookies[key] = rest.split(";", 1)[0]
            elif name.lower() == "location":
                location = value.strip()
        return status, text.decode("utf-8", "replace"), location


@dataclass
class Tally:
    latencies: list[float] = field(default_factory=list)
    answers: int = 0
    failures: dict[int, int] = field(default_factory=dict)
    confirmed: set[tuple[str, int]] = field(default_factory=set)

    def fail(self, status: int) -> None:
        self.failures[status] = self.failures.get(status, 0) + 1

    def merge(self, other: "Tally") -> None:
        self.latencies += other.latencies
        self.answers += other.answers
        for status, n in other.failures.items():
            self.failures[status] = self.failures.get(status, 0) + n
        self.confirmed |= other.confirmed


def answer_confirmed(status: int, page: str, position: str, location: str = "") -> bool:
    """Whether the reply to an answer's POST confirms it: the next question's page (200 with another position:
    a refused answer comes back on its own question), or, after the last answer, the redirect to the completion
    page (any other redirect is a refusal)."""
    if status == 302:
        return location.rstrip("/").endswith("/done")
    shown = FORM.search(page) if status == 200 else None
    return shown is not None and shown.group(1) != position


async def _answering(browser: Browser, pid: str, tally: Tally, until: float, think: tuple[float, float] | None,
                     first_wait: float = 0.0) -> bool:
    """One participant: open the link, then answer until ``until``; True when they answered every question."""
    await asyncio.sleep(first_wait)
    status, _, _ = await browser.request("GET", f"/s/{SLUG}/?PROLIFIC_PID={pid}")
    if status != 302:
        tally.fail(status)
        return True
    status, page, _ = await browser.request("GET", f"/s/{SLUG}/question/")
    while (form := FORM.search(page)) is not None:
        if think:
            await asyncio.sleep(random.uniform(*think))
        if time.monotonic() >= until:
            return False
        position, item, token = form.groups()
        start = time.monotonic()
        status, page, location = await browser.request("POST", f"/s/{SLUG}/question/", {
            "csrfmiddlewaretoken": browser.cookies.get("csrftoken", ""), "step": "item", "position": position,
            "item": item, "token": token, "value": "50", "client_time_ms": "900"})
        if not answer_confirmed(status, page, position, location):
            tally.fail(status)
            status, page, _ = await browser.request("GET", f"/s/{SLUG}/question/")
            continue
        tally.confirmed.add((pid, int(position)))
        if status == 302:  # the last answer: on to the completion page
            status, page, _ = await browser.request("GET", location)
        tally.latencies.append(time.monotonic() - start)
        tally.answers += 1
        if status not in (200, 302):
            tally.fail(status)
    return True


async def saturate_platform(host: str, port: int, pids: list[str], clients: int, seconds: float) -> Tally:
    tally, queue = Tally(), pids
    until = time.monotonic() + seconds

    async def client() -> None:
        while queue and time.monotonic() < until:
            await _answering(Browser(host, port), queue.pop(), tally, until, None)

    await asyncio.gather(*(client() for _ in range(clients)))
    if not queue:
        print("  (ran out of pledged participants: raise --saturate-pool)")
    # a participant interrupted mid-way is not resumed: the next round takes fresh ones
    return tally


async def _bare_answer(browser: Browser, tally: Tally) -> None:
    """One "answer" of the ceiling: one request to the bare view."""
    start = time.monotonic()
    status, _, _ = await browser.request("GET", "/bench/bare/")
    if status == 200:
        tally.latencies.append(time.monotonic() - start)
        tally.answers += 1
    else:
        tally.fail(status)


async def saturate_bare(host: str, port: int, clients: int, seconds: float) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds

    async def client() -> None:
        browser = Browser(host, port)
        while time.monotonic() < until:
            await _bare_answer(browser, tally)

    await asyncio.gather(*(client() for _ in range(clients)))
    return tally


async def with_think_time(host: str, port: int, pids: list[str], think: tuple[float, float],
                          seconds: float) -> Tally:
    tally = Tally()
    until = time.monotonic() + seconds
    await asyncio.gather(*(_answering(Browser(host, port), pid, tally, until, think, random.uniform(0, think[1]))
                           for pid in pids))
    return tally


async def bare_with_think_time(host: str, port: int, people: int, think: tuple[float, float],
                               seconds: float) -> Tally:
    """The ceiling under the crowd's load: as many people, thinking as long, each answer one bare request."""
    tally = Tally()
    until = time.monotonic() + seconds

    async def person() -> None:
        browser = Browser(host, port)
        await asyncio.sleep(random.uniform(0, think[1]))
        while True:
            await asyncio.sleep(random.uniform(*think))
            if time.monotonic() >= until:
                return
            await _bare_answer(browser, tally)

    await asyncio.gather(*(person() for _ in range(people)))
    return tally


async def warm_up(host: str, port: int, clients: int, limit: float = 300) -> float:
    """Wait until a batch of ``clients`` simultaneous requests all come back within 1 s (every worker has
    imported the application); the time it happened."""
    deadline = time.monotonic() + limit
    async def one() -> float:
        start = time.monotonic()
        status, _, _ = await Browser(host, port).request("GET", "/bench/bare/")
        return time.monotonic() - start if status == 200 else float("inf")

    while time.monotonic() < deadline:
        if max(await asyncio.gather(*(one() for _ in range(clients)))) < 1.0:
            return time.monotonic()
    raise RuntimeError("the server's workers did not become ready")


# --- where an answer's time goes: the same flow in this process (django.test.Client), under cProfile ----
HOST = "127.0.0.1"  # in ALLOWED_HOSTS of the bench's settings
WARM_UP = 10  # answers first, unmeasured: templates compiled, URL patterns and the connection ready
# A function in these files counts its own time in the category (first match); the platform's files count as
# its own code; any other function (Python's library, django/utils, builtins, …) counts for its callers.
CATEGORIES: list[tuple[str, tuple[str, ...]]] = [
    ("templates (django/template)", ("/django/template/", "/django/templatetags/")),
    ("forms (django/forms)", ("/django/forms/",)),
    ("ORM + database (django/db, driver)", ("/django/db/", "'sqlite3.", "psycopg")),
    ("sessions (contrib/sessions, signing)", ("/django/contrib/sessions/", "/django/core/signing.py")),
    ("request handling + middleware", ("/django/core/handlers/", "/django/middleware/", "/django/http/",
                                       "/django/urls/", "/django/views/", "/django/contrib/auth/",
                                       "/django/contrib/messages/", "/whitenoise/")),
    ("test client (not served by gunicorn)", ("/django/test/", "/bench/participants.py")),
]
OWN_CODE = "own code (surveys/, config/; bench/bare_site.py)"


@dataclass
class Cost:
    """What answers cost in this process: wall and CPU time, SQL statements by verb, and (if given) a profile."""
    profiler: cProfile.Profile | None = None
    answers: int = 0
    wall: float = 0.0
    cpu: float = 0.0
    statements: Counter = field(default_factory=Counter)

    def _count(self, execute: Callable, sql: str, params: Any, many: bool, context: dict) -> Any:
        self.statements[sql.lstrip().split(None, 1)[0].upper()] += 1
        return execute(sql, params, many, context)

    @contextmanager
    def answer(self) -> Iterator[None]:
        from django.db import connection

        wall, cpu = time.perf_counter(), time.process_time()
        with connection.execute_wrapper(self._count):
            if self.profiler:
                self.profiler.enable()
            try:
                yield
            finally:
                if self.profiler:
                    self.profiler.disable()
        self.wall += time.perf_counter() - wall
        self.cpu += time.process_time() - cpu
        self.answers += 1

    def per_answer(self, value: float) -> float:
        return value / self.answers if self.answers else float("nan")


def _client() -> Any:
    from django.test import Client

    return Client(HTTP_HOST=HOST, enforce_csrf_checks=True)  # CSRF checked, as by the server


class PlatformFlow:
    """Pledged participants (one pledged when the last has answered everything) answering the demo study as
    ``_answering`` does: an answer is the POST (form-encoded, as a browser sends it) and the next page."""

    def __init__(self, prefix: str) -> None:
        self.prefix, self.entered, self.client, self.page = prefix, 0, _client(), ""

    def _enter(self) -> None:
        pid = pledge_participants(f"{self.prefix}{self.entered:04d}x", 1)[0]
        self.entered += 1
        self.client = _client()
        self.client.get(f"/s/{SLUG}/?PROLIFIC_PID={pid}")
        self.page = self.client.get(f"/s/{SLUG}/question/").content.decode()

    def answer(self, cost: Cost) -> None:
        while (form := FORM.search(self.page)) is None:
            self._enter()
        position, item, token = form.groups()
        body = urlencode({"csrfmiddlewaretoken": self.client.cookies["csrftoken"].value, "step": "item",
                          "position": position, "item": item, "token": token, "value": "50",
                          "client_time_ms": "900"})
        with cost.answer():
            posted = self.client.post(f"/s/{SLUG}/question/", body,
                                      content_type="application/x-www-form-urlencoded")
            page = self.client.get(posted["Location"]) if posted.status_code == 302 else posted
        if (not answer_confirmed(posted.status_code, posted.content.decode(), position, posted.get("Location", ""))
                or page.status_code != 200):
            raise RuntimeError(f"profile: answer refused ({posted.status_code}, then {page.status_code})")
        self.page = page.content.decode()


class BareFlow:
    """The ceiling's answer: one request to the bare view, in one session."""

    def __init__(self) -> None:
        self.client = _client()

    def answer(self, cost: Cost) -> None:
        with cost.answer():
            status = self.client.get("/bench/bare/").status_code
        if status != 200:
            raise RuntimeError(f"profile: the bare view answered {status}")


def measure(flow: PlatformFlow | BareFlow, answers: int) -> tuple[Cost, Cost]:
    """(without the profiler, under cProfile): ``answers`` answers each, after a few unmeasured ones."""
    for _ in range(WARM_UP):
        flow.answer(Cost())
    plain, profiled = Cost(), Cost(cProfile.Profile())
    for cost in (plain, profiled):
        for _ in range(answers):
            flow.answer(cost)
    return plain, profiled


def _category(func: Func) -> str | None:
    """The category of a function's own time by its file (a builtin by its name); None: its callers'."""
    filename, _, name = func
    where = name if filename == "~" else filename.replace(os.sep, "/")
    for category, marks in CATEGORIES:
        if any(mark in where for mark in marks):
            return category
    own = where.startswith(f"{ROOT}/") and "/site-packages/" not in where
    return OWN_CODE if own else None


def _own_function(func: Func) -> str | None:
    return _where(func) if _category(func) == OWN_CODE else None


def ms_per_answer(costs: tuple[Cost, Cost], label: Callable[[Func], str | None]) -> dict[str, float]:
    """ms per answer by label: its share of the profile × the wall time per answer without the profiler."""
    plain, profiled = costs
    seconds = fold(pstats.Stats(profiled.profiler).stats, label)
    total = sum(seconds.values()) or 1.0
    return {name: 1000 * plain.per_answer(plain.wall) * s / total for name, s in seconds.items()}


def _table_rows(costs: list[tuple[Cost, Cost]]) -> Iterator[str]:
    shares = [ms_per_answer(cost, _category) for cost in costs]
    totals = [sum(share.values()) or 1.0 for share in shares]
    names = [c for c, _ in CATEGORIES[:-1]] + [OWN_CODE, UNATTRIBUTED, CATEGORIES[-1][0]]
    for name in names:
        if name == UNATTRIBUTED and max(share.get(name, 0) for share in shares) < 0.01:
            continue  # the usual case: every function had a categorised caller
        yield f"  {name:<50}" + "".join(f"{share.get(name, 0):9.2f} ms {100 * share.get(name, 0) / total:3.0f}%"
                                        for share, total in zip(shares, totals))


def _biggest_own_functions(costs: tuple[Cost, Cost], n: int = 8) -> Iterator[str]:
    """The platform's functions costing most, each with what it calls down to the next platform function."""
    by_function = ms_per_answer(costs, _own_function)
    by_function.pop(UNATTRIBUTED, None)  # the test client and Django's handler around the first middleware
    for name, ms in sorted(by_function.items(), key=lambda kv: -kv[1])[:n]:
        yield f"    {ms:6.2f} ms  {name}"


def _where(func: Func) -> str:
    filename, line, name = func
    path = filename.replace(os.sep, "/")
    return name if filename == "~" else f"{path.removeprefix(f'{ROOT}/')}:{line} {name}"


def _summary(name: str, cost: Cost) -> str:
    verbs = ", ".join(f"{verb} {cost.per_answer(n):.1f}" for verb, n in cost.statements.most_common())
    return (f"  {name:<10} {cost.per_answer(sum(cost.statements.values())):5.1f} SQL statements per answer "
            f"({verbs}); CPU {1000 * cost.per_answer(cost.cpu):5.1f} ms, wall "
            f"{1000 * cost.per_answer(cost.wall):5.1f} ms per answer")


def print_profile(answers: int, prefix: str) -> None:
    """SQL statements, CPU and wall time per answer, and where the time goes, for the platform and the bare view."""
    from django.db import connection

    platform, bare = measure(PlatformFlow(prefix), answers), measure(BareFlow(), answers)
    connection.close()
    print(f"profile: {answers} answers each through django.test.Client in this process (server stopped; "
          f"times without the profiler):")
    print(_summary("platform", platform[0]))
    print(_summary("bare view", bare[0]))
    print(f"  {'where the time goes (share of the profile × wall)':<50} {'platform':>16} {'bare view':>16}")
    for row in _table_rows([platform, bare]):
        print(row)
    print("  the platform's costliest functions, each with what it calls down to the next platform function:")
    for row in _biggest_own_functions(platform):
        print(row)


# --- server and database ------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the server did not listen on port {port}")


def pledge_participants(prefix: str, n: int) -> list[str]:
    """``n`` participants of the demo study, already past the pledge with 30 random slots each."""
    from django.utils import timezone

    from surveys.models import Assignment, Participant, Study

    study = Study.objects.get(slug=SLUG)
    items = list(study.main_items())
    per = min(30, len(items))
    now = timezone.now()
    pids = [f"{prefix}{i:05d}" for i in range(n)]
    people = Participant.objects.bulk_create([
        Participant(study=study, prolific_pid=pid, consented_at=now, instructions_read_at=now, pledged_at=now,
                    user_agent="hedgelab-bench") for pid in pids])
    people = list(Participant.objects.filter(study=study, prolific_pid__in=pids))
    rng = random.Random(1)
    Assignment.objects.bulk_create([Assignment(participant=p, item=item, position=k + 1)
                                    for p in people for k, item in enumerate(rng.sample(items, per))],
                                   batch_size=5000)
    return pids


def database_check(prefix: str, confirmed: set[tuple[str, int]]) -> tuple[int, int, int, int]:
    """(stored, confirmed, lost, duplicated) for the bench's participants, straight from the database."""
    from django.db.models import Count

    from surveys.models import Response

    rows = list(Response.objects.filter(participant__prolific_pid__startswith=prefix)
                .values_list("participant__prolific_pid", "assignment__position"))
    stored = set(rows)
    dup = (Response.objects.filter(participant__prolific_pid__startswith=prefix)
           .values("participant_id", "item_id").annotate(n=Count("pk")).filter(n__gt=1).count())
    return len(rows), len(confirmed), len(confirmed - stored), dup + (len(rows) - len(stored))


def cleanup(prefix: str) -> None:
    from django.db import connection

    from surveys.models import Assignment, Participant, Response

    Response.objects.filter(participant__prolific_pid__startswith=prefix).delete()
    Assignment.objects.filter(participant__prolific_pid__startswith=prefix).delete()
    Participant.objects.filter(prolific_pid__startswith=prefix).delete()
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS bench_bare_answer")


def pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def line(name: str, tally: Tally, seconds: float) -> float:
    rate = tally.answers / seconds
    print(f"  {name:<34} {rate:8.1f} answers/s   p50 {pct(tally.latencies, .5):7.1f} ms   "
          f"p99 {pct(tally.latencies, .99):7.1f} ms   failed requests: {sum(tally.failures.values())}"
          f"{' ' + str(tally.failures) if tally.failures else ''}")
    return rate


def main() -> None:
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--participants", type=int, default=1000, help="simulated people with think time")
    parser.add_argument("--think", default="3,10", help="seconds of thought before each answer: MIN,MAX")
    parser.add_argument("--duration", type=float, default=90, help="seconds of the think-time run")
    parser.add_argument("--concurrency", type=int, default=16, help="clients without pause (ceiling, platform)")
    parser.add_argument("--saturate", type=float, default=20, help="seconds of each saturation run (0: skip)")
    parser.add_argument("--rounds", type=int, default=4, help="saturation runs alternate in this many rounds")
    parser.add_argument("--saturate-pool", type=int, default=600, help="pledged participants for the platform run")
    parser.add_argument("--workers", type=int, default=4, help="gunicorn worker processes")
    parser.add_argument("--threads", type=int, default=2, help="threads per gunicorn worker")
    parser.add_argument("--crowd-ceiling", action=argparse.BooleanOptionalAction, default=True,
                        help="after the think-time run, the same crowd on the bare view")
    parser.add_argument("--profile", type=int, default=200,
                        help="answers profiled in this process, platform and bare view alike (0: skip)")
    parser.add_argument("--database-url", help="PostgreSQL database (default: a scratch SQLite file)")
    args = parser.parse_args()
    think = tuple(float(x) for x in args.think.split(","))

    var = Path(tempfile.mkdtemp(prefix="hedgelab-participants-bench-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "CACHE_URL"))}
    # production mode (DEBUG off) over plain HTTP on loopback, as `make run DEBUG=0`
    env |= {"HEDGELAB_VAR_DIR": str(var), "DEBUG": "0", "SECRET_KEY": "bench-" + os.urandom(24).hex(),
            "ALLOWED_HOSTS": "127.0.0.1", "SECURE_SSL_REDIRECT": "0", "SESSION_COOKIE_SECURE": "0",
            "CSRF_COOKIE_SECURE": "0", "ENTRY_MAX_PER_CLIENT": "0", "LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "bench.bare_site", "PYTHONPATH": str(ROOT)}
    env["DATABASE_URL"] = args.database_url or f"sqlite:///{var / 'db.sqlite3'}"
    os.environ.update(env)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    subprocess.run([sys.executable, "manage.py", "load_demo"], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"], cwd=ROOT, env=env,
                   check=True)  # the release step of a deployment

    import django

    django.setup()
    from django.conf import settings
    from django.db import connection

    from bench.bare_site import create_table_sql

    with connection.cursor() as cursor:
        cursor.execute(create_table_sql(connection.vendor))
    prefix = f"B{int(time.time()) % 100000:05d}x"
    pool = pledge_participants(prefix + "s", args.saturate_pool if args.saturate else 0)
    people = pledge_participants(prefix + "t", args.participants)
    connection.close()

    port = free_port()
    db = settings.DATABASES["default"]
    gunicorn = Path(sys.executable).with_name("gunicorn")
    log = (var / "gunicorn.log").open("w")
    server = subprocess.Popen([str(gunicorn), "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers",
                               str(args.workers), "--threads", str(args.threads), "--timeout", "120",
                               "--backlog", "2048"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        started = time.monotonic()
        wait_for(port)
        host = "127.0.0.1"
        ready = asyncio.run(warm_up(host, port, 2 * args.workers))
        print(f"server ready (every worker answered within 1 s) {ready - started:.1f} s after it was started")
        load = os.getloadavg()
        print(f"participants bench: gunicorn {args.workers} workers × {args.threads} threads, DEBUG off, "
              f"{db['ENGINE'].rsplit('.', 1)[-1]} (CONN_MAX_AGE {db.get('CONN_MAX_AGE')}), "
              f"{os.cpu_count()} cores, load average before {load[0]:.1f}")
        if args.saturate:
            # alternated in rounds, so that the machine's other load weighs on both alike
            bare, platform, step = Tally(), Tally(), args.saturate / args.rounds
            for _ in range(args.rounds):
                bare.merge(asyncio.run(saturate_bare(host, port, args.concurrency, step)))
                platform.merge(asyncio.run(saturate_platform(host, port, pool, args.concurrency, step)))
            print(f"{args.concurrency} clients without pause, {args.saturate:g} s each "
                  f"(alternated in {args.rounds} rounds):")
            ceiling = line("ceiling: bare view (session+INSERT)", bare, args.saturate)
            figure = line("platform: answer POST → next page", platform, args.saturate)
            print(f"  ratio platform / ceiling: {figure / ceiling:.2f}  (goal ≥ 0.70)")
        started = time.monotonic()
        crowd = asyncio.run(with_think_time(host, port, people, think, args.duration))
        elapsed = time.monotonic() - started
        print(f"{args.participants} participants thinking {think[0]:g}–{think[1]:g} s, {args.duration:g} s:")
        line("platform: answer POST → next page", crowd, elapsed)
        if args.crowd_ceiling:
            started = time.monotonic()
            bare_crowd = asyncio.run(bare_with_think_time(host, port, args.participants, think, args.duration))
            line("ceiling: bare view (session+INSERT)", bare_crowd, time.monotonic() - started)
        print(f"  (goal: p99 < 150 ms, nothing lost; load average after {os.getloadavg()[0]:.1f})")
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    confirmed = crowd.confirmed | (platform.confirmed if args.saturate else set())
    stored, sent, lost, duplicated = database_check(prefix, confirmed)
    print(f"database check: {sent} answers confirmed by the server, {stored} stored, {lost} lost, "
          f"{duplicated} duplicated")
    if args.profile:
        print_profile(args.profile, prefix + "p")
    if args.database_url:
        cleanup(prefix)
    errors = [l for l in (var / "gunicorn.log").read_text().splitlines() if "database is locked" in l]
    if errors:
        print(f"server log: {len(errors)} 'database is locked' lines")
    shutil.rmtree(var, ignore_errors=True)


if __name__ == "__main__":
    main()
