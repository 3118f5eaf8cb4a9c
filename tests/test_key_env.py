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


@pytest.mark.parametrize("name", ["ADMIN_PASSWORD", "SECRET_KEY", "DATABASE_URL", "EXPORT_ID_SALT", "HOME",
                                  "lower_api_key", "OPENAI_API_KEY; rm"])
def test_variables_outside_the_allow_list_are_refused(name):
    assert key_variable_problem(name)
    endpoint = ModelEndpoint(name="e", base_url="http://127.0.0.1:9/v1", model="m", api_key_env=name)
    with pytest.raises(ValidationError) as exc:
        endpoint.full_clean()
    assert "may not be used as an API key" in str(exc.value) or "not an environment variable name" in str(exc.value)
    with pytest.raises(KeyVariableRefused):
        endpoint.api_key()


def test_allowed_by_default_and_by_setting(settings, monkeypatch):
    assert key_variable_problem("OPENAI_API_KEY") == "" and key_variable_problem("") == ""
    settings.MODEL_API_KEY_VARS = ["HEDGELAB_*", "VLLM_TOKEN"]
    assert key_variable_problem("VLLM_TOKEN") == "" and key_variable_problem("HEDGELAB_OPENAI") == ""
    assert "MODEL_API_KEY_VARS" in key_variable_problem("OPENAI_API_KEY")
    settings.MODEL_API_KEY_VARS = ["*"]  # even "everything" never includes the platform's own secrets
    assert key_variable_problem("ADMIN_PASSWORD") and key_variable_problem("SECRET_KEY")


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
