"""Database outages (surveys.outage): a request is retried once on a fresh connection, then participants
get a calm page that reloads itself (HTTP 503), never a raw error page or Django's debug traceback.
The same with real processes (a private PostgreSQL restarted under a running server): test_outage_real.py."""
from __future__ import annotations

import pytest
from django.db import OperationalError

from surveys import flow
from surveys.models import Response
from test_flow import answer, current_slot, start, study, url  # noqa: F401 (study is a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def client(client):
    client.raise_request_exception = False  # the test client would re-raise the first (retried) error
    return client


@pytest.fixture
def flaky(monkeypatch, settings):
    """flow.current_step fails with a database error the next ``fail["times"]`` calls."""
    settings.OUTAGE_RETRY_DELAY = 0
    fail = {"times": 0, "calls": 0}
    real = flow.current_step

    def current_step(participant):
        if fail["times"] > 0:
            fail["times"] -= 1
            fail["calls"] += 1
            raise OperationalError("server closed the connection unexpectedly")
        return real(participant)

    monkeypatch.setattr(flow, "current_step", current_step)
    return fail


def test_a_blip_is_retried_and_the_participant_sees_nothing(client, study, flaky):
    start(client, study)
    flaky["times"] = 1
    response = client.get(url(study, "item"))
    assert response.status_code == 200 and "Question 1 of 30" in response.content.decode()
    assert flaky["calls"] == 1


def test_an_answer_during_a_blip_is_saved_once(client, study, flaky):
    participant = start(client, study)
    slot = current_slot(participant)
    flaky["times"] = 1
    response = answer(client, study, slot, 35)
    assert response.status_code == 200 and "Question 2 of 30" in response.content.decode()
    assert list(Response.objects.values_list("value", flat=True)) == [35]


@pytest.mark.parametrize("debug", [True, False])
def test_a_longer_outage_gets_the_calm_page_that_retries_by_itself(client, study, flaky, settings, debug):
    settings.DEBUG = debug
    start(client, study)
    flaky["times"] = 2
    response = client.get(url(study, "item"))
    text = response.content.decode()
    assert response.status_code == 503 and int(response["Retry-After"]) > 0
    assert "Your answers so far are saved" in text and "Traceback" not in text and "OperationalError" not in text
    assert f'http-equiv="refresh" content="5;url={url(study, "item")}"' in text
    assert 'href="/static/surveys/flow.css"' in text  # the study's look
    flaky["times"] = 0
    assert client.get(url(study, "item")).status_code == 200  # and the page works once the database is back


def test_the_api_gets_json(admin_client, monkeypatch, settings):
    settings.OUTAGE_RETRY_DELAY = 0
    admin_client.raise_request_exception = False
    from surveys import api

    def broken(self):
        raise OperationalError("the database system is starting up")

    monkeypatch.setattr(api.StudyViewSet, "get_queryset", broken)
    response = admin_client.get("/api/studies/")
    assert response.status_code == 503 and "briefly unavailable" in response.json()["detail"]


def test_other_errors_are_left_alone(client, study, monkeypatch, settings):
    settings.DEBUG = False
    start(client, study)
    monkeypatch.setattr(flow, "current_step", lambda p: 1 / 0)
    assert client.get(url(study, "item")).status_code == 500


@pytest.fixture
def flaky_session_save(monkeypatch, settings):
    """Saving a changed session fails with a database error the next ``fail["times"]`` times (the database
    restarting while the session is written), through Django's own session store."""
    from django.contrib.sessions.models import Session

    settings.OUTAGE_RETRY_DELAY = 0
    fail = {"times": 0, "calls": 0}
    real = Session.save

    def save(self, *args, **kwargs):
        if kwargs.get("force_update") and fail["times"] > 0:
            fail["times"] -= 1
            fail["calls"] += 1
            raise OperationalError("terminating connection due to administrator command")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Session, "save", save)
    return fail


def test_a_session_save_during_a_blip_is_retried(client, study, flaky_session_save):
    from test_flow import link

    start(client, study)
    flaky_session_save["times"] = 1
    response = client.get(link(study), follow=True)  # the link again: the session is changed and saved
    assert response.status_code == 200 and "Question 1 of 30" in response.content.decode()
    assert flaky_session_save["calls"] == 1


@pytest.mark.parametrize("debug", [True, False])
def test_a_session_save_during_an_outage_gets_the_calm_page(client, study, flaky_session_save, settings, debug):
    """Not HTTP 400 "SessionInterrupted" (nor Django's debug page with DEBUG on): the calm page that retries."""
    from test_flow import link

    settings.DEBUG = debug
    start(client, study)
    flaky_session_save["times"] = 2
    response = client.get(link(study))
    text = response.content.decode()
    assert response.status_code == 503 and "Your answers so far are saved" in text
    assert "SessionInterrupted" not in text and "Traceback" not in text
    assert client.get(link(study), follow=True).status_code == 200  # and it works once the database is back


def test_a_session_deleted_meanwhile_is_still_djangos_400(client, study, monkeypatch, settings):
    from django.contrib.sessions.backends.base import UpdateError
    from django.contrib.sessions.backends.db import SessionStore

    from test_flow import link

    settings.DEBUG = False
    start(client, study)

    def deleted(self, must_create=False):
        raise UpdateError

    monkeypatch.setattr(SessionStore, "save", deleted)
    assert client.get(link(study)).status_code == 400
