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
