"""/healthz for the proxy: 200 while the database answers, 503 when it does not (the proxy then sends no
traffic there), reachable over plain HTTP in production (exempt from the HTTPS redirect), no login."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from config import health

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.django_db
def test_health_reports_the_database(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["database"] == "ok"
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_health_is_503_when_the_database_fails(client, monkeypatch):
    def broken() -> str:
        raise ConnectionError("database is down")

    monkeypatch.setattr(health, "check_database", broken)
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "unavailable" and "database is down" in response.json()["database"]


@pytest.mark.django_db
def test_health_checks_the_broker_on_request(client, settings):
    from config.celery import app

    app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        response = client.get("/healthz?broker=1")
    finally:
        app.conf.broker_url = settings.CELERY_BROKER_URL
    assert response.status_code == 503 and response.json()["broker"].startswith("error")


PROBE = """
import django, json
django.setup()
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
c = Client()
print(json.dumps({"health": c.get("/healthz").status_code, "admin": c.get("/admin/").status_code}))
"""


def test_in_production_health_answers_plain_http_while_the_rest_redirects(tmp_path):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
           "DJANGO_SETTINGS_MODULE": "config.settings", "DEBUG": "0", "SECRET_KEY": "x" * 60,
           "ALLOWED_HOSTS": "testserver", "HEDGELAB_VAR_DIR": str(tmp_path),
           "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {"health": 200, "admin": 301}
