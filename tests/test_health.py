"""/healthz for the proxy: 200 while the database and the cache answer, 503 when one does not (the proxy then
sends no traffic there), reachable over plain HTTP in production (exempt from the HTTPS redirect), no login;
a failure's details (hosts, ports, driver errors) only for staff when DEBUG is off."""
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
    assert body["status"] == "ok" and body["database"] == "ok" and body["cache"] == "ok"
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]
    assert client.post("/healthz").status_code == 405


@pytest.mark.django_db
def test_health_is_503_when_the_database_fails(client, monkeypatch, settings):
    settings.DEBUG = True  # details for everyone on a development machine
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


REDIS_DOWN = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                          "LOCATION": "redis://127.0.0.1:1/0"}}  # nothing listens on port 1


@pytest.mark.django_db
def test_health_is_503_when_the_cache_redis_is_down(client, settings):
    settings.DEBUG = True
    settings.CACHES = REDIS_DOWN
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok" and body["cache"].startswith("error: ConnectionError")


@pytest.mark.django_db
def test_health_uses_the_cache_redis_when_it_is_up(client, settings):
    url = os.environ.get("TEST_REDIS_URL")
    if not url:
        pytest.skip("set TEST_REDIS_URL")
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}}
    assert client.get("/healthz").json()["cache"] == "ok"


@pytest.mark.django_db
def test_in_production_strangers_see_no_hosts_or_driver_errors(client, admin_user, settings, monkeypatch):
    settings.DEBUG = False
    settings.CACHES = REDIS_DOWN

    def broken() -> str:
        raise ConnectionError('connection to server at "db.internal" (10.1.2.3), port 5432 failed')

    monkeypatch.setattr(health, "check_database", broken)
    anonymous = client.get("/healthz", secure=True)
    assert anonymous.status_code == 503
    assert {k: anonymous.json()[k] for k in ("status", "database", "cache")} == {
        "status": "unavailable", "database": "error", "cache": "error"}
    assert "5432" not in anonymous.content.decode() and "db.internal" not in anonymous.content.decode()
    monkeypatch.setattr(health, "_may_see_details", lambda request: True)  # staff (the session needs the db)
    staff = client.get("/healthz", secure=True).json()
    assert "db.internal" in staff["database"] and "ConnectionError" in staff["cache"]


@pytest.mark.django_db
def test_staff_see_the_details(admin_client, settings):
    settings.DEBUG = False
    settings.CACHES = REDIS_DOWN
    assert "ConnectionError" in admin_client.get("/healthz", secure=True).json()["cache"]


@pytest.mark.django_db
def test_the_limits_redis_is_checked_with_the_workers_services(client, settings):
    settings.ELICITATION_LIMITS_URL = "redis://127.0.0.1:1/0"
    assert "limits" not in client.get("/healthz").json()
    response = client.get("/healthz?all=1")
    assert response.status_code == 503 and response.json()["limits"].startswith("error")


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
