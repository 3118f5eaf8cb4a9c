"""The production layout, end to end: the Procfile's own commands start two web processes (gunicorn, DEBUG off),
two Celery workers and the beat process on PostgreSQL + Redis. At the same time, participants answer through
both web processes (requests alternate between them) while a model run created through the API proceeds on the
workers, and beat's periodic Prolific task notices a returned participant. Nothing is lost or duplicated.

Needs PostgreSQL (DATABASE_URL; the processes share pytest's test database) and Redis (E2E_REDIS_URL, else
TEST_REDIS_URL's server with database 11, else redis://127.0.0.1:6379/11); skipped without PostgreSQL.
"""
from __future__ import annotations

import os
import random
import re
import secrets
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests
from django.db import connection
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun, ModelResponse
from prolific.models import ProlificStudy
from stub_openai import Reply, StubOpenAI, make_endpoint
from stub_prolific import StubProlific
from surveys.assignment import assign
from surveys.importers import import_items
from surveys.models import Participant, Response, Study

pytestmark = [pytest.mark.deploy, pytest.mark.broker]
ROOT = Path(__file__).resolve().parent.parent
PARTICIPANTS, RUN_ITEMS, BOOT_TIMEOUT, WORK_TIMEOUT = 4, 40, 60, 90
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
SLOT = re.compile(r'name="position" value="(\d+)".*?name="item" value="(\d+)".*?name="token" value="(\w*)"', re.S)


def procfile() -> dict[str, str]:
    roles = {}
    for line in (ROOT / "Procfile").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            role, command = line.split(":", 1)
            roles[role.strip()] = command.strip()
    return roles


def redis_url() -> str:
    if os.environ.get("E2E_REDIS_URL"):
        return os.environ["E2E_REDIS_URL"]
    base = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
    return base.rsplit("/", 1)[0] + "/11"  # a database of this test's own


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Role:
    """One Procfile role as a subprocess (its own process group), logging to a file."""

    def __init__(self, role: str, env: dict[str, str], log: Path):
        self.role, self.log_path = role, log
        self.log = open(log, "w")
        self.proc = subprocess.Popen(["bash", "-c", "exec " + procfile()[role]], cwd=ROOT, env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, 15)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait(timeout=5)
        self.log.close()


def wait_for(condition, timeout: float, what: str, roles: list[Role]) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        dead = [r for r in roles if r.proc.poll() is not None]
        if dead:
            raise AssertionError(f"{dead[0].role} exited:\n{dead[0].text()[-3000:]}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


def take_part(bases: list[str], pid: str, errors: list[str]) -> None:
    """One participant through the whole flow, each request to the next web process in turn."""
    session = requests.Session()
    turn = iter(range(10_000))

    def url(path: str) -> str:
        return bases[next(turn) % len(bases)] + path

    def post(path: str, data: dict) -> requests.Response:
        page = session.get(url(path), timeout=30)
        token = CSRF.search(page.text)
        assert token, f"{pid}: no form on {path}: {page.status_code} {page.text[:300]}"
        return session.post(url(path), {**data, "csrfmiddlewaretoken": token.group(1)}, timeout=30,
                            headers={"Referer": page.url})

    try:
        first = session.get(url(f"/s/e2e/?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X{pid}"), timeout=30)
        assert first.status_code == 200 and "/consent/" in first.url, first.text[:300]
        post("/s/e2e/consent/", {"step": "consent", "choice": "agree"})
        post("/s/e2e/instructions/", {"step": "instructions"})
        post("/s/e2e/pledge/", {"step": "pledge", "pledge": "on"})
        for _ in range(40):
            page = session.get(url("/s/e2e/question/"), timeout=30)
            if "/done/" in page.url:
                break
            slot = SLOT.search(page.text)
            token = CSRF.search(page.text)
            assert slot and token, f"{pid}: unexpected page {page.url}: {page.text[:300]}"
            answer = session.post(url("/s/e2e/question/"), {
                "step": "item", "position": slot.group(1), "item": slot.group(2), "token": slot.group(3),
                "client_time_ms": "900",
                "value": str(random.choice(range(0, 101, 5))), "csrfmiddlewaretoken": token.group(1)},
                timeout=30, headers={"Referer": page.url})
            assert answer.status_code == 200, answer.text[:300]
        else:
            raise AssertionError(f"{pid} never reached the end")
    except Exception as exc:  # reported by the main thread
        errors.append(f"{pid}: {exc}")


@pytest.fixture
def postgres(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("the scale-out test needs PostgreSQL: set DATABASE_URL=postgres://… (CI does)")
    return connection.settings_dict


def test_two_web_processes_two_workers_and_beat_lose_nothing(postgres, tmp_path, belem_dir, django_user_model):
    import redis

    t0 = time.monotonic()
    marks: dict[str, float] = {}
    broker = redis_url()
    try:
        redis.Redis.from_url(broker, socket_connect_timeout=3).flushdb()  # this test's own database
    except redis.RedisError as exc:
        raise AssertionError(f"no Redis at {broker} ({exc}): set E2E_REDIS_URL or TEST_REDIS_URL") from None

    study = Study.objects.create(slug="e2e", title="Scale-out", status="live")
    import_items(study, belem_dir / "non-verifiable.csv")
    marks["setup"] = time.monotonic() - t0
    user = Token.objects.create(user=django_user_model.objects.create_superuser("e2e", password="pw")).key
    returning = Participant.objects.create(study=study, prolific_pid="RETURNER", pledged_at="2026-01-01T00:00Z")
    assign(returning)

    cfg = postgres
    db_url = f"postgres://{cfg['USER']}:{cfg['PASSWORD'] or ''}@{cfg['HOST'] or '127.0.0.1'}:{cfg['PORT'] or 5432}/{cfg['NAME']}"
    with StubOpenAI() as openai_stub, StubProlific() as prolific_stub:
        openai_stub.default = Reply.answer("70", delay=0.05)
        make_endpoint(openai_stub, name="e2e-stub", max_concurrency=4)
        link = ProlificStudy.objects.create(study=study, prolific_id="", review_policy="automatic")
        remote = prolific_stub.route("POST", "/api/v1/studies/", {}, {
            "name": "e2e", "description": "", "external_study_url": study.participant_link(),
            "prolific_id_option": "url_parameters", "total_available_places": 10, "estimated_completion_time": 8,
            "reward": 100, "completion_codes": [{"code": "X", "code_type": "COMPLETED",
                                                 "actions": [{"action": "MANUALLY_REVIEW"}]}]})[1]
        ProlificStudy.objects.filter(pk=link.pk).update(prolific_id=remote["id"], prolific_status="ACTIVE")
        prolific_stub.add_submission(remote["id"], "RETURNER", status="RETURNED")

        ports = [free_port(), free_port()]
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CELERY_", "ELICITATION_", "PROLIFIC_"))}
        env.update(
            PATH=f"{Path(sys.executable).parent}:{env.get('PATH', '')}", DJANGO_SETTINGS_MODULE="config.settings",
            DATABASE_URL=db_url, CELERY_BROKER_URL=broker, DEBUG="0", SECRET_KEY=secrets.token_urlsafe(40),
            ALLOWED_HOSTS="127.0.0.1,localhost", SECURE_SSL_REDIRECT="0", SECURE_HSTS_SECONDS="0",
            SESSION_COOKIE_SECURE="0", CSRF_COOKIE_SECURE="0", HEDGELAB_VAR_DIR=str(tmp_path / "var"),
            STATIC_ROOT=str(tmp_path / "static"), SITE_URL=f"http://127.0.0.1:{ports[0]}", HOST="127.0.0.1",
            WEB_CONCURRENCY="1", WEB_THREADS="4", WORKER_CONCURRENCY="2", ELICITATION_POLL_SECONDS="0.05",
            PROLIFIC_API_URL=prolific_stub.base_url, PROLIFIC_API_TOKEN=prolific_stub.token,
            PROLIFIC_SYNC_SECONDS="2", LOG_LEVEL="INFO", PYTHONUNBUFFERED="1")
        # the release step, while the processes boot (the manifest is read at the first page, not at start)
        collect = subprocess.Popen(["bash", "-c", "exec python manage.py collectstatic --noinput -v0"], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        roles = [Role("web", {**env, "PORT": str(port)}, tmp_path / f"web{n}.log") for n, port in enumerate(ports, 1)]
        roles += [Role("worker", {**env, "WORKER_ID": str(n)}, tmp_path / f"worker{n}.log") for n in (1, 2)]
        roles.append(Role("beat", env, tmp_path / "beat.log"))
        bases = [f"http://127.0.0.1:{port}" for port in ports]
        try:
            def healthy() -> bool:
                try:
                    return all(requests.get(f"{b}/healthz", timeout=2).json()["database"] == "ok" for b in bases)
                except (requests.RequestException, ValueError):
                    return False

            wait_for(healthy, BOOT_TIMEOUT, "both web processes to answer /healthz", roles)
            marks["web up"] = time.monotonic() - t0
            output, _ = collect.communicate(timeout=120)
            assert collect.returncode == 0, output
            marks["collectstatic"] = time.monotonic() - t0
            auth = {"Authorization": f"Token {user}"}
            keys = list(study.main_items().order_by("id").values_list("key", flat=True)[:RUN_ITEMS])
            errors: list[str] = []
            people = [threading.Thread(target=take_part, args=(bases, f"E2EPID{n:02d}", errors))
                      for n in range(PARTICIPANTS)]
            for thread in people:
                thread.start()
            made = requests.post(f"{bases[0]}/api/runs/", json={"study": "e2e", "endpoint": "e2e-stub",
                                                                "items": keys, "start": True},
                                 headers=auth, timeout=30)
            assert made.status_code == 201, made.text
            run_id = made.json()["id"]

            def run_done() -> bool:
                data = requests.get(f"{bases[1]}/api/runs/{run_id}/progress/", headers=auth, timeout=10).json()
                return data["status"] != "running"

            wait_for(run_done, WORK_TIMEOUT, "the model run to finish", roles)
            marks["run done"] = time.monotonic() - t0
            for thread in people:
                thread.join(timeout=WORK_TIMEOUT)
            marks["participants done"] = time.monotonic() - t0
            assert not errors, "\n".join(errors)
            wait_for(lambda: Participant.objects.get(pk=returning.pk).status == "returned", 30,
                     "beat's Prolific task to mark the returned participant", roles)
            marks["beat's sync seen"] = time.monotonic() - t0
            print("scale-out timings (s since start):", {k: round(v, 1) for k, v in marks.items()})
            worker_logs = [r.text() for r in roles if r.role == "worker"]
        finally:
            for role in roles:
                role.stop()

        run = ElicitationRun.objects.get(pk=run_id)
        assert run.status == "completed", run.status_reason
        answers = ModelResponse.objects.filter(run=run)
        assert answers.count() == RUN_ITEMS and set(answers.values_list("status", flat=True)) == {"ok"}
        check, *answered = openai_stub.requests  # the endpoint's pre-flight check when the run was created
        assert check.body["max_tokens"] == 1
        asked = [r.prompt_text for r in answered]
        assert len(asked) == len(set(asked)) == RUN_ITEMS  # each item asked exactly once over both workers
        assert all("elicitation.elicit_item" in log and "succeeded" in log for log in worker_logs), \
            "both workers must have answered some items"
        for person in Participant.objects.filter(prolific_pid__startswith="E2EPID"):
            assert person.status == "completed", person.prolific_pid
            assert person.responses.count() == person.assignments.count() == 30
        assert Participant.objects.filter(prolific_pid__startswith="E2EPID").count() == PARTICIPANTS
        assert Response.objects.filter(item__study=study).count() == PARTICIPANTS * 30
        assert ProlificStudy.objects.get(pk=link.pk).synced_at is not None
        assert not returning.assignments.filter(response__isnull=False).exists()
