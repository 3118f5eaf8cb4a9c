"""Where requests to model endpoints may go (elicitation.destinations), and what is kept of a reply that is not
an API response (elicitation.client): a user who may edit endpoints cannot make the workers fetch the cloud's
metadata service or the platform's own pages and store the body where they can read it."""
from __future__ import annotations

import socket

import pytest
from django.urls import reverse

from elicitation import destinations
from elicitation.destinations import address_problem, url_problem
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.runs import RunStateError, create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("address", ["127.0.0.1", "::1", "169.254.169.254", "fe80::1", "10.1.2.3", "192.168.0.9",
                                     "172.16.0.1", "100.64.0.1", "0.0.0.0", "::", "::ffff:127.0.0.1", "224.0.0.1"])
def test_non_public_addresses_are_refused_unless_the_operator_allows_their_network(address, settings):
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = []
    assert "MODEL_ENDPOINT_ALLOWED_NETWORKS" in address_problem(address)
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["8.8.8.0/24"]
    assert address_problem(address)


@pytest.mark.parametrize("address, embedded", [
    ("64:ff9b::7f00:1", "127.0.0.1"), ("64:ff9b::a9fe:a9fe", "169.254.169.254"),  # NAT64
    ("64:ff9b:1::a00:1", "10.0.0.1"),  # NAT64, local-use prefix
    ("2002:7f00:1::", "127.0.0.1"), ("2002:a9fe:a9fe::1", "169.254.169.254"),  # 6to4
    ("::127.0.0.1", "127.0.0.1"), ("::169.254.169.254", "169.254.169.254"),  # IPv4-compatible
    ("::ffff:10.0.0.1", "10.0.0.1")])  # IPv4-mapped
def test_ipv6_forms_embedding_an_ipv4_address_are_judged_as_that_address(address, embedded, settings):
    """The fourth review's finding: NAT64, 6to4 and IPv4-compatible forms of loopback and the metadata service
    passed (Python calls several of them global)."""
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = []
    assert f"IPv6 form of {embedded}" in address_problem(address)
    assert url_problem(f"http://[{address}]:8000/v1")
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = [embedded]  # allowed as its embedded address would be
    assert address_problem(address) == ""
    assert address_problem("64:ff9b::808:808") == address_problem("2002:808:808::1") == ""  # 8.8.8.8: public


def test_an_allowed_network_allows_just_that_network(settings):
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1"]
    assert address_problem("127.0.0.1") == address_problem("::1") == address_problem("::ffff:127.0.0.2") == ""
    assert "link-local" in address_problem("169.254.169.254") and "private" in address_problem("10.0.0.1")
    assert address_problem("8.8.8.8") == address_problem("2001:4860:4860::8888") == ""


def test_the_resolved_address_is_checked_not_the_name(settings, monkeypatch):
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = []
    assert "localhost resolves to 127.0.0.1, a loopback address" in url_problem("http://localhost:8000/v1")
    assert "[::1]" not in url_problem("http://[::1]:8000/v1") and "::1 is a loopback" in url_problem(
        "http://[::1]:8000/v1")
    real = socket.getaddrinfo

    def rebinding(host, *args, **kwargs):  # a public-looking name whose DNS points at the metadata service
        return real("169.254.169.254" if host == "models.example.com" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    assert "models.example.com resolves to 169.254.169.254" in url_problem("https://models.example.com/v1")
    assert url_problem("ftp://8.8.8.8/v1").startswith("the base URL must start with http")
    assert "user name or password" in url_problem("https://u:p@8.8.8.8/v1")
    assert url_problem("https://8.8.8.8/v1") == ""


def test_admin_api_and_command_refuse_a_metadata_address(admin_client, settings):
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    response = admin_client.post(reverse("admin:elicitation_modelendpoint_add"), {
        "name": "meta", "base_url": "http://169.254.169.254/latest/v1", "model": "m", "api_style": "chat",
        "api_key_env": "", "max_concurrency": 4, "price_prompt_per_1k": 0, "price_completion_per_1k": 0,
        "timeout_seconds": 60, "max_retries": 5, "retry_backoff_seconds": 1, "retry_backoff_max_seconds": 30})
    assert response.status_code == 200 and "169.254.169.254 is a link-local address" in response.content.decode()
    from rest_framework.test import APIClient

    from django.contrib.auth import get_user_model

    api = APIClient()
    api.force_authenticate(get_user_model().objects.get(username="admin"))
    refused = api.post("/api/endpoints/", {"name": "meta", "base_url": "http://[::1]:8000/v1", "model": "m"},
                       format="json")
    assert refused.status_code == 400 and "loopback" in str(refused.json()["base_url"])
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="10.0.0.7 is a private address"):
        call_command("add_endpoint", "lan", "--base-url", "http://10.0.0.7:8000/v1", "--model", "m")
    assert not ModelEndpoint.objects.exists()


def _one_answer(imported_nv, endpoint) -> ModelResponse:
    run = create_run(imported_nv, endpoint, items=[imported_nv.main_items().first()])
    ElicitationRun.objects.filter(pk=run.pk).update(status=ElicitationRun.Status.RUNNING)
    from elicitation.runs import ensure_rows

    ensure_rows(run)
    run_sync(ElicitationRun.objects.get(pk=run.pk))
    return ModelResponse.objects.get(run=run)


def test_a_connection_to_a_refused_address_is_never_opened(stub, imported_nv, settings, monkeypatch):
    """A row saved before the rule (or a name that resolves elsewhere since): the run does not start, and the
    connection is checked again when it is opened, so no request reaches the server; not retried."""
    endpoint = make_endpoint(stub)
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = []
    with pytest.raises(RunStateError, match="127.0.0.1 is a loopback address"):
        start_run(create_run(imported_nv, endpoint, items=[imported_nv.main_items().first()]), queue=False)
    row = _one_answer(imported_nv, endpoint)
    assert stub.requests == []
    assert (row.status, row.attempts) == ("failed", 1) and "refused: 127.0.0.1 is a loopback address" in row.error

    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["::1"]  # the name is resolved when the connection is opened
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(base_url=stub.base_url.replace("127.0.0.1", "localhost"))
    monkeypatch.setattr(destinations, "resolve", lambda host, port: ["127.0.0.1"])
    row = _one_answer(imported_nv, ModelEndpoint.objects.get(pk=endpoint.pk))
    assert stub.requests == [] and "localhost resolves to 127.0.0.1, a loopback address" in row.error


def test_a_reply_that_is_not_an_api_response_is_an_error_with_its_status_never_an_answer(stub, imported_nv,
                                                                                           monkeypatch):
    """The platform's own 404 page, or a server echoing the request back: stored as an error naming the status
    and content type, and the body is kept nowhere."""
    monkeypatch.setenv("HEDGELAB_TEST_API_KEY", "sk-never-shown")
    endpoint = make_endpoint(stub, max_retries=1, api_key_env="HEDGELAB_TEST_API_KEY")
    page = b"<html><h1>Not Found</h1><p>DB_PASSWORD=hunter2</p></html>"
    stub.queue(Reply(status=404, body=page, content_type="text/html"))
    row = _one_answer(imported_nv, endpoint)
    assert (row.status, row.attempts) == ("failed", 1)  # a 404 is not retried
    assert row.error.startswith(f"HTTP 404: not an API response (text/html, {len(page)} bytes")
    assert "hunter2" not in str(row.detail) + row.error + row.raw_output

    echoed = b"Authorization: Bearer sk-never-shown"
    stub.queue(Reply.garbage(echoed, "text/plain"), Reply.garbage(echoed, "text/plain"))
    row = _one_answer(imported_nv, endpoint)
    assert row.status == "failed" and row.value is None and row.attempts == 2
    assert "HTTP 200: not an API response" in row.error
    assert "sk-never-shown" not in str(row.detail) + row.error + row.raw_output

    stub.queue(Reply(status=302, body=b"", content_type="text/html", headers={"Location": "http://10.0.0.1/"}))
    row = _one_answer(imported_nv, endpoint)
    assert row.error.startswith("HTTP 302: not an API response") and len(stub.requests) == 4  # not followed
