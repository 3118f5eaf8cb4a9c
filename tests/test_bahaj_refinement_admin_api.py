"""Self-refinement started from the admin ("Self-refine this run") and from the API (POST /api/runs/<id>/refine/):
the run records its source and settings and is started; bad settings are refused per field; runs that cannot be
refined are refused. Model calls go to the loopback stub; Celery tasks run inline."""
from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token

from config.celery import app as celery_app
from elicitation.models import ElicitationRun, ModelResponse
from elicitation.refinement import create_refinement
from stub_openai import stub  # noqa: F401 (stub is a fixture)
from test_bahaj_refinement import source, stub_endpoint  # noqa: F401 (source is a fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def eager(monkeypatch):
    """Celery tasks run inline when queued (no broker, no worker)."""
    monkeypatch.setitem(celery_app.conf, "task_always_eager", True)
    monkeypatch.setitem(celery_app.conf, "task_eager_propagates", True)


@pytest.fixture
def api(admin_user, client):
    client.defaults["HTTP_AUTHORIZATION"] = f"Token {Token.objects.create(user=admin_user).key}"
    return client


def refinement_of(source: ElicitationRun) -> ElicitationRun:
    return ElicitationRun.objects.get(refines=source)


def test_the_run_page_offers_self_refinement_only_for_interval_answer_runs(admin_client, stub, source):
    monitor = reverse("admin:elicitation_elicitationrun_monitor", args=[source.pk])
    refine_url = reverse("admin:elicitation_elicitationrun_refine", args=[source.pk])
    assert "Self-refine this run" in admin_client.get(monitor).content.decode()
    change = admin_client.get(reverse("admin:elicitation_elicitationrun_change", args=[source.pk])).content.decode()
    assert f'href="{refine_url}"' in change
    refined = create_refinement(source, stub_endpoint(), draw_seed=1)
    change = admin_client.get(reverse("admin:elicitation_elicitationrun_change", args=[refined.pk])).content.decode()
    assert "Self-refine this run" not in change
    page = admin_client.get(reverse("admin:elicitation_elicitationrun_monitor", args=[refined.pk])).content.decode()
    assert "Self-refine this run" not in page
    response = admin_client.get(reverse("admin:elicitation_elicitationrun_refine", args=[refined.pk]), follow=True)
    assert "is itself a refinement" in response.content.decode()
    form = admin_client.get(refine_url).content.decode()
    assert 'name="shown"' in form and 'name="draw_seed"' in form and "the source run&#x27;s endpoint" in form


def test_the_admin_form_creates_and_starts_a_refinement(admin_client, admin_user, stub, source, eager,
                                                        django_capture_on_commit_callbacks):
    url = reverse("admin:elicitation_elicitationrun_refine", args=[source.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(url, {"endpoint": "", "shown": "2", "setting": "mixed", "draw_seed": "7",
                                           "mode": "greedy", "samples": "1", "max_tokens": "64"})
    run = refinement_of(source)
    assert response.status_code == 302
    assert response.url == reverse("admin:elicitation_elicitationrun_monitor", args=[run.pk])
    assert (run.refine_shown, run.refine_setting, run.refine_seed, run.prompt_style, run.endpoint) == \
        (2, "mixed", 7, "refine", source.endpoint)
    assert (run.temperature, run.max_tokens, run.created_by) == (0.0, 64, admin_user)
    assert run.status == "completed"  # started: the inline worker asked the stub
    rows = ModelResponse.objects.filter(run=run)
    assert rows.count() == 10 and set(rows.values_list("status", flat=True)) == {"ok"}
    assert set(rows.values_list("lower", "upper")) == {(1965, 1972)}


def test_bad_settings_re_ask_with_their_errors(admin_client, stub, source):
    url = reverse("admin:elicitation_elicitationrun_refine", args=[source.pk])
    response = admin_client.post(url, {"shown": "2", "setting": "single", "draw_seed": "1", "mode": "greedy",
                                       "samples": "3", "max_tokens": "64"})
    page = response.content.decode()
    assert response.status_code == 200 and "gives one answer per item" in page  # create_refinement's error
    assert 'value="3"' in page  # what was typed is kept
    response = admin_client.post(url, {"shown": "0", "setting": "sideways", "draw_seed": "x", "mode": "greedy",
                                       "samples": "1", "max_tokens": "64"})
    assert response.status_code == 200 and "errorlist" in response.content.decode()
    assert not ElicitationRun.objects.filter(refines=source).exists()


def test_the_api_creates_and_starts_a_refinement(api, admin_user, stub, source, eager,
                                                 django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/runs/{source.pk}/refine/", {"shown": 2, "setting": "single", "draw_seed": 5,
                                                               "mode": "sampled", "samples": 2, "endpoint": "stub"},
                            content_type="application/json")
    assert response.status_code == 201, response.content
    body = response.json()
    run = refinement_of(source)
    assert body["id"] == run.pk and body["refines"] == source.pk and body["endpoint"] == "stub"
    assert (body["refine_shown"], body["refine_setting"], body["refine_seed"], body["mode"]) == (2, "single", 5,
                                                                                                 "sampled")
    assert run.temperature == 1.0 and run.samples_per_item == 2 and run.created_by == admin_user
    run.refresh_from_db()
    assert run.status == "completed" and ModelResponse.objects.filter(run=run, status="ok").count() == 20


def test_the_api_refuses_bad_settings_naming_the_field(api, stub, source):
    url = f"/api/runs/{source.pk}/refine/"
    response = api.post(url, {"setting": "sideways"}, content_type="application/json")
    assert response.status_code == 400 and "setting" in response.json()
    response = api.post(url, {"mode": "greedy", "samples": 3}, content_type="application/json")
    assert response.status_code == 400 and "gives one answer per item" in response.json()["samples"][0]
    response = api.post(url, {"endpoint": "nowhere"}, content_type="application/json")
    assert response.status_code == 400 and "endpoint" in response.json()
    assert not ElicitationRun.objects.filter(refines=source).exists()


def test_the_api_refuses_runs_that_cannot_be_refined(api, stub, source):
    refined = create_refinement(source, stub_endpoint(), draw_seed=1)
    response = api.post(f"/api/runs/{refined.pk}/refine/", {}, content_type="application/json")
    assert response.status_code == 409 and "itself a refinement" in response.json()["detail"]

    from django.core.management import call_command

    from surveys.models import Item, Study

    call_command("create_study", "probs", "--instrument", "wep_probability")
    study = Study.objects.get(slug="probs")
    Item.objects.create(study=study, key="p1", expression="likely", statement="It rains.")
    other = ElicitationRun.objects.create(study=study, endpoint=stub_endpoint(), status="completed")
    response = api.post(f"/api/runs/{other.pk}/refine/", {}, content_type="application/json")
    assert response.status_code == 409 and "needs interval answers" in response.json()["detail"]
    assert ElicitationRun.objects.filter(refines__isnull=False).count() == 1


def test_the_api_refuses_a_run_with_no_parsed_interval_yet(api, stub, source):
    draft = ElicitationRun.objects.create(study=source.study, endpoint=stub_endpoint())
    response = api.post(f"/api/runs/{draft.pk}/refine/", {}, content_type="application/json")
    assert response.status_code == 409 and "no parsed interval" in response.json()["detail"]


def test_no_refinement_is_created_on_an_endpoint_that_fails_its_pre_flight_check(api, stub, source):
    """elicitation.preflight: the refining endpoint is sent one cheap request first (the API, the admin form
    and ``manage.py refine``); when it fails, nothing is created and the answer says what failed."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from elicitation import preflight
    from stub_openai import Reply

    preflight._passed.clear()  # the source run's check passed a moment ago; since then the key was revoked
    stub.queue(Reply.error(401, "Incorrect API key provided"), Reply.error(401, "Incorrect API key provided"))
    response = api.post(f"/api/runs/{source.pk}/refine/", {"shown": 2}, content_type="application/json")
    assert response.status_code == 400
    assert f"401 at {stub.base_url}/chat/completions" in response.json()["endpoint"][0]
    with pytest.raises(CommandError, match="failed its pre-flight check: 401"):
        call_command("refine", str(source.pk), "--shown", "2")
    assert not ElicitationRun.objects.filter(refines=source).exists()
