"""Links printed for researchers point at the port `make run` serves on (issue 23 point 5): bin/run-platform
keeps the address in <var>/site-url, and settings read it when SITE_URL is not set."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from tests.test_settings import run

PROBE = "import json, django; from django.conf import settings; django.setup(); print(json.dumps(settings.SITE_URL))"


def site_url_in(env: dict[str, str]) -> str:
    result = run(["-c", PROBE], env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_commands_without_site_url_use_the_address_make_run_served_on(tmp_path):
    assert site_url_in({"HEDGELAB_VAR_DIR": str(tmp_path)}) == "http://127.0.0.1:8000"
    (tmp_path / "site-url").write_text("http://127.0.0.1:8200\n")
    assert site_url_in({"HEDGELAB_VAR_DIR": str(tmp_path)}) == "http://127.0.0.1:8200"
    assert site_url_in({"HEDGELAB_VAR_DIR": str(tmp_path),
                        "SITE_URL": "https://survey.example.org/"}) == "https://survey.example.org"


def test_make_run_keeps_the_address_it_serves_on():
    from pathlib import Path
    script = (Path(__file__).resolve().parent.parent / "bin" / "run-platform").read_text()
    keep = script.index('>"$VAR/site-url"')
    assert script.index('export SITE_URL="${SITE_URL:-http://$HOST:$PORT}"') < keep < script.index("config.wsgi --bind")


@pytest.mark.django_db
def test_create_study_and_show_links_print_the_site_url(settings):
    settings.SITE_URL = "http://127.0.0.1:8200"
    out = io.StringIO()
    call_command("create_study", "pilot", "--instrument", "speaker_belief", stdout=out)
    call_command("show_links", stdout=out)
    printed = out.getvalue()
    assert "participant link: http://127.0.0.1:8200/s/pilot/?PROLIFIC_PID=" in printed
    assert "Admin:            http://127.0.0.1:8200/admin/" in printed
    assert "researcher preview:      http://127.0.0.1:8200/s/pilot/preview/" in printed
