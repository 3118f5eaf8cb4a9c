"""A loaded study is a draft until the researcher opens it, and says so; its test link lets the researcher take
it as a participant while it is a draft (issue 32 point 9), and nobody else can enter it."""
from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command

from surveys.models import Participant, Study
from surveys.test_mode import pilot_link
from test_flow import link, page, study  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

EXAMPLE = Path(__file__).resolve().parents[1] / "studies" / "examples" / "hedge-confidence" / "study.toml"


@pytest.mark.parametrize("status", [Study.Status.DRAFT, Study.Status.LIVE])
def test_a_test_link_enters_a_draft_or_live_study(client, study, status):  # noqa: F811
    study.status = status
    study.save()
    response = client.get(pilot_link("http://testserver", study))
    assert response.status_code == 302 and response["Location"].endswith("/consent/")
    participant = Participant.objects.get()
    assert participant.is_test
    assert "Test participant" in page(client.get(response["Location"]))


def test_a_draft_admits_nobody_but_test_participants(client, study):  # noqa: F811
    study.status = Study.Status.DRAFT
    study.save()
    response = client.get(link(study))
    assert response.status_code == 403 and "has not started yet" in page(response)
    assert not Participant.objects.exists()


def test_a_closed_study_admits_no_test_participant_either(client, study):  # noqa: F811
    study.status = Study.Status.CLOSED
    study.save()
    response = client.get(pilot_link("http://testserver", study))
    assert response.status_code == 403 and "is closed" in page(response)
    assert not Participant.objects.exists()


def test_load_study_leaves_a_new_study_a_draft_and_says_how_to_open_it(db):
    out = StringIO()
    call_command("load_study", str(EXAMPLE), stdout=out)
    study = Study.objects.get(slug="hedge-confidence")
    assert study.status == Study.Status.DRAFT
    said = out.getvalue()
    assert "status: draft: participants cannot enter yet" in said
    assert "show_links" in said and f"load_study {EXAMPLE} --live" in said
    again = StringIO()
    call_command("load_study", str(EXAMPLE), "--live", stdout=again)  # the same content: opened, nothing else
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE and "status: live" in again.getvalue()
    call_command("load_study", str(EXAMPLE), stdout=StringIO())  # loading again never closes it
    study.refresh_from_db()
    assert study.status == Study.Status.LIVE
