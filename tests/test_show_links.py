"""`manage.py show_links` (printed by `make run`): every link it prints works as printed."""
from __future__ import annotations

import io
import re
from urllib.parse import urlsplit

import pytest
from django.core.management import call_command

from surveys.models import Participant, Study

pytestmark = pytest.mark.django_db


def printed_links(base: str) -> dict[str, list[str]]:
    out = io.StringIO()
    call_command("show_links", "--base", base, stdout=out)
    links: dict[str, list[str]] = {}
    for label, url in re.findall(r"^\s*(try it as a participant|researcher preview|link for Prolific):\s+(\S+)$",
                                 out.getvalue(), flags=re.M):
        links.setdefault(label, []).append(url)
    return links


def test_the_printed_participant_link_admits_a_participant(imported_nv, client):
    imported_nv.status = Study.Status.LIVE
    imported_nv.save()
    links = printed_links("http://127.0.0.1:8123/")
    [link] = links["try it as a participant"]
    url = urlsplit(link)
    assert f"{url.scheme}://{url.netloc}" == "http://127.0.0.1:8123"

    response = client.get(f"{url.path}?{url.query}")

    assert response.status_code == 302, response.content.decode()[:500]
    assert response["Location"].endswith(f"/s/{imported_nv.slug}/consent/")
    participant = Participant.objects.get(study=imported_nv)
    assert participant.prolific_study_id and participant.prolific_session_id


def test_the_printed_prolific_and_preview_links_use_the_given_base(imported_nv):
    links = printed_links("http://survey.example.org:9000")
    assert links["link for Prolific"] == [
        f"http://survey.example.org:9000/s/{imported_nv.slug}/?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"]
    assert links["researcher preview"] == [f"http://survey.example.org:9000/s/{imported_nv.slug}/preview/"]


def test_make_run_prints_the_links_once():
    """`make run` loads the demos without their links and prints every study's links once the server is up."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    recipe = subprocess.run(["make", "-n", "run", f"VENV={sys.prefix}"], cwd=root, capture_output=True, text=True,
                            check=True).stdout
    assert recipe.count("load_demo") == 1 and "load_demo --no-links" in recipe, recipe
    assert (root / "bin" / "run-platform").read_text().count("manage.py show_links") == 1
    out = io.StringIO()
    call_command("load_demo", "--no-links", stdout=out)
    assert "created" in out.getvalue() and "Prolific link" not in out.getvalue() and "preview" not in out.getvalue()
    out = io.StringIO()
    call_command("load_demo", stdout=out)  # on its own (make demo) it still says where the studies are
    assert out.getvalue().count("Prolific link") == 4


def test_the_printed_rest_api_link_logs_in_and_opens_the_browsable_api(client, django_user_model):
    """The REST API link `make run` prints is the browsable API's login (issue 32 point 10): the admin user's
    name and password there lead to /api/ (without a session the API answers 401 and offers the same login)."""
    out = io.StringIO()
    call_command("show_links", "--base", "http://127.0.0.1:8123", stdout=out)
    [link] = re.findall(r"^REST API:\s+(\S+)", out.getvalue(), flags=re.M)
    url = urlsplit(link)
    assert f"{url.scheme}://{url.netloc}" == "http://127.0.0.1:8123" and url.path == "/api-auth/login/"
    anonymous = client.get("/api/", HTTP_ACCEPT="text/html")
    assert anonymous.status_code == 401 and "/api-auth/login/" in anonymous.content.decode()
    form = client.get(f"{url.path}?{url.query}")
    assert form.status_code == 200 and 'name="password"' in form.content.decode()
    django_user_model.objects.create_superuser("admin", password="pw-for-the-test")
    logged_in = client.post(f"{url.path}?{url.query}", {"username": "admin", "password": "pw-for-the-test",
                                                        "next": "/api/"})
    assert logged_in.status_code == 302 and logged_in["Location"] == "/api/"
    api = client.get("/api/", HTTP_ACCEPT="text/html")
    assert api.status_code == 200 and "/api/studies/" in api.content.decode()
    assert client.get("/api/studies/", HTTP_ACCEPT="application/json").status_code == 200
