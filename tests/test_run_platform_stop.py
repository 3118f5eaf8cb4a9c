"""`make run`'s Ctrl-C (bin/run-platform) with a request in flight: the request is answered and gunicorn stops its
workers in order, instead of their master killing them after 10 s ("Worker … was sent SIGKILL! Perhaps out of
memory?"). Real processes: gunicorn and a Celery worker on a private SQLite database (issue 23, point 13)."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from private_services import free_port

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not (ROOT / ".venv" / "bin" / "gunicorn").exists(),
                                reason="bin/run-platform runs .venv/bin/gunicorn (make install)")


def slow_request(port: int) -> socket.socket:
    """A request whose first header lines are sent; a worker thread holds it until the rest arrives."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=60)
    conn.sendall(b"GET /admin/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return conn


def test_ctrl_c_lets_a_request_in_flight_finish(tmp_path):
    env = dict(os.environ, HEDGELAB_VAR_DIR=str(tmp_path), STOP_GRACE="30", DEBUG="1")
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    out = open(tmp_path / "run.out", "w")
    run = subprocess.Popen(["bash", "bin/run-platform", "127.0.0.1", str(port)], cwd=ROOT, env=env, stdout=out,
                           stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while "Press Ctrl-C" not in (tmp_path / "run.out").read_text():
            assert run.poll() is None and time.monotonic() < deadline, (tmp_path / "run.out").read_text()
            time.sleep(0.5)
        conn = slow_request(port)
        time.sleep(1)
        os.killpg(run.pid, signal.SIGINT)  # Ctrl-C: the terminal signals the script's whole process group
        time.sleep(12)  # longer than gunicorn's former 10 s graceful timeout
        conn.sendall(b"Connection: close\r\n\r\n")
        reply = conn.recv(200).decode("latin-1")
        conn.close()
        assert run.wait(timeout=90) == 0
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    web_log = (tmp_path / "web.log").read_text()
    assert reply.startswith("HTTP/1.1 200"), reply
    assert "SIGKILL" not in web_log and "Handling signal: term" in web_log, web_log[-2000:]


def test_ctrl_c_stops_cleanly_even_when_started_with_ctrl_c_ignored(tmp_path):
    """`make run` started where SIGINT is ignored (a background job of a non-interactive shell, an agent's
    harness): bash cannot trap a signal ignored at its start, so the script's own Ctrl-C handler was skipped, the
    worker stopped on the signal and the script said "stopped by itself (exit 1)" and failed make (issue 32
    point 10). bin/run-platform restores the default handling first, so the stop is the ordinary one: exit 0."""
    env = dict(os.environ, HEDGELAB_VAR_DIR=str(tmp_path), STOP_GRACE="30", DEBUG="1")
    env.pop("DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    port = free_port()
    out = open(tmp_path / "run.out", "w")
    run = subprocess.Popen(["bash", "bin/run-platform", "127.0.0.1", str(port)], cwd=ROOT, env=env, stdout=out,
                           stderr=subprocess.STDOUT, start_new_session=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 120
        while "Press Ctrl-C" not in (tmp_path / "run.out").read_text():
            assert run.poll() is None and time.monotonic() < deadline, (tmp_path / "run.out").read_text()
            time.sleep(0.5)
        os.killpg(run.pid, signal.SIGINT)
        code = run.wait(timeout=90)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    said = (tmp_path / "run.out").read_text()
    assert code == 0, said[-1500:]
    assert "stopped." in said and "stopped by itself" not in said, said[-1500:]
