"""Every page has an icon (issue 23 walk): the participant pages link static/favicon.svg, and /favicon.ico,
which browsers ask for on pages without a link (the admin, the API docs), answers it instead of a 404 that
Chromium logs in the console of every page."""
from __future__ import annotations

import pytest
from django.contrib.staticfiles import finders

from surveys.models import Study


def test_favicon_ico_is_the_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200
    assert response["Content-Type"] == "image/svg+xml"
    assert response.content.startswith(b"<svg") and response.content == open(finders.find("favicon.svg"), "rb").read()
    assert client.post("/favicon.ico").status_code == 405


@pytest.mark.django_db
def test_participant_pages_link_the_icon(client):
    Study.objects.create(slug="pilot", title="Pilot", instrument="speaker_belief", status=Study.Status.LIVE)
    page = client.get("/s/pilot/?PROLIFIC_PID=5f0c1d2e3a4b5c6d7e8f9a0b&STUDY_ID=s&SESSION_ID=x", follow=True)
    assert page.templates[0].name.startswith("surveys/")  # a participant page (here: the study has no items yet)
    assert '<link rel="icon" href="/static/favicon.svg"' in page.content.decode()
