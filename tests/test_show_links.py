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
