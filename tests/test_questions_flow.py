"""Several questions per item, the participant's side (issue 31 point 5): one page asks every question, each
answer is its own row (``Response.question``), stored all or nothing, never twice."""
from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from django.test import Client

from surveys import flow
from surveys.definition.schema import Definition
from surveys.flow import Outcome, Step
from surveys.models import Assignment, Item, Participant, Response, Study
from surveys.page_tokens import slot_token
from surveys.questions import keys_of
from tests.test_flow import start, url

RATING = {"shape": "scale", "min": 1, "max": 7, "labels": {"1": "Certainly not", "7": "Certainly"}}
ESTIMATE = {"shape": "scale", "min": 0, "max": 100, "widget": "slider"}
RANGE = {"shape": "interval"}


def questions_study(slug: str = "two-q", items: int = 3, **study_fields: Any) -> Study:
    """A live generic study asking three questions per item: a labelled 1–7 scale, a 0–100 slider (both
    required) and an optional interval."""
    definition = Definition.model_validate({
        "study": {"slug": slug, "title": f"Study {slug}", "kind": "generic"},
        "page": {"sentence": "{{ statement }}", "hints": ["Topic: {{ topic }}"]},
        "questions": [
            {"key": "rating", "question": "How likely is it that {{ outcome }}?", "answer": RATING},
            {"key": "estimate", "question": "In how many cases out of 100 would {{ outcome }}?", "answer": ESTIMATE},
            {"key": "range", "question": "Between which numbers?", "answer": RANGE, "required": False},
        ],
    }).model_dump(mode="json")
    study = Study.objects.create(
        slug=slug, title=f"Study {slug}", instrument="generic", definition=definition, status=Study.Status.LIVE,
        items_per_participant=items, controls_per_participant=0, draw_speaker_names=False,
        consent_text="You are invited.", instructions="Answer.", pledge_text="I will answer carefully.",
        **study_fields)
    for n in range(1, items + 1):
        Item.objects.create(study=study, key=f"s{n}", statement=f"Statement {n}.",
                            extra={"topic": f"topic {n}", "outcome": f"outcome {n} happens"})
    return study


def page(slot: Assignment, **answers: str) -> dict[str, Any]:
    return {"step": "item", "position": slot.position, "item": slot.item_id, "token": slot_token(slot),
            "client_time_ms": "900", **answers}


def slot_of(participant: Participant) -> Assignment:
    participant.refresh_from_db()
    progress = flow.current_step(participant)
    assert progress.step == Step.ITEM
    return progress.slot


@pytest.fixture
def study(db):
    return questions_study()


def test_one_page_asks_every_question_with_its_own_fields(client, study):
    participant = start(client, study)
    html = client.get(url(study, "item")).content.decode()
    assert keys_of(study) == ["rating", "estimate", "range"]
    assert "Statement 1." in html or "Statement" in html
    assert html.count("Topic: topic") == 1  # the item's hints once, above the questions
    slot = slot_of(participant)
    outcome = slot.item.extra["outcome"]
    assert f"How likely is it that {outcome}?" in html and f"In how many cases out of 100 would {outcome}?" in html
    for name in ('name="rating-value"', 'name="estimate-value"', 'name="range-lower"', 'name="range-upper"'):
        assert name in html
    assert "Certainly not" in html and 'data-question="range"' in html and "(optional)" in html


def test_a_page_stores_one_row_per_question_answered(client, study):
    participant = start(client, study)
    slot = slot_of(participant)
    reply = client.post(url(study, "item"), page(slot, **{"rating-value": "6", "estimate-value": "85",
                                                          "range-lower": "70", "range-upper": "90"}))
    assert reply.status_code == 200
    rows = {r.question: r for r in Response.objects.filter(assignment=slot)}
    assert set(rows) == {"rating", "estimate", "range"}
    assert (rows["rating"].value, rows["estimate"].value) == (6.0, 85.0)
    assert (rows["range"].lower, rows["range"].upper, rows["range"].raw) == (70.0, 90.0, "lower=70;upper=90")
    assert all(r.client_time_ms == 900 and r.item_id == slot.item_id for r in rows.values())
    nxt = flow.current_step(Participant.objects.get(pk=participant.pk))
    assert (nxt.number, nxt.total) == (2, 3)  # answered slots, not answer rows, count


def test_an_optional_question_left_empty_has_no_row(client, study):
    participant = start(client, study)
    slot = slot_of(participant)
    client.post(url(study, "item"), page(slot, **{"rating-value": "2", "estimate-value": "10"}))
    assert sorted(Response.objects.filter(assignment=slot).values_list("question", flat=True)) == ["estimate", "rating"]


def test_a_missing_or_bad_answer_asks_again_keeping_the_others_and_stores_nothing(client, study):
    participant = start(client, study)
    slot = slot_of(participant)
    reply = client.post(url(study, "item"), page(slot, **{"rating-value": "5", "range-lower": "9",
                                                          "range-upper": "3"}))
    html = reply.content.decode()
    assert reply.status_code == 200 and not Response.objects.filter(participant=participant).exists()
    assert "Please choose an answer before continuing." in html  # estimate, required, empty
    assert "The lower bound must not be greater than the upper bound." in html  # range, bad
    assert 'id="q-rating-5" value="5" checked' in html and html.count(" checked") == 1
    assert 'value="9"' in html and 'value="3"' in html  # the bounds as typed
    bad = client.post(url(study, "item"), page(slot, **{"rating-value": "9", "estimate-value": "50"}))
    assert "Please choose one of the answers on the scale." in bad.content.decode()
    assert not Response.objects.filter(participant=participant).exists()
    assert slot_of(participant).pk == slot.pk


def test_a_resubmitted_page_duplicates_nothing(client, study):
    participant = start(client, study)
    slot = slot_of(participant)
    answers = {"rating-value": "4", "estimate-value": "40"}
    client.post(url(study, "item"), page(slot, **answers))
    again = flow.submit_answer(participant, slot.position, slot.item_id, {**answers, "range-lower": "1",
                                                                          "range-upper": "2"})
    assert again.outcome == Outcome.ALREADY_ANSWERED
    assert Response.objects.filter(assignment=slot).count() == 2


def test_a_page_whose_later_answer_conflicts_rolls_back_whole(study):
    participant = Participant.objects.create(study=study, prolific_pid="P1", status=Participant.Status.STARTED)
    slot = Assignment.objects.create(participant=participant, item=study.main_items().first(), position=1)
    Response.objects.create(assignment=slot, participant=participant, item=slot.item, question="estimate", value=1)
    rows = [Response(assignment=slot, participant=participant, item=slot.item, question=key, value=3)
            for key in ("rating", "estimate")]
    with pytest.raises(flow._AlreadyAnswered), transaction.atomic():
        flow._insert_page(rows)
    assert list(Response.objects.filter(assignment=slot).values_list("question", flat=True)) == ["estimate"]


def test_the_database_refuses_a_second_answer_to_the_same_question(study):
    participant = Participant.objects.create(study=study, prolific_pid="P2", status=Participant.Status.STARTED)
    slot = Assignment.objects.create(participant=participant, item=study.main_items().first(), position=1)
    Response.objects.create(assignment=slot, participant=participant, item=slot.item, question="rating", value=3)
    Response.objects.create(assignment=slot, participant=participant, item=slot.item, question="estimate", value=30)
    with pytest.raises(IntegrityError), transaction.atomic():
        Response.objects.create(assignment=slot, participant=participant, item=slot.item, question="rating", value=4)
    assert Response.objects.filter(participant=participant).count() == 2


def test_a_saved_answers_question_cannot_be_changed(study):
    participant = Participant.objects.create(study=study, prolific_pid="P3", status=Participant.Status.STARTED)
    slot = Assignment.objects.create(participant=participant, item=study.main_items().first(), position=1)
    row = Response.objects.create(assignment=slot, participant=participant, item=slot.item, question="rating",
                                  value=3)
    with pytest.raises(IntegrityError, match="cannot be changed"), transaction.atomic():
        Response.objects.filter(pk=row.pk).update(question="estimate")


def test_every_page_answered_completes_the_participant(client, study):
    participant = start(client, study)
    for _ in range(3):
        slot = slot_of(participant)
        client.post(url(study, "item"), page(slot, **{"rating-value": "3", "estimate-value": "30"}))
    participant.refresh_from_db()
    assert participant.status == Participant.Status.COMPLETED
    assert Response.objects.filter(participant=participant).count() == 6


def test_the_raw_export_and_the_api_name_each_answers_question(client, study, admin_user):
    from surveys.raw_export import COLUMNS, columns_of, raw_rows

    participant = start(client, study)
    slot = slot_of(participant)
    client.post(url(study, "item"), page(slot, **{"rating-value": "6", "estimate-value": "85"}))
    assert columns_of(study) == (*COLUMNS, "question")
    rows = [dict(zip(columns_of(study), row)) for row in raw_rows(study)]
    assert [(r["question"], r["value"]) for r in rows] == [("rating", "6"), ("estimate", "85")]
    client.force_login(admin_user)
    listed = client.get(f"/api/responses/?study={study.slug}").json()
    listed = listed.get("results", listed)
    assert sorted((r["question"], r["value"]) for r in listed) == [("estimate", 85.0), ("rating", 6.0)]


def test_the_researchers_preview_asks_every_question(client, study, admin_user):
    client.force_login(admin_user)
    preview = url(study, "preview")
    client.get(preview)
    client.post(preview, {"step": "consent", "choice": "agree"})
    client.post(preview, {"step": "instructions"})
    client.post(preview, {"step": "pledge", "pledge": "on"})
    html = client.get(preview).content.decode()
    assert 'name="rating-value"' in html and 'name="estimate-value"' in html
    position = int(re.search(r'name="position" value="(\d+)"', html).group(1))
    item = int(re.search(r'name="item" value="(\d+)"', html).group(1))
    refused = client.post(preview, {"step": "item", "position": position, "item": item, "rating-value": "3"})
    assert "estimate: Please choose an answer before continuing." in refused.content.decode()
    for _ in range(3):
        html = client.get(preview).content.decode()
        if 'name="rating-value"' not in html:
            break
        position = int(re.search(r'name="position" value="(\d+)"', html).group(1))
        item = int(re.search(r'name="item" value="(\d+)"', html).group(1))
        client.post(preview, {"step": "item", "position": position, "item": item, "rating-value": "3",
                              "estimate-value": "30"})
    assert "rating = 3; estimate = 30" in client.get(preview).content.decode()
    assert not Response.objects.exists()
