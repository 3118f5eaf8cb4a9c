"""The pre-flight check of an endpoint (elicitation.preflight): one cheap request when an endpoint is registered
or a run is created or started, and what failed in plain words, naming the URL."""
from __future__ import annotations

import io
import socket

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from elicitation import preflight
from elicitation.models import ElicitationRun, ModelEndpoint
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]  # nothing listens there once the socket is closed


def test_each_failure_is_said_in_plain_words_naming_the_url(stub, monkeypatch):
    port = closed_port()
    nothing = ModelEndpoint(name="off", base_url=f"http://127.0.0.1:{port}/v1", model="m")
    assert preflight.problem(nothing) == (f"connection refused at http://127.0.0.1:{port}/v1: is the server "
                                          "running, on that host and port?")
    endpoint = make_endpoint(stub, api_key_env="HEDGELAB_TEST_API_KEY")
    monkeypatch.setenv("HEDGELAB_TEST_API_KEY", "sk-wrong")
    stub.queue(Reply.error(401, "Incorrect API key provided"))
    assert preflight.problem(endpoint) == (f"401: the key in HEDGELAB_TEST_API_KEY was refused at "
                                           f"{stub.base_url}/chat/completions (Incorrect API key provided)")
    stub.queue(Reply(status=404, body=b"<h1>Not Found</h1>", content_type="text/html"))
    assert preflight.problem(endpoint) == (f"404 at {stub.base_url}/chat/completions: not an API response "
                                           "(text/html): does the base URL end in /v1?")
    stub.queue(Reply.error(404, "The model `stub-model` does not exist"))
    assert "the model 'stub-model' was not found there" in preflight.problem(endpoint)
    stub.queue(Reply.garbage(b'{"not": "a completion"}', "application/json"))
    assert preflight.problem(endpoint).startswith(f"the reply at {stub.base_url}/chat/completions is not a completion")
    monkeypatch.delenv("HEDGELAB_TEST_API_KEY")
    assert "HEDGELAB_TEST_API_KEY, which is not set" in preflight.problem(endpoint)  # no request for that
    assert len(stub.requests) == 4


def test_one_cheap_request_and_a_passed_check_is_remembered(stub):
    endpoint = make_endpoint(stub, api_style="completions")
    assert preflight.problem(endpoint) == "" and preflight.problem(endpoint) == ""
    (request,) = stub.requests
    assert request.path == "/v1/completions" and request.body["max_tokens"] == 1
    assert request.body["model"] == "stub-model"


def test_the_command_refuses_an_endpoint_that_fails_unless_told_not_to_check(stub):
    port = closed_port()
    args = ["add_endpoint", "off", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"]
    with pytest.raises(CommandError, match=f"connection refused at http://127.0.0.1:{port}/v1.*--no-check"):
        call_command(*args, stdout=io.StringIO())
    assert not ModelEndpoint.objects.exists()
    call_command(*args, "--no-check", stdout=io.StringIO())
    out = io.StringIO()
    call_command("add_endpoint", "on", "--base-url", stub.base_url, "--model", "m", stdout=out)
    assert "pre-flight check passed" in out.getvalue() and len(stub.requests) == 1


def _admin_api() -> APIClient:
    api = APIClient()
    api.force_authenticate(get_user_model().objects.create_superuser("boss", "b@example.org", "pw-123456789"))
    return api


def test_the_api_refuses_an_endpoint_and_a_run_that_fail_the_check(stub, imported_nv):
    api = _admin_api()
    port = closed_port()
    refused = api.post("/api/endpoints/", {"name": "off", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m"},
                       format="json")
    assert refused.status_code == 400 and f"connection refused at http://127.0.0.1:{port}/v1" in str(
        refused.json()["check"])
    assert api.post("/api/endpoints/", {"name": "off", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m",
                                        "check": False}, format="json").status_code == 201
    made = api.post("/api/runs/", {"study": imported_nv.slug, "endpoint": "off"}, format="json")
    assert made.status_code == 409 and "connection refused" in made.json()["detail"]
    assert not ElicitationRun.objects.exists()  # not created
    draft = api.post("/api/runs/", {"study": imported_nv.slug, "endpoint": "off", "check": False}, format="json")
    assert draft.status_code == 201
    started = api.post(f"/api/runs/{draft.json()['id']}/start/", format="json")
    assert started.status_code == 409 and "connection refused" in started.json()["detail"]
    assert ElicitationRun.objects.get().status == "draft"

    make_endpoint(stub, name="on")
    stub.queue(Reply.error(401, "bad key"))
    refused = api.post("/api/runs/", {"study": imported_nv.slug, "endpoint": "on", "start": True}, format="json")
    assert refused.status_code == 409 and "401" in refused.json()["detail"]
    assert api.post("/api/runs/", {"study": imported_nv.slug, "endpoint": "on"}, format="json").status_code == 201


def test_the_admin_refuses_an_endpoint_that_fails_unless_the_check_is_skipped(admin_client):
    port = closed_port()
    form = {"name": "off", "base_url": f"http://127.0.0.1:{port}/v1", "model": "m", "api_style": "chat",
            "api_key_env": "", "max_concurrency": 4, "price_prompt_per_1k": 0, "price_completion_per_1k": 0,
            "timeout_seconds": 60, "max_retries": 5, "retry_backoff_seconds": 1, "retry_backoff_max_seconds": 30}
    response = admin_client.post(reverse("admin:elicitation_modelendpoint_add"), form)
    assert response.status_code == 200 and f"connection refused at http://127.0.0.1:{port}/v1" in (
        response.content.decode())
    assert not ModelEndpoint.objects.exists()
    response = admin_client.post(reverse("admin:elicitation_modelendpoint_add"), form | {"skip_check": "on"})
    assert response.status_code == 302 and ModelEndpoint.objects.filter(name="off").exists()


def test_the_elicit_command_creates_no_run_on_an_endpoint_that_fails(imported_nv):
    ModelEndpoint.objects.create(name="off", base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m")
    with pytest.raises(CommandError, match="connection refused"):
        call_command("elicit", imported_nv.slug, "--endpoint", "off", stdout=io.StringIO())
    assert not ElicitationRun.objects.exists()


def test_the_endpoint_forms_build_without_djangos_url_scheme_warning(admin_client):
    """`make docs` and every test run printed Django's "The default scheme will be changed …" warning: the
    endpoint form and the admin's say which scheme a base URL without one gets (https)."""
    import importlib
    import warnings

    from elicitation import endpoint_form

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        importlib.reload(endpoint_form)
        assert admin_client.get(reverse("admin:elicitation_modelendpoint_add")).status_code == 200
    assert endpoint_form.EndpointForm({"base_url": "api.example.org/v1"}).fields["base_url"].clean(
        "api.example.org/v1") == "https://api.example.org/v1"
