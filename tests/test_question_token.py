"""The server refuses an answer posted from a page that was not drawn for the question it names (issue 32
point 1): every question is at /s/<slug>/question/, so a browser may send one question's restored form with
another's; the page signs its position and item for the participant (surveys.page_tokens). A refused post
stores nothing and the current question is shown again, empty, with a message."""
from __future__ import annotations

import re

import pytest
from django.test import Client

from surveys.models import Response
from surveys.page_tokens import page_token, slot_token
from test_flow import PID, answer, current_slot, page, saved, start, study, url  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db

REFUSED = "That answer did not match your current question, so it was not saved."


def refused_and_shown_again(client: Client, study, response, slot) -> None:  # noqa: F811
    assert response.status_code == 302 and response["Location"] == url(study, "item")
    shown = page(client.get(response["Location"]))
    assert REFUSED in shown
    assert f'name="position" value="{slot.position}"' in shown and f'name="item" value="{slot.item_id}"' in shown
    assert " checked" not in shown  # nothing chosen on the question shown again


def test_the_page_carries_the_token_of_its_question(client, study):  # noqa: F811
    participant = start(client, study)
    slot = current_slot(participant)
    response = client.get(url(study, "item"))
    assert "no-store" in response["Cache-Control"]  # no back/forward cache or HTTP cache keeps a question page
    shown = page(response)
    assert re.search(rf'name="token" value="{slot_token(slot)}"', shown)
    assert '<form method="post"' in shown and 'autocomplete="off"' in shown
    assert saved(answer(client, study, slot, 50), slot)


def test_an_answer_without_the_page_token_is_refused(client, study):  # noqa: F811
    participant = start(client, study)
    slot = current_slot(participant)
    refused_and_shown_again(client, study, answer(client, study, slot, 50, token=""), slot)
    assert not Response.objects.exists()


def test_another_questions_page_cannot_answer_this_one(client, study):  # noqa: F811
    """Question 1's token with question 2's position and item (a form put together from two pages) is refused,
    and so is question 2's token of another participant."""
    participant = start(client, study)
    first = current_slot(participant)
    assert saved(answer(client, study, first, 40), first)
    second = current_slot(participant)
    mixed = answer(client, study, second, 90, token=slot_token(first))
    refused_and_shown_again(client, study, mixed, second)
    theirs = answer(client, study, second, 90, token=page_token(participant.pk + 1, second.position, second.item_id))
    refused_and_shown_again(client, study, theirs, second)
    assert list(Response.objects.values_list("assignment__position", "value")) == [(first.position, 40)]
    assert saved(answer(client, study, second, 60), second)  # the page of question 2 itself is answered


def test_question_1s_page_sent_again_stores_nothing_for_question_2(client, study):  # noqa: F811
    """The stale page of an answered question (Back to it, or its second tab) is refused as already answered."""
    participant = start(client, study)
    first = current_slot(participant)
    assert saved(answer(client, study, first, 40), first)
    second = current_slot(participant)
    again = answer(client, study, first, 55)
    assert again.status_code == 302 and again["Location"] == url(study, "item")
    assert "already" in page(client.get(again["Location"]))
    assert list(Response.objects.values_list("assignment__position", "value")) == [(first.position, 40)]
    assert not Response.objects.filter(assignment=second).exists()
