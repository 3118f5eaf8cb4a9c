"""Real processes for fault tests and bench/faults.py: a private PostgreSQL (initdb + pg_ctl into a temporary
directory, on a free port), a private Redis, the web server (``manage.py runserver``) on that database, and
a participant that walks the study over real HTTP. Never the shared servers: everything here can be
stopped and restarted at will, and is removed afterwards.
"""
from __future__ import annotations

import http.cookiejar
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from stub_openai import allow_loopback

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {timeout:g} s")


def postgres_available() -> bool:
    return shutil.which("initdb") is not None and shutil.which("pg_ctl") is not None


class PrivatePostgres:
    """``with PrivatePostgres() as pg: pg.url("db")``; ``pg.stop()``, ``pg.start()``, ``pg.restart(down=0.5)``.
    As root, the server runs as the ``postgres`` user (initdb refuses root)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="hedgelab-pg-"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str) -> None:
        subprocess.run([*self._as, *args], check=True, capture_output=True, text=True, timeout=120)

    def __enter__(self) -> "PrivatePostgres":
        if self._as:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync")
        self.start()
        self._run("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", "hedgelab")
        return self

    def __exit__(self, *exc) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "stop")
        except subprocess.CalledProcessError:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, db: str = "hedgelab") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        options = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.dir} -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.log), "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, down: float = 0.5, mode: str = "fast") -> None:
        """Stop (ending every connection), stay down ``down`` seconds, start again."""
        self.stop(mode)
        time.sleep(down)
        self.start()


class PrivateRedis:
    """``redis-server`` on a free port, no persistence."""

    def __init__(self) -> None:
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "PrivateRedis":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def start(self) -> None:
        self.proc = subprocess.Popen(["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no",
                                      "--bind", "127.0.0.1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wait_for_port(self.port)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None


def django_env(database_url: str, var_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DATABASE_URL", "CELERY_", "CACHE_URL"))}
    return allow_loopback(env) | {"DATABASE_URL": database_url, "HEDGELAB_VAR_DIR": str(var_dir), "DEBUG": "1",
                  "DJANGO_SETTINGS_MODULE": "config.settings", "PYTHONUNBUFFERED": "1"} | extra


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True,
                            text=True, timeout=600)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


class WebServer:
    """``manage.py runserver`` (threaded, no autoreload) on a free port, with ``env``."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env, self.port = env, free_port()
        self.log = Path(env["HEDGELAB_VAR_DIR"]) / "web.log"
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> "WebServer":
        self.proc = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{self.port}",
                                      "--noreload"], cwd=ROOT, env=self.env, stdout=self.log.open("w"),
                                     stderr=subprocess.STDOUT)
        wait_for_port(self.port)
        return self

    def __exit__(self, *exc) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(15)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


POSITION = re.compile(r'name="position" value="(\d+)"')


def answer_confirmed(status: int, page: str, position: int | str, location: str = "") -> bool:
    """Whether the reply to an answer's POST for ``position`` confirms it: the next question's page (200 with
    another position: a refused answer comes back on its own question), or, after the last answer, the redirect
    to the completion page or to the questionnaire asked after the items (any other redirect is a refusal:
    already answered, not the current question)."""
    if status == 302:
        return location.rstrip("/").endswith(("/done", "/about-you/last"))
    shown = POSITION.search(page) if status == 200 else None
    return shown is not None and shown.group(1) != str(position)


#: The form each page before the questions posts (by the last part of its path).
ENTRY_STEPS = {"consent": {"step": "consent", "choice": "agree"}, "instructions": {"step": "instructions"},
               "pledge": {"step": "pledge", "pledge": "on"}}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


@dataclass
class Participant:
    """A participant over real HTTP (cookies, CSRF), who answers every question and, like the outage page,
    tries again after a refused or failed request. Records every HTTP status and each answer the server
    confirmed (``post_answer``)."""

    base: str
    slug: str
    pid: str
    pause: float = 0.0
    address: str = ""  # sent as X-Forwarded-For (a server with TRUSTED_PROXY_COUNT=1 sees it as the client)
    statuses: list[int] = field(default_factory=list)
    confirmed: list[int] = field(default_factory=list)  # positions whose answer the server confirmed
    bodies_500: list[str] = field(default_factory=list)
    first_refusal: str = ""  # the first other refusal (4xx): status, path and page title

    def __post_init__(self) -> None:
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar), _NoRedirect)

    def _request(self, path: str, data: dict | None = None) -> tuple[int, str, str]:
        if data is not None:
            token = next((c.value for c in self.jar if c.name == "csrftoken"), "")
            data = data | {"csrfmiddlewaretoken": token}
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        headers = {"Referer": self.base + path} | ({"X-Forwarded-For": self.address} if self.address else {})
        request = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with self.opener.open(request, timeout=60) as response:
                status, text, location = response.status, response.read().decode(), ""
        except urllib.error.HTTPError as exc:
            status, text, location = exc.code, exc.read().decode(errors="replace"), exc.headers.get("Location", "")
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            status, text, location = 0, repr(exc), ""
        self.statuses.append(status)
        if status >= 400 and status not in (500, 503) and not self.first_refusal:
            title = re.search(r"<title>(.*?)</title>", text, re.S)
            self.first_refusal = f"{status} {path}: {(title.group(1) if title else text[:120]).strip()}"
        if status == 500:
            self.bodies_500.append(text[:2000])
        return status, text, location

    def _until_ok(self, path: str, data: dict | None = None, tries: int = 120) -> tuple[int, str, str]:
        for _ in range(tries):
            status, text, location = self._request(path, data)
            if status in (200, 302):
                return status, text, location
            time.sleep(1.0)  # the calm page reloads itself after a few seconds
        raise RuntimeError(f"{self.pid}: {path} kept failing ({self.statuses[-5:]})")

    def follow(self, path: str, data: dict | None = None) -> tuple[int, str, str]:
        """Request ``path`` (a POST with ``data``), then GET each redirect's target as a browser does (which is
        how the page with the form sets the CSRF cookie): (status, page, the path it ended on)."""
        status, text, location = self._until_ok(path, data)
        for _ in range(10):
            if status != 302 or not location:
                break
            parts = urllib.parse.urlsplit(location)
            path = parts.path + (f"?{parts.query}" if parts.query else "")
            status, text, location = self._until_ok(path)
        return status, text, path

    def enter(self) -> None:
        """Open the study link and go where it leads, as a browser does: consent, read the instructions, sign
        the pledge — or, for a participant who already has (another browser with the same PID), nothing."""
        _, _, path = self.follow(f"/s/{self.slug}/?PROLIFIC_PID={self.pid}")
        for _ in range(len(ENTRY_STEPS) + 1):
            step = path.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
            if step not in ENTRY_STEPS:
                return
            _, _, path = self.follow(path.split("?", 1)[0], ENTRY_STEPS[step])

    def question(self) -> tuple[str, str, str] | None:
        """(position, item id, page token) of the current question, or None when there is none (done)."""
        status, text, location = self._until_ok(f"/s/{self.slug}/question/")
        position = re.search(r'name="position" value="(\d+)"', text)
        item = re.search(r'name="item" value="(\d+)"', text)
        token = re.search(r'name="token" value="(\w*)"', text)
        return (position.group(1), item.group(1), token.group(1)) if status == 200 and position and item and token \
            else None

    def post_answer(self, form: tuple[str, str, str], value: str = "50") -> bool:
        """Submit an answer to the question ``form`` (from :meth:`question`); whether the server confirmed it:
        with the next question's page (another position: a refused answer comes back on its own question) or,
        after the last, a redirect."""
        status, text, location = self._request(f"/s/{self.slug}/question/", {
            "step": "item", "position": form[0], "item": form[1], "token": form[2], "value": value,
            "client_time_ms": "900"})
        if answer_confirmed(status, text, form[0], location):
            self.confirmed.append(int(form[0]))
            return True
        return False

    def run(self, answers: int | None = None) -> None:
        """Enter, consent, read, pledge, answer (every question, or ``answers`` of them)."""
        self.enter()
        given = 0
        while answers is None or given < answers:
            form = self.question()
            if form is None:
                return
            time.sleep(self.pause)
            if self.post_answer(form):
                given += 1
