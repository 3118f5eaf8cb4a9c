"""`make run` (bin/run-platform): a taken port is said before anything starts, and the worker it starts is
the Procfile's worker command (bin/celery-worker: thread pool) with Celery beat embedded, so the elicitation
sweep and the Prolific sync run under the embedded default too."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from private_services import django_env, manage

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = str(Path(sys.executable).parent)


def listening_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    return sock


def test_a_taken_port_stops_run_platform_at_once_with_a_plain_message(tmp_path):
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        env = os.environ | {"VENV_BIN": VENV_BIN, "HEDGELAB_VAR_DIR": str(tmp_path)}
        done = subprocess.run(["bash", "bin/run-platform", "127.0.0.1", str(port)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr and f"PORT={port + 1}" in done.stderr
    assert "hedgelab is running" not in done.stdout
    assert not (tmp_path / "web.log").exists()  # nothing was started


def test_make_run_checks_the_port_before_setting_anything_up():
    with listening_socket() as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(["make", "--no-print-directory", "check-port", f"PORT={port}", f"PYTHON={sys.executable}"],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and f"port {port} on 127.0.0.1 is already in use" in done.stderr
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert subprocess.run(["make", "-s", "check-port", f"PORT={port}", f"PYTHON={sys.executable}"], cwd=ROOT,
                          timeout=60).returncode == 0
    planned = subprocess.run(["make", "--no-print-directory", "-n", "run", f"PYTHON={sys.executable}"], cwd=ROOT,
                             capture_output=True, text=True, timeout=60).stdout.splitlines()
    planned = [line for line in planned if not line.startswith("make")]  # make's own lines (under a parent make)
    assert "bin/check-port" in planned[0]  # before the virtualenv, the migrations and the demo


def test_the_procfile_and_make_run_start_the_same_worker_command():
    procfile = dict(line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines()
                    if line.strip() and not line.startswith("#"))
    assert procfile["worker"].strip() == "bin/celery-worker"
    assert 'bin/celery-worker --beat' in (ROOT / "bin" / "run-platform").read_text()
    planned = subprocess.run(["bash", "bin/celery-worker", "--beat"], cwd=ROOT, capture_output=True, text=True,
                             env=os.environ | {"CELERY": "echo", "HEDGELAB_VAR_DIR": "/srv/var"}).stdout.split()
    assert planned[planned.index("--pool") + 1] == "threads"
    assert int(planned[planned.index("--concurrency") + 1]) >= 8  # requests in flight for a hosted API
    assert "--beat" in planned and planned[planned.index("--schedule") + 1] == "/srv/var/celerybeat-schedule"
    plain = subprocess.run(["bash", "bin/celery-worker"], cwd=ROOT, capture_output=True, text=True,
                           env=os.environ | {"CELERY": "echo", "ELICITATION_QUEUE": "models"}).stdout.split()
    assert "--beat" not in plain and plain[plain.index("--queues") + 1] == "celery,models"


def test_the_worker_with_beat_runs_the_sweep(tmp_path):
    env = django_env(f"sqlite:///{tmp_path / 'db.sqlite3'}", tmp_path, ELICITATION_SWEEP_SECONDS="1",
                     CELERY="celery", PATH=f"{VENV_BIN}:{os.environ.get('PATH', '')}", WORKER_CONCURRENCY="2")
    manage(env, "migrate", "--noinput")
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        worker = subprocess.Popen(["bin/celery-worker", "--beat"], cwd=ROOT, env=env, stdout=out,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end and "Task elicitation.sweep[" not in log.read_text() and worker.poll() is None:
            time.sleep(0.5)
        text = log.read_text()
    finally:
        os.killpg(worker.pid, 15)
        worker.wait(timeout=60)
    assert "beat: Starting" in text or "Scheduler: Sending due task" in text, text[-3000:]
    assert "Task elicitation.sweep[" in text, text[-3000:]
