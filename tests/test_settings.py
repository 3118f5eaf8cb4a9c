"""Settings come from the environment only. Each case runs Django in a fresh subprocess with a
controlled environment, since settings are read once per process."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STRONG_KEY = "k3Jx9-t8vQ_2mZ7rW4yN6pL1sD5fH0gA8bC3eU9iO2jR7wT4xV6zQ1nM5kP8sY0aE"

PROBE = """
import json, django
from django.conf import settings
django.setup()
from config.celery import app
db = settings.DATABASES["default"]
print(json.dumps({"engine": db["ENGINE"], "name": str(db["NAME"]), "host": db.get("HOST", ""),
                  "broker": settings.CELERY_BROKER_URL, "celery_broker": app.conf.broker_url,
                  "limits": settings.ELICITATION_LIMITS_URL,
                  "debug": settings.DEBUG, "var_dir": str(settings.VAR_DIR),
                  "allowed_hosts": settings.ALLOWED_HOSTS, "secure": getattr(settings, "SESSION_COOKIE_SECURE", False)}))
"""


def run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """Run Python in the project with exactly ``env`` (plus PATH/HOME and the settings module)."""
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp"),
            "DJANGO_SETTINGS_MODULE": "config.settings"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=base | env, capture_output=True, text=True,
                          timeout=120)


def probe(env: dict[str, str]) -> dict:
    result = run(["-c", PROBE], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_check_deploy_is_clean_in_production(tmp_path):
    env = {"DEBUG": "0", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "hedgelab.example.org",
           "HEDGELAB_VAR_DIR": str(tmp_path)}
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_flags_a_missing_host(tmp_path):
    """The deploy check really runs: without ALLOWED_HOSTS it fails (so the clean result above means something)."""
    env = {"DEBUG": "0", "SECRET_KEY": STRONG_KEY, "HEDGELAB_VAR_DIR": str(tmp_path)}
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert result.returncode != 0
    assert "security.W020" in result.stdout + result.stderr


def test_no_environment_means_sqlite_and_sqlite_broker():
    values = probe({})
    assert values["engine"] == "django.db.backends.sqlite3"
    assert values["name"] == str(ROOT / "var" / "db.sqlite3")
    assert values["broker"] == f"sqla+sqlite:///{ROOT / 'var' / 'broker.sqlite3'}"
    assert values["celery_broker"] == values["broker"]
    assert values["debug"] is True and values["secure"] is False
    assert values["allowed_hosts"] == ["localhost", "127.0.0.1", "[::1]"]


def test_var_dir_moves_the_local_files(tmp_path):
    values = probe({"HEDGELAB_VAR_DIR": str(tmp_path)})
    assert values["name"] == str(tmp_path / "db.sqlite3")
    assert values["broker"] == f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"


def test_database_url_selects_postgresql(tmp_path):
    values = probe({"HEDGELAB_VAR_DIR": str(tmp_path),
                    "DATABASE_URL": "postgres://alice:secret@db.internal:5433/hedgelab"})
    assert values["engine"] == "django.db.backends.postgresql"
    assert (values["name"], values["host"]) == ("hedgelab", "db.internal")


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/3", "amqp://guest:guest@127.0.0.1:5672//"])
def test_celery_broker_url_is_honoured(tmp_path, url):
    values = probe({"HEDGELAB_VAR_DIR": str(tmp_path), "CELERY_BROKER_URL": url})
    assert values["broker"] == url
    assert values["celery_broker"] == url


def test_production_without_secret_key_is_a_clear_error(tmp_path):
    result = run(["manage.py", "check"], {"DEBUG": "0", "HEDGELAB_VAR_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert "SECRET_KEY must be set when DEBUG is off" in result.stderr


def test_production_settings_are_hardened(tmp_path):
    values = probe({"DEBUG": "0", "SECRET_KEY": STRONG_KEY, "ALLOWED_HOSTS": "a.example.org,b.example.org",
                    "HEDGELAB_VAR_DIR": str(tmp_path)})
    assert values["debug"] is False and values["secure"] is True
    assert values["allowed_hosts"] == ["a.example.org", "b.example.org"]


def test_a_malformed_boolean_is_refused(tmp_path):
    result = run(["manage.py", "check"], {"DEBUG": "maybe", "HEDGELAB_VAR_DIR": str(tmp_path)})
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


LOG_PROBE = """
import sys, django
django.setup()
from config.celery import app
app.log.setup(loglevel="INFO", redirect_stdouts=False)  # what `celery -A config worker -l info` does
sys.path.insert(0, "tests")
import openai
from stub_openai import Reply, StubOpenAI
with StubOpenAI() as stub:
    stub.default = Reply.answer("50")
    openai.OpenAI(base_url=stub.base_url, api_key="none", max_retries=0).chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}])
print("asked")
"""


@pytest.mark.parametrize("level, logged", [(None, False), ("INFO", True)])
def test_worker_logs_no_request_lines_unless_asked(tmp_path, level, logged):
    """openai's HTTP layer logs one INFO line per request (its logger is ``httpx2`` from openai 3 on, not
    ``httpx``); unless HTTPX_LOG_LEVEL asks for them, a worker's log has none."""
    env = {"HEDGELAB_VAR_DIR": str(tmp_path)} | ({"HTTPX_LOG_LEVEL": level} if level else {})
    result = run(["-c", LOG_PROBE], env)
    assert result.returncode == 0 and "asked" in result.stdout, result.stderr
    assert ("HTTP Request: POST" in result.stdout + result.stderr) is logged, result.stderr


def test_endpoint_limits_live_in_redis_when_the_broker_is_redis(tmp_path):
    """ELICITATION_LIMITS_URL: the database without Redis, a Redis broker's URL by default, or as set; a value
    that is neither stops the process at start with the variable named."""
    var = {"HEDGELAB_VAR_DIR": str(tmp_path)}
    assert probe(var)["limits"] == "database"
    assert probe(var | {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/2"})["limits"] == "redis://127.0.0.1:6379/2"
    assert probe(var | {"CELERY_BROKER_URL": "redis://127.0.0.1:6379/2",
                        "ELICITATION_LIMITS_URL": "database"})["limits"] == "database"
    assert probe(var | {"ELICITATION_LIMITS_URL": "redis://127.0.0.1:6379/4"})["limits"] == "redis://127.0.0.1:6379/4"
    bad = run(["-c", PROBE], var | {"ELICITATION_LIMITS_URL": "memcached://x"})
    assert bad.returncode != 0 and "ELICITATION_LIMITS_URL='memcached://x'" in bad.stderr
