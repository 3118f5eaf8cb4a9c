"""bench/access_matrix.py's core on the test database: every URL pattern × every role, no raw PID to a role that
may not see it, no secret to anyone, no 5xx; and the faults it found, each on its own."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import get_resolver
from rest_framework.authtoken.models import Token

from elicitation.models import ElicitationRun, ModelEndpoint
from surveys.models import Study

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def script():
    spec = importlib.util.spec_from_file_location("bench_access_matrix", ROOT / "bench" / "access_matrix.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def world(script, belem_dir, monkeypatch):
    for name, value in script.SECRET_ENV.items():
        monkeypatch.setenv(name, value)
    return script.seed_world(belem_dir, participants=3)


def test_every_route_every_role_no_leak_no_5xx(script, world):
    matrix = script.run_matrix(world)
    assert matrix.patterns == len(list(script._walk(get_resolver().url_patterns)))  # every pattern is a row
    assert [r.pattern for r in matrix.skipped] == []  # a new route the world cannot fill is named here
    bad = {f"{url} {role}": cell for url, cells in matrix.rows for role, cell in cells.items()
           if cell in script.FAULTS}
    assert bad == {}, matrix.notes
    assert matrix.written == []  # no GET changed study data (a report computes its filter, never stores it)
    assert not matrix.failed
    cells = dict(matrix.rows)
    # the matrix sees what it looks for: PIDs where they may be shown, the data, the refusals
    assert cells["/admin/surveys/response/"]["owner"] == "P"
    assert cells["/admin/surveys/response/"]["assistant"] == "."  # the list without the PID column
    assert cells["/admin/surveys/response/"]["report"] == "-"
    assert cells["/api/studies/alpha/report/"]["report"] == "s"  # the report, with salted ids
    assert cells["/api/studies/alpha/"]["other"] == "-"
    # the cross-researcher reference: only the roles that may see alpha score a study of theirs against it
    assert cells[script.REFERENCE_ROW] == {"anonymous": "-", "owner": "s", "shared": "s", "assistant": "s",
                                           "other": "-", "report": "-", "super": "s"}
    assert {cells[u]["anonymous"] for u in cells if u.startswith(("/admin/surveys/", "/api/runs"))} == {"-"}


def test_classify_flags_pids_and_secrets(script, world):
    row = "<td>ALPHAPID0000000000000001</td>"
    assert script.classify(world, "owner", 200, row) == "P"
    assert script.classify(world, "assistant", 200, row) == "P!"  # no *view participant*
    assert script.classify(world, "other", 200, row) == "P!"  # not their study
    assert script.classify(world, "other", 200, row.replace("ALPHA", "BETA")) == "P"  # theirs
    assert script.classify(world, "super", 200, f"key {Token.objects.first().key}") == "K!"
    assert script.classify(world, "super", 403, "sk-SECRETMARKER-openai") == "K!"  # whatever the status
    assert script.classify(world, "owner", 500, "") == "5"
    title = "<h1>ALPHAMARK study</h1>"
    assert script.classify(world, "other", 200, title, "/admin/surveys/study/") == "D!"  # not theirs
    assert script.classify(world, "anonymous", 200, title, "/api/studies/") == "D!"
    assert script.classify(world, "report", 200, title, "/admin/surveys/study/") == "s"  # shared with them
    assert script.classify(world, "other", 200, title, "/s/alpha/") == "s"  # a participant page


def test_a_users_delete_page_shows_token_prefixes_only(db):
    """Found by the access matrix: the user's delete page listed the user's API token by its full key."""
    superuser = User.objects.create_superuser("boss", "b@example.org", "pw")
    victim = User.objects.create_user("victim", password="pw", is_staff=True)
    key = Token.objects.create(user=victim).key
    client = Client()
    client.force_login(superuser)
    page = client.get(f"/admin/auth/user/{victim.pk}/delete/").content.decode()
    assert "victim" in page and key[:6] in page
    assert key not in page


def test_api_actions_with_a_format_suffix(db):
    """Found by the access matrix: /api/runs/<id>/progress.json (and every action's .json route) was a 500."""
    user = User.objects.create_superuser("boss", "b@example.org", "pw")
    study = Study.objects.create(slug="fmt", title="Fmt", owner=user)
    endpoint = ModelEndpoint.objects.create(name="fmt-ep", base_url="http://127.0.0.1:9/v1", model="m", owner=user)
    run = ElicitationRun.objects.create(study=study, endpoint=endpoint, status="running")
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    plain = client.get(f"/api/runs/{run.pk}/progress/")
    suffixed = client.get(f"/api/runs/{run.pk}/progress.json")
    assert plain.status_code == suffixed.status_code == 200
    assert suffixed.json() == plain.json()
    cancelled = client.post(f"/api/runs/{run.pk}/cancel.json")
    assert cancelled.status_code == 200, cancelled.content
    assert ElicitationRun.objects.get(pk=run.pk).status == "cancelled"
    marked = client.post("/api/participants/mark.json", {}, content_type="application/json")
    assert marked.status_code == 400  # a clear refusal of the empty body, not a 500
