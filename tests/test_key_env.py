"""An endpoint's API key variable must be one the operator allows (elicitation.key_env): a staff user who
may edit endpoints cannot have the worker send ADMIN_PASSWORD, SECRET_KEY or DATABASE_URL to a server of
their choosing."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from elicitation.key_env import KeyVariableRefused, key_variable_problem
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse
from elicitation.runs import RunStateError, create_run, resume_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


OPENAI = "https://api.openai.com/v1"


@pytest.mark.parametrize("name", ["ADMIN_PASSWORD", "SECRET_KEY", "DATABASE_URL", "EXPORT_ID_SALT",
                                  "lower_api_key", "OPENAI_API_KEY; rm", "PROLIFIC_API_KEY", "PROLIFIC_API_TOKEN",
                                  "CACHE_URL", "LOGIN_MAX_FAILURES"])
def test_variables_outside_the_allow_list_are_refused(name, settings):
    settings.MODEL_API_KEY_VARS = ["*@api.openai.com"]  # even "every variable" never includes the platform's own
    assert key_variable_problem(name, OPENAI)
    endpoint = ModelEndpoint(name="e", base_url=OPENAI, model="m", api_key_env=name)
    with pytest.raises(ValidationError) as exc:
        endpoint.full_clean()
    assert "may not be used as an API key" in str(exc.value) or "not an environment variable name" in str(exc.value)
    with pytest.raises(KeyVariableRefused):
        endpoint.api_key()


def test_the_prolific_token_variable_is_never_a_key_whatever_its_name(settings):
    settings.MODEL_API_KEY_VARS = ["*_KEY@api.openai.com"]
    settings.PROLIFIC_TOKEN_ENV = "LAB_PANEL_KEY"
    assert "the platform reads it itself" in key_variable_problem("LAB_PANEL_KEY", OPENAI)
    assert key_variable_problem("LAB_MODEL_KEY", OPENAI) == ""


def test_each_variable_is_sent_only_to_the_hosts_it_is_bound_to(settings):
    settings.MODEL_API_KEY_VARS = []  # unset: the default, OPENAI_API_KEY@api.openai.com
    assert key_variable_problem("HOME", OPENAI)
    assert key_variable_problem("OPENAI_API_KEY", OPENAI) == "" and key_variable_problem("", OPENAI) == ""
    assert "may only be sent to api.openai.com" in key_variable_problem("OPENAI_API_KEY", "http://evil.example/v1")
    assert key_variable_problem("OPENAI_API_KEY", "https://api.openai.com:8443/v1")  # another port
    assert "no host is allowed" in key_variable_problem("VLLM_KEY", OPENAI)
    settings.MODEL_API_KEY_VARS = ["OPENAI_API_KEY@api.openai.com", "VLLM_KEY@gpu-box.lab:8000",
                                   "LAB_*_KEY@[::1]:*", "VLLM_KEY@GPU-2.lab:8000"]
    assert key_variable_problem("VLLM_KEY", "https://gpu-box.lab:8000/v1") == ""
    assert key_variable_problem("VLLM_KEY", "https://gpu-2.lab:8000/v1") == ""  # a name repeated: more hosts
    assert "gpu-box.lab:8000" in key_variable_problem("VLLM_KEY", "https://gpu-box.lab:8001/v1")
    assert key_variable_problem("VLLM_KEY", OPENAI) and key_variable_problem("OPENAI_API_KEY", "https://gpu-box.lab:8000")
    assert key_variable_problem("LAB_A_KEY", "http://[::1]:9000/v1") == ""
    assert key_variable_problem("LAB_A_KEY", "http://127.0.0.1:9000/v1")  # the host as written, not its address
    settings.MODEL_API_KEY_VARS = ["OPENAI_API_KEY"]  # an entry that binds no host allows nothing, and says so
    assert "binds no host" in key_variable_problem("OPENAI_API_KEY", OPENAI)


def test_a_key_travels_over_https_only_unless_the_host_is_in_an_allowed_network(settings):
    """The fourth review: with the default binding, ``http://api.openai.com/v1`` was accepted, so the key could
    travel in clear text."""
    settings.MODEL_API_KEY_VARS = []  # the default, OPENAI_API_KEY@api.openai.com
    assert key_variable_problem("OPENAI_API_KEY", OPENAI) == ""
    refused = key_variable_problem("OPENAI_API_KEY", "http://api.openai.com/v1")
    assert "over https only" in refused and "MODEL_ENDPOINT_ALLOWED_NETWORKS" in refused
    assert key_variable_problem("OPENAI_API_KEY", "HTTP://api.openai.com:443/v1")
    endpoint = ModelEndpoint(name="e", base_url="http://api.openai.com/v1", model="m", api_key_env="OPENAI_API_KEY")
    with pytest.raises(ValidationError, match="over https only"):
        endpoint.full_clean()
    with pytest.raises(KeyVariableRefused, match="over https only"):
        endpoint.api_key()
    settings.MODEL_API_KEY_VARS = ["VLLM_KEY@10.1.2.3:8000", "VLLM_KEY@localhost:8000"]
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["127.0.0.0/8", "::1"]
    assert "over https only" in key_variable_problem("VLLM_KEY", "http://10.1.2.3:8000/v1")  # not allowed
    assert key_variable_problem("VLLM_KEY", "http://localhost:8000/v1") == ""  # resolves to an allowed network
    settings.MODEL_ENDPOINT_ALLOWED_NETWORKS = ["10.1.2.0/24"]
    assert key_variable_problem("VLLM_KEY", "http://10.1.2.3:8000/v1") == ""  # the operator names the private host
    assert key_variable_problem("VLLM_KEY", "https://10.1.2.3:8000/v1") == ""


def test_a_key_bound_elsewhere_is_never_sent(stub, imported_nv, monkeypatch, settings):
    """The review's echo attack: an allowed key variable, a base URL of the user's choosing. The run does not
    start, and a worker that gets a task anyway fails the answers without sending the key."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-the-labs-key")
    settings.MODEL_API_KEY_VARS = ["OPENAI_API_KEY@api.openai.com"]
    endpoint = make_endpoint(stub)
    run = create_run(imported_nv, endpoint, items=[imported_nv.main_items().first()])
    start_run(run, queue=False)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="OPENAI_API_KEY")
    with pytest.raises(RunStateError, match="may only be sent to api.openai.com"):
        resume_run(ElicitationRun.objects.get(pk=run.pk), queue=False)
    run_sync(ElicitationRun.objects.get(pk=run.pk))
    assert stub.requests == []
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and "may only be sent to api.openai.com" in row.error
    assert "sk-the-labs-key" not in row.error + row.raw_output


def test_admin_form_refuses_the_variable_with_a_clear_message(admin_client):
    response = admin_client.post(reverse("admin:elicitation_modelendpoint_add"), {
        "name": "evil", "base_url": "http://attacker.example/v1", "model": "m", "api_style": "chat",
        "api_key_env": "ADMIN_PASSWORD", "max_concurrency": 4, "price_prompt_per_1k": 0,
        "price_completion_per_1k": 0, "timeout_seconds": 60, "max_retries": 5, "retry_backoff_seconds": 1,
        "retry_backoff_max_seconds": 30})
    assert response.status_code == 200 and not ModelEndpoint.objects.filter(name="evil").exists()
    assert "the variable ADMIN_PASSWORD may not be used as an API key" in response.content.decode()


def test_add_endpoint_command_refuses_it():
    with pytest.raises(CommandError, match="SECRET_KEY may not be used"):
        call_command("add_endpoint", "evil", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                     "--key-env", "SECRET_KEY")


def test_an_endpoint_stored_before_the_rule_never_sends_the_secret(stub, imported_nv, monkeypatch):
    """A row written before (or around) validation: the run refuses to start, and a worker that gets its
    task anyway fails the answers with the reason instead of sending the variable."""
    monkeypatch.setenv("ADMIN_PASSWORD", "the-admin-password")
    endpoint = make_endpoint(stub)
    item = imported_nv.main_items().first()
    run = create_run(imported_nv, endpoint, items=[item])
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="ADMIN_PASSWORD")
    run = ElicitationRun.objects.get(pk=run.pk)
    with pytest.raises(RunStateError, match="ADMIN_PASSWORD may not be used"):
        start_run(run, queue=False)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="")  # start it, then switch the variable
    start_run(ElicitationRun.objects.get(pk=run.pk), queue=False)
    ModelEndpoint.objects.filter(pk=endpoint.pk).update(api_key_env="ADMIN_PASSWORD")
    stub.default = Reply.answer("70")
    run_sync(ElicitationRun.objects.get(pk=run.pk))
    assert stub.requests == []
    row = ModelResponse.objects.get(run=run)
    assert row.status == "failed" and "ADMIN_PASSWORD may not be used" in row.error
    with pytest.raises(RunStateError, match="ADMIN_PASSWORD"):
        resume_run(ElicitationRun.objects.get(pk=run.pk), queue=False)
