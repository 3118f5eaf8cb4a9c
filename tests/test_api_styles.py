"""The API styles (elicitation/api_styles/): one adapter per style, found by name, and a new style is one module.

The new style here ("user-text": the completions prompt's text sent as one user message of a chat request) is
a subclass registered by the test alone; nothing else in the platform learns of it, yet the worker, the stored
prompt, the pre-flight check, the run settings, the endpoint's choices and the prompt preview all serve it.
"""
from __future__ import annotations

import pytest
from django.urls import reverse

from elicitation import api_styles
from elicitation.api_styles import ApiStyleAdapter, adapter_for, styles
from elicitation.api_styles.chat import ChatStyle
from elicitation.models import ElicitationRun, ModelEndpoint, ModelResponse, StoredPrompt
from elicitation.prompts import build_prompt
from elicitation.runs import create_run, run_sync, start_run
from stub_openai import Reply, make_endpoint, stub  # noqa: F401 (stub is a fixture)

pytestmark = pytest.mark.django_db


class UserTextStyle(ChatStyle):
    """The prompt's text as the one user message of a chat request."""

    name = "user-text"
    label = "chat, the text as one user message"

    def content(self, prompt):
        return [{"role": "user", "content": prompt.text}]


@pytest.fixture
def user_text(monkeypatch):
    adapter = UserTextStyle()
    monkeypatch.setitem(api_styles._STYLES, adapter.name, adapter)  # registered for this test only
    return adapter


def test_the_built_in_styles_are_the_fields_choices():
    assert [s.name for s in styles()] == ["chat", "completions"]
    for model in (ModelEndpoint, StoredPrompt):
        assert list(model._meta.get_field("api_style").choices) == [("chat", "chat completions"),
                                                                    ("completions", "text completions")]
    assert (ModelEndpoint.ApiStyle.CHAT, ModelEndpoint.ApiStyle.COMPLETIONS) == ("chat", "completions")
    assert adapter_for("chat").path == "chat/completions" and adapter_for("completions").continues_text


def test_an_unknown_style_is_named(stub):
    endpoint = ModelEndpoint(name="x", base_url=stub.base_url, model="m", api_style="responses")
    with pytest.raises(ValueError, match=r"unknown API style 'responses' \(known: chat, completions\)"):
        adapter_for(endpoint)


def test_a_style_is_registered_once_and_its_name_fits_the_field():
    class Long(ChatStyle):
        name = "much-too-long-a-name"

    class Other(ApiStyleAdapter):
        name = "chat"

    with pytest.raises(ValueError, match="1 to 12 characters"):
        api_styles.register(Long())
    with pytest.raises(ValueError, match="already registered"):
        api_styles.register(Other())


def test_a_new_style_is_one_module(stub, imported_nv, user_text, admin_client):
    endpoint = make_endpoint(stub, api_style="user-text")
    endpoint.full_clean()  # the field's choices are the registry's: no migration for a new style
    assert ("user-text", user_text.label) in list(ModelEndpoint._meta.get_field("api_style").choices)
    stub.default = Reply.answer("70")
    item = imported_nv.main_items().filter(is_control=False).order_by("id").first()
    run = create_run(imported_nv, endpoint, items=[item], seed=4)
    start_run(run, queue=False)
    assert run_sync(run).status == ElicitationRun.Status.COMPLETED

    text = build_prompt(imported_nv, item, True).text
    assert [(r.path, r.body) for r in stub.requests] == [
        ("/v1/chat/completions", {"model": "stub-model", "messages": [{"role": "user", "content": text}],
                                  "temperature": 0.0, "max_tokens": 8, "seed": 4})]
    row = ModelResponse.objects.get(run=run)
    assert (row.status, row.value) == ("ok", 70)
    assert (row.prompt.api_style, row.prompt.content) == ("user-text", [{"role": "user", "content": text}])

    from elicitation import preflight

    assert preflight.request_url(endpoint) == f"{stub.base_url}/chat/completions"
    assert preflight.problem(endpoint) == ""
    assert stub.requests[-1].body["messages"] == [{"role": "user", "content": "Reply with OK."}]

    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError, match="is a user-text endpoint"):
        create_run(imported_nv, endpoint, mode="full_distribution")

    page = admin_client.get(reverse("admin:elicitation_item_prompt", args=[item.pk])).content.decode()
    assert 'id="prompt-user-text"' in page and "User-text endpoints" in page


def test_a_style_that_does_not_continue_a_text_refuses_the_text_modes():
    from elicitation.api_styles import Unsupported

    chat = adapter_for("chat")
    assert not chat.continues_text
    for call in (lambda: chat.next_token(None, "m", "t", 5, {}, True), lambda: chat.echo(None, "m", "t", {}),
                 lambda: chat.top_alternatives(None), lambda: chat.prompt_logprobs(None)):
        with pytest.raises(Unsupported, match="chat API style"):
            call()
